package realapp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric/noop"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// appHandler is how the services' handlers and middleware are written: they return their
// failure instead of writing it, so every layer on the way out sees it and marks its span, the
// way an exception propagates through the middleware of a web framework.
type appHandler func(w http.ResponseWriter, r *http.Request) error

// statusError is a failure that maps to an HTTP status.
type statusError interface {
	error
	HTTPStatus() int
}

// OrderNotFoundError is the 404 of GET /orders/{id}.
type OrderNotFoundError struct{ OrderID int64 }

func (e *OrderNotFoundError) Error() string   { return fmt.Sprintf("order %d not found", e.OrderID) }
func (e *OrderNotFoundError) HTTPStatus() int { return http.StatusNotFound }

// PaymentDeclinedError is the card processor's refusal, answered 402 by both services.
type PaymentDeclinedError struct {
	OrderID int64
	Reason  string
}

func (e *PaymentDeclinedError) Error() string {
	return fmt.Sprintf("payment declined for order %d: %s", e.OrderID, e.Reason)
}
func (e *PaymentDeclinedError) HTTPStatus() int { return http.StatusPaymentRequired }

// PanicError is a recovered panic, answered 500.
type PanicError struct {
	Value any
	// recorded is set once a span recorded it as an exception, so the spans above it only
	// take the status.
	recorded bool
}

func (e *PanicError) Error() string   { return fmt.Sprint(e.Value) }
func (e *PanicError) HTTPStatus() int { return http.StatusInternalServerError }

func statusOf(err error) int {
	var se statusError
	if errors.As(err, &se) {
		return se.HTTPStatus()
	}
	return http.StatusInternalServerError
}

// fail records err on the span in ctx as an exception with its stack trace, where it was
// raised, and sets the span's status; it returns err for the handler to return.
func fail(ctx context.Context, err error) error {
	span := trace.SpanFromContext(ctx)
	span.RecordError(err, trace.WithStackTrace(true))
	span.SetStatus(codes.Error, err.Error())
	return err
}

// chain is the request's path of nested spans, in order, as each layer opened its span: the
// workload's knowledge of which span led to which, for the expected critical path.
type chain struct {
	mu  sync.Mutex
	ids []string
}

type chainKey struct{}

func (c *chain) add(id trace.SpanID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ids = append(c.ids, id.String())
}

func (c *chain) list() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.ids...)
}

func chainOf(ctx context.Context) *chain {
	c, _ := ctx.Value(chainKey{}).(*chain)
	return c
}

// traced runs next inside a span of its own. A failure coming back marks the span Error with
// the failure's message; a panic passing through does the same and goes on up. The innermost
// span a panic passes records it as an exception with the stack of the panicking goroutine.
func traced(tr trace.Tracer, name string, next appHandler) appHandler {
	return func(w http.ResponseWriter, r *http.Request) (err error) {
		ctx, span := tr.Start(r.Context(), name)
		if c := chainOf(ctx); c != nil {
			c.add(span.SpanContext().SpanID())
		}
		defer func() {
			if v := recover(); v != nil {
				pe, ok := v.(*PanicError)
				if !ok {
					pe = &PanicError{Value: v}
				}
				if !pe.recorded {
					span.RecordError(pe, trace.WithStackTrace(true))
					pe.recorded = true
				}
				span.SetStatus(codes.Error, pe.Error())
				span.End()
				panic(pe)
			}
			if err != nil {
				span.SetStatus(codes.Error, err.Error())
			}
			span.End()
		}()
		return next(w, r.WithContext(ctx))
	}
}

// routes is a ServeMux whose handlers are appHandlers; serve runs the matching one and
// returns its failure.
type routes struct{ mux *http.ServeMux }

type routeResultKey struct{}

func newRoutes() *routes { return &routes{mux: http.NewServeMux()} }

func (rt *routes) handle(pattern string, h appHandler) {
	rt.mux.Handle(pattern, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if res, ok := r.Context().Value(routeResultKey{}).(*error); ok {
			*res = h(w, r)
		}
	}))
}

func (rt *routes) serve(w http.ResponseWriter, r *http.Request) error {
	var err error
	rt.mux.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), routeResultKey{}, &err)))
	return err
}

// spanName names a server span after the route pattern it matches ("GET /orders/{id}"), the
// low-cardinality name the HTTP semantic conventions ask for.
func (rt *routes) spanName(_ string, r *http.Request) string {
	if _, pattern := rt.mux.Handler(r); pattern != "" {
		return pattern
	}
	return r.Method
}

// served is what one request's server side knew: set by the layers of serveApp.
type served struct {
	traceID      string
	serverSpan   trace.SpanID
	clientParent trace.SpanID
	chain        []string
	inner, outer time.Duration
	// began is when the outer timer started: the server span started at or after it.
	began time.Time
	err   error
}

type servedKey struct{}

// serveApp is a service's HTTP stack: a timer outside otelhttp, otelhttp's server handler
// (the SERVER span), and inside it a timer and the adapter that turns a returned failure into
// a response, an Error status on the server span and the X-Trace-Id header the driver reads.
// The two timers bracket the server span: the inner one starts after the span started and
// stops before it ends, the outer one the other way round, so each span's duration lies
// between the two measurements. done receives what the request's server side knew.
func serveApp(p *process, rt *routes, h appHandler, done func(r *http.Request, s *served)) http.Handler {
	adapter := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		s, _ := r.Context().Value(servedKey{}).(*served)
		span := trace.SpanFromContext(r.Context())
		c := &chain{}
		c.add(span.SpanContext().SpanID())
		s.traceID, s.serverSpan = span.SpanContext().TraceID().String(), span.SpanContext().SpanID()
		if ro, ok := span.(sdktrace.ReadOnlySpan); ok && ro.Parent().IsValid() {
			s.clientParent = ro.Parent().SpanID()
		}
		w.Header().Set("X-Trace-Id", s.traceID)
		err := h(w, r.WithContext(context.WithValue(r.Context(), chainKey{}, c)))
		if err != nil {
			span.SetStatus(codes.Error, err.Error())
			http.Error(w, http.StatusText(statusOf(err)), statusOf(err))
		}
		s.chain, s.err = c.list(), err
		s.inner = time.Since(start)
	})
	otel := otelhttp.NewHandler(adapter, p.name,
		otelhttp.WithTracerProvider(p.tp), otelhttp.WithMeterProvider(noop.NewMeterProvider()),
		otelhttp.WithPropagators(propagator), otelhttp.WithSpanNameFormatter(rt.spanName))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		s := &served{began: start}
		otel.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), servedKey{}, s)))
		s.outer = time.Since(start)
		done(r, s)
	})
}

// listener is one service's HTTP server on a free loopback port.
type listener struct {
	url  string
	srv  *http.Server
	done chan error
}

func listen(h http.Handler) (*listener, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen on loopback: %w", err)
	}
	l := &listener{url: "http://" + ln.Addr().String(), srv: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}, done: make(chan error, 1)}
	go func() {
		err := l.srv.Serve(ln)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		l.done <- err
	}()
	return l, nil
}

func (l *listener) close(ctx context.Context) error {
	return errors.Join(l.srv.Shutdown(ctx), <-l.done)
}

// clientFor is an HTTP client whose requests carry the trace context and get a CLIENT span of
// p's, through otelhttp's transport.
func clientFor(p *process) *http.Client {
	return &http.Client{Timeout: 30 * time.Second, Transport: otelhttp.NewTransport(http.DefaultTransport.(*http.Transport).Clone(),
		otelhttp.WithTracerProvider(p.tp), otelhttp.WithMeterProvider(noop.NewMeterProvider()), otelhttp.WithPropagators(propagator))}
}
