package goapp

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/opentracing/opentracing-go"
	"github.com/opentracing/opentracing-go/ext"
	otbridge "go.opentelemetry.io/otel/bridge/opentracing"
	"go.opentelemetry.io/otel/propagation"
)

// Legacy's statements besides ZipStatement and SlowStatement.
const archiveStatement = "SELECT zone FROM zips_archive WHERE zip = ?"

// addressInvalidPhrase is the text of legacy's validation failure: the real reason for the
// 500s it causes, recorded only in its span event.
const addressInvalidPhrase = "address validation failed"

// legacy is an address validator written against OpenTracing, reported through the
// OpenTelemetry bridge. Its data-access layer opens its own "SQL SELECT" spans (sql.query,
// peer.service; no db.* attribute) around an uninstrumented driver on one connection, and it
// logs through span events.
type legacy struct {
	p      *process
	tracer opentracing.Tracer
	db     *sql.DB
	mu     sync.Mutex // the one connection
	l      *ledger
}

func newLegacy(p *process, dsn string, l *ledger) (*legacy, error) {
	bt, _ := otbridge.NewTracerPair(p.tp.Tracer("shop/legacy"))
	bt.SetTextMapPropagator(propagator)
	bt.SetWarningHandler(func(string) {})
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	return &legacy{p: p, tracer: bt, db: db, l: l}, nil
}

func (lg *legacy) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /validate", lg.validate)
	return mux
}

func (lg *legacy) validate(w http.ResponseWriter, r *http.Request) {
	// The ledger keys by trace; the tracing itself is OpenTracing's.
	ctx := propagator.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
	opts := []opentracing.StartSpanOption{opentracing.Tag{Key: string(ext.Component), Value: "legacy-http"}}
	if wire, err := lg.tracer.Extract(opentracing.HTTPHeaders, opentracing.HTTPHeadersCarrier(r.Header)); err == nil {
		opts = append(opts, ext.RPCServerOption(wire))
	} else {
		opts = append(opts, ext.SpanKindRPCServer)
	}
	span := lg.tracer.StartSpan("POST /validate", opts...)
	defer span.Finish()
	ext.HTTPMethod.Set(span, r.Method)
	ext.HTTPUrl.Set(span, r.URL.Path)

	var in struct {
		Zip    string `json:"zip"`
		Verify bool   `json:"verify"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		ext.HTTPStatusCode.Set(span, http.StatusBadRequest)
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "bad request"})
		return
	}
	zone, err := lg.lookup(ctx, span, ZipStatement, in.Zip)
	if errors.Is(err, sql.ErrNoRows) {
		span.LogKV("event", "retry", "message", "zip not in the current table, retrying the lookup in the archive")
		lg.l.notice(false)
		zone, err = lg.lookup(ctx, span, archiveStatement, in.Zip)
	}
	if errors.Is(err, sql.ErrNoRows) {
		// The validator's own verdict; the caller is only told it failed.
		lg.l.cause(ctx, CauseAddressInvalid)
		ext.Error.Set(span, true)
		span.LogKV("event", "error", "message", addressInvalidPhrase+": zip code is not deliverable")
		ext.HTTPStatusCode.Set(span, http.StatusInternalServerError)
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": "internal error"})
		return
	}
	if err == nil && in.Verify {
		_, err = lg.lookup(ctx, span, SlowStatement)
	}
	if err != nil {
		ext.Error.Set(span, true)
		span.LogKV("event", "error", "message", err.Error())
		ext.HTTPStatusCode.Set(span, http.StatusInternalServerError)
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": "internal error"})
		return
	}
	ext.HTTPStatusCode.Set(span, http.StatusOK)
	writeJSON(w, http.StatusOK, map[string]string{"zone": zone})
}

// lookup runs one single-value query on the legacy connection in a "SQL SELECT" span of its
// own, logging on the request's span when it had to wait for the connection.
func (lg *legacy) lookup(ctx context.Context, parent opentracing.Span, q string, args ...any) (string, error) {
	start := time.Now()
	lg.mu.Lock()
	defer lg.mu.Unlock()
	if waited := time.Since(start); waited > 5*time.Millisecond {
		parent.LogKV("event", "lock wait", "message", fmt.Sprintf("waited %d ms for the database connection", waited.Milliseconds()))
		lg.l.notice(true)
	}
	span := lg.tracer.StartSpan("SQL SELECT", opentracing.ChildOf(parent.Context()), ext.SpanKindRPCClient,
		opentracing.Tag{Key: "sql.query", Value: q}, opentracing.Tag{Key: string(ext.PeerService), Value: SystemMySQL})
	defer span.Finish()
	t0 := time.Now()
	var v sql.NullString
	err := lg.db.QueryRowContext(context.WithoutCancel(ctx), q, args...).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		lg.l.statement(ServiceLegacy, SystemMySQL, q, time.Since(t0), nil)
		return "", err
	}
	lg.l.statement(ServiceLegacy, SystemMySQL, q, time.Since(t0), err)
	if err != nil {
		ext.Error.Set(span, true)
		span.LogKV("event", "error", "message", err.Error())
	}
	return v.String, err
}
