package goapp

import (
	"context"
	"database/sql"
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"github.com/XSAM/otelsql"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric/noop"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"
	"go.opentelemetry.io/otel/trace"
)

// The inventory's statements (LockedStatement and SlowStatement are in truth.go).
const reserveStatement = "INSERT INTO reservations (order_id, sku, qty) VALUES (?, ?, ?)"

// inventory reserves stock. Its database access is serialized by one mutex (the way a
// service guards a table it updates in place), so its requests queue on the lock while the
// statements themselves stay fast — except the stock audit, which is truly slow.
type inventory struct {
	p  *process
	db *sql.DB
	mu sync.Mutex
	l  *ledger
}

func newInventory(p *process, dsn string, l *ledger) (*inventory, error) {
	db, err := otelsql.Open("mysql", dsn,
		otelsql.WithTracerProvider(p.tp), otelsql.WithMeterProvider(noop.NewMeterProvider()),
		otelsql.WithAttributes(semconv.DBSystemMySQL),
		otelsql.WithSpanOptions(otelsql.SpanOptions{DisableErrSkip: true}))
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(4)
	return &inventory{p: p, db: db, l: l}, nil
}

func (inv *inventory) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /reserve", inv.reserve)
	return otelhttp.NewHandler(mux, inv.p.name,
		otelhttp.WithTracerProvider(inv.p.tp), otelhttp.WithMeterProvider(noop.NewMeterProvider()),
		otelhttp.WithPropagators(propagator),
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string { return r.Method + " " + r.URL.Path }))
}

func (inv *inventory) reserve(w http.ResponseWriter, r *http.Request) {
	ctx, span := inv.p.tracer.Start(r.Context(), "inventory.reserve")
	defer span.End()
	var in struct {
		Order int64  `json:"order"`
		SKU   string `json:"sku"`
		Qty   int    `json:"qty"`
		Audit bool   `json:"audit"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
		return
	}
	start := time.Now()
	inv.mu.Lock()
	defer inv.mu.Unlock()
	if waited := time.Since(start); waited > 5*time.Millisecond {
		inv.p.log.InfoContext(ctx, "waited for the stock lock", "waitedMs", waited.Milliseconds())
	}
	if in.Audit {
		var slept int
		if err := inv.query(ctx, SlowStatement, &slept); err != nil {
			inv.fail(ctx, span, w, err)
			return
		}
	}
	if err := inv.exec(ctx, LockedStatement, nil, in.Qty, in.SKU); err != nil {
		inv.fail(ctx, span, w, err)
		return
	}
	var id int64
	if err := inv.exec(ctx, reserveStatement, &id, in.Order, in.SKU, in.Qty); err != nil {
		inv.l.cause(ctx, CauseQtyLimit)
		inv.fail(ctx, span, w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]int64{"reservation": id})
}

func (inv *inventory) fail(ctx context.Context, span trace.Span, w http.ResponseWriter, err error) {
	span.RecordError(err)
	span.SetStatus(codes.Error, err.Error())
	inv.p.log.ErrorContext(ctx, "reserve failed", "err", err.Error())
	writeJSON(w, http.StatusInternalServerError, map[string]string{"error": "reserve failed"})
}

func (inv *inventory) query(ctx context.Context, q string, dest any, args ...any) error {
	start := time.Now()
	err := inv.db.QueryRowContext(ctx, q, args...).Scan(dest)
	inv.l.statement(ServiceInventory, SystemMySQL, q, time.Since(start), err)
	return err
}

func (inv *inventory) exec(ctx context.Context, q string, lastID *int64, args ...any) error {
	start := time.Now()
	res, err := inv.db.ExecContext(ctx, q, args...)
	inv.l.statement(ServiceInventory, SystemMySQL, q, time.Since(start), err)
	if err == nil && lastID != nil {
		*lastID, err = res.LastInsertId()
	}
	return err
}
