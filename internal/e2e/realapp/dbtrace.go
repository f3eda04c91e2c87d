package realapp

import (
	"context"
	"time"

	"github.com/exaring/otelpgx"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"
)

// dbTracer is otelpgx's tracer with a ledger around it: it lets otelpgx create every span,
// and writes down which spans it created — each query with its statement, span id and
// duration, and each connect and pool-acquire span. That is the workload's own record of
// what its database did, against which runlens's database answer is checked.
type dbTracer struct {
	inner   *otelpgx.Tracer
	service string
	ledger  *ledger
}

var (
	_ pgx.QueryTracer       = (*dbTracer)(nil)
	_ pgx.ConnectTracer     = (*dbTracer)(nil)
	_ pgx.PrepareTracer     = (*dbTracer)(nil)
	_ pgxpool.AcquireTracer = (*dbTracer)(nil)
)

func newDBTracer(p *process, l *ledger) *dbTracer {
	return &dbTracer{
		inner:   otelpgx.NewTracer(otelpgx.WithTracerProvider(p.tp), otelpgx.WithMeterProvider(noop.NewMeterProvider())),
		service: p.name, ledger: l,
	}
}

type queryKey struct{}

// startedQuery is a query whose span otelpgx opened.
type startedQuery struct {
	sql    string
	span   trace.SpanContext
	parent trace.SpanID
	start  time.Time
}

// opened reports whether inner started a span of its own in ctx (it starts none outside a
// recording span, e.g. while seeding or for the pool's background connections).
func opened(before, after context.Context) (trace.Span, bool) {
	sp := trace.SpanFromContext(after)
	if !sp.IsRecording() || sp.SpanContext().SpanID() == trace.SpanFromContext(before).SpanContext().SpanID() {
		return nil, false
	}
	return sp, true
}

// TraceQueryStart and TraceQueryEnd time each query from before otelpgx opens its span to
// after it closes it, so the measured duration brackets the span's from outside.
func (t *dbTracer) TraceQueryStart(ctx context.Context, conn *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	start := time.Now()
	out := t.inner.TraceQueryStart(ctx, conn, data)
	sp, ok := opened(ctx, out)
	if !ok {
		return out
	}
	return context.WithValue(out, queryKey{}, &startedQuery{
		sql: data.SQL, span: sp.SpanContext(), parent: trace.SpanFromContext(ctx).SpanContext().SpanID(),
		start: start,
	})
}

func (t *dbTracer) TraceQueryEnd(ctx context.Context, conn *pgx.Conn, data pgx.TraceQueryEndData) {
	q, _ := ctx.Value(queryKey{}).(*startedQuery)
	t.inner.TraceQueryEnd(ctx, conn, data)
	if q == nil {
		return
	}
	t.ledger.addQuery(Query{
		Service: t.service, SQL: q.sql, TraceID: q.span.TraceID().String(), SpanID: q.span.SpanID().String(),
		ParentSpanID: q.parent.String(), Duration: time.Since(q.start), Failed: data.Err != nil,
	})
}

func (t *dbTracer) TraceConnectStart(ctx context.Context, data pgx.TraceConnectStartData) context.Context {
	out := t.inner.TraceConnectStart(ctx, data)
	if _, ok := opened(ctx, out); ok {
		t.ledger.addPoolSpan("connect")
	}
	return out
}

func (t *dbTracer) TraceConnectEnd(ctx context.Context, data pgx.TraceConnectEndData) {
	t.inner.TraceConnectEnd(ctx, data)
}

func (t *dbTracer) TraceAcquireStart(ctx context.Context, pool *pgxpool.Pool, data pgxpool.TraceAcquireStartData) context.Context {
	out := t.inner.TraceAcquireStart(ctx, pool, data)
	if _, ok := opened(ctx, out); ok {
		t.ledger.addPoolSpan("pool.acquire")
	}
	return out
}

func (t *dbTracer) TraceAcquireEnd(ctx context.Context, pool *pgxpool.Pool, data pgxpool.TraceAcquireEndData) {
	t.inner.TraceAcquireEnd(ctx, pool, data)
}

// The services run every statement in pgx's exec mode, which prepares nothing; a prepare span
// (it carries the statement text too) would make the count of operations a matter of
// definition, so the ledger counts them and the workload refuses to vouch for a run that had any.
func (t *dbTracer) TracePrepareStart(ctx context.Context, conn *pgx.Conn, data pgx.TracePrepareStartData) context.Context {
	out := t.inner.TracePrepareStart(ctx, conn, data)
	if _, ok := opened(ctx, out); ok {
		t.ledger.addPrepare()
	}
	return out
}

func (t *dbTracer) TracePrepareEnd(ctx context.Context, conn *pgx.Conn, data pgx.TracePrepareEndData) {
	t.inner.TracePrepareEnd(ctx, conn, data)
}

// openPool connects a service's pool to the shop database, traced by the service's provider.
func openPool(ctx context.Context, dbURL string, p *process, l *ledger) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(dbURL)
	if err != nil {
		return nil, err
	}
	cfg.MaxConns = 4
	cfg.MinConns = 0
	cfg.ConnConfig.Tracer = newDBTracer(p, l)
	// Exec mode: one round trip per statement, no prepared statements (see TracePrepareStart).
	cfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeExec
	return pgxpool.NewWithConfig(ctx, cfg)
}
