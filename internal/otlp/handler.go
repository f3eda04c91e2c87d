// Package otlp is runlens's OTLP receiver, over HTTP and over gRPC: it accepts traces and logs
// from an application's OpenTelemetry exporter, decodes them with the collector's pdata (which
// reads OTLP/JSON's hex ids correctly, unlike protojson), hands them to a Sink, and acknowledges
// a batch only once the Sink has made it durable. Both protocols give the same guarantees:
// loopback listeners, the same Host rules, the same size limits, partial success for rejected
// records, and "retry later" (with a delay) when the store cannot keep up.
package otlp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Defaults for Options fields left zero.
const (
	// DefaultMaxBodyBytes is the largest request body accepted as sent (16 MiB, as the
	// Collector's OTLP receiver defaults to a similar bound).
	DefaultMaxBodyBytes int64 = 16 << 20
	// DefaultMaxDecompressedBytes bounds a gzip body after inflation.
	DefaultMaxDecompressedBytes int64 = 64 << 20
	// DefaultMaxConcurrent bounds the requests decoded at once, and so the memory a burst can
	// take: a decoded batch is a few times its wire size.
	DefaultMaxConcurrent = 8
	// DefaultBodyTimeout is how long a request body may stall: see Options.BodyTimeout.
	DefaultBodyTimeout = 10 * time.Second
)

// Paths served, as fixed by the OTLP/HTTP specification.
const (
	TracesPath  = "/v1/traces"
	LogsPath    = "/v1/logs"
	MetricsPath = "/v1/metrics"
)

// Options bounds the receiver. Zero values take the defaults above.
type Options struct {
	// MaxBodyBytes is the largest body accepted as sent; larger is 413.
	MaxBodyBytes int64
	// MaxDecompressedBytes is the largest gzip body after inflation; larger is 413. Inflation
	// is also limited to 100 times the compressed size (at least MaxBodyBytes), so a small
	// gzip bomb is refused early.
	MaxDecompressedBytes int64
	// MaxConcurrent bounds the requests decoded and stored at once per protocol. An HTTP
	// request takes its slot only once its whole body has arrived, so senders that stall
	// mid-body cannot keep the others out; the bodies read at once are bounded apart (see
	// bodyReadsPerSlot). gRPC calls beyond it are answered UNAVAILABLE with a retry delay,
	// since a gRPC server reads a call's message before any handler runs.
	MaxConcurrent int
	// BodyTimeout bounds how long an HTTP request body may stall (default DefaultBodyTimeout):
	// the body must have arrived within BodyTimeout plus one second per bodyMinRate bytes
	// received, and within maxBodyTime in all. A stalled sender is answered 408 after
	// BodyTimeout; a large batch keeps going as long as it moves.
	BodyTimeout time.Duration
	// Logger receives refused requests (debug) and sink failures (warn); nil discards.
	Logger *slog.Logger
	// AllowedHosts are host names accepted in Host and Origin besides the loopback ones
	// (127.0.0.0/8, ::1, localhost), compared without case; see guard.
	AllowedHosts []string
	// StoreID, when set, is served at IdentityPath (see StoreID), so another runlens process
	// finding the port taken can tell whether this receiver writes its store.
	StoreID string
	// Stats counts the metric data points dropped; share one between the HTTP and gRPC
	// receivers of a process. Nil gives the receiver counters of its own.
	Stats *Stats
	// HandshakeTimeout bounds how long a new gRPC connection may take to send its HTTP/2
	// preface (default DefaultHandshakeTimeout); HTTP bounds its header read likewise.
	HandshakeTimeout time.Duration
}

// Sink stores decoded batches. It returns how many records it accepted and rejected, and
// must return nil only once the accepted records are durable: the receiver's 200 promises it.
// On error nothing of the batch may have been stored, so the client can safely retry. An error
// with a RetryAfter() time.Duration method (the store's ErrBusy) says the sink is saturated:
// the receiver answers 429 with Retry-After (gRPC: UNAVAILABLE with RetryInfo).
type Sink interface {
	IngestTraces(ctx context.Context, td ptrace.Traces) (accepted, rejected int, err error)
	IngestLogs(ctx context.Context, ld plog.Logs) (accepted, rejected int, err error)
}

// bodyReadsPerSlot: an HTTP receiver reads up to this many bodies per decode slot at once.
//
// Memory stays bounded whatever the senders do. The listener holds DefaultMaxConnections
// connections (the rest wait in the kernel's queue); of their requests, at most
// bodyReadsPerSlot × MaxConcurrent (32 by default) hold a body, read or being read, each of at
// most MaxBodyBytes as sent; the others wait before reading anything, at the cost of a
// goroutine. Of those holding a body, at most MaxConcurrent inflate and decode it (up to
// MaxDecompressedBytes each). So ten thousand senders cost no more than thirty-two: 512 MiB at
// the very worst with the defaults, and only for as long as BodyTimeout and bodyMinRate let a
// body take. Stalled senders must outnumber the reads to delay anyone, and then only until
// their bodies are overdue.
const bodyReadsPerSlot = 4

// receiver serves the three OTLP/HTTP paths.
type receiver struct {
	sink Sink
	opts Options
	log  *slog.Logger
	// reads bounds the requests holding a body in memory (see bodyReadsPerSlot); sem bounds
	// those of them being decoded and stored.
	reads chan struct{}
	sem   chan struct{}
}

// withDefaults fills the zero fields of o.
func (o Options) withDefaults() Options {
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.MaxDecompressedBytes <= 0 {
		o.MaxDecompressedBytes = DefaultMaxDecompressedBytes
	}
	if o.MaxConcurrent <= 0 {
		o.MaxConcurrent = DefaultMaxConcurrent
	}
	if o.HandshakeTimeout <= 0 {
		o.HandshakeTimeout = DefaultHandshakeTimeout
	}
	if o.BodyTimeout <= 0 {
		o.BodyTimeout = DefaultBodyTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Stats == nil {
		o.Stats = &Stats{}
	}
	return o
}

// NewHandler returns the handler for POST /v1/traces, /v1/logs and /v1/metrics. Metrics are
// decoded, counted and dropped, and the answer says so (see Stats). Every request first passes
// the guard: a loopback (or configured) Host and no foreign Origin.
func NewHandler(sink Sink, o Options) http.Handler {
	return newReceiver(sink, o).handler()
}

func newReceiver(sink Sink, o Options) *receiver {
	o = o.withDefaults()
	return &receiver{sink: sink, opts: o, log: o.Logger,
		reads: make(chan struct{}, bodyReadsPerSlot*o.MaxConcurrent), sem: make(chan struct{}, o.MaxConcurrent)}
}

// handler serves the receiver's paths behind the guard.
func (rc *receiver) handler() http.Handler {
	o := rc.opts
	mux := http.NewServeMux()
	mux.Handle(TracesPath, rc.serve(signalTraces))
	mux.Handle(LogsPath, rc.serve(signalLogs))
	mux.Handle(MetricsPath, rc.serve(signalMetrics))
	if o.StoreID != "" {
		mux.Handle(IdentityPath, identityHandler(o.StoreID, o.Stats))
	}
	return newGuard(mux, o.AllowedHosts, o.Logger.Debug)
}

// signalKind is one of the OTLP signals.
type signalKind int

const (
	signalTraces signalKind = iota
	signalLogs
	signalMetrics
)

func (rc *receiver) serve(sig signalKind) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			writePlain(w, http.StatusMethodNotAllowed, "only POST is supported")
			return
		}
		enc, ok := encodingOf(r.Header.Get("Content-Type"))
		if !ok {
			writePlain(w, http.StatusUnsupportedMediaType,
				"unsupported content type: use application/x-protobuf or application/json")
			return
		}
		gzipped, err := contentEncoding(r)
		if err != nil {
			rc.refuse(w, enc, err)
			return
		}
		if !acquire(r.Context(), rc.reads) {
			return
		}
		defer func() { <-rc.reads }()
		raw, err := readBody(w, r, rc.opts)
		if err != nil {
			rc.refuse(w, enc, err)
			return
		}
		// Only a complete body takes a decode slot.
		if !acquire(r.Context(), rc.sem) {
			return
		}
		defer func() { <-rc.sem }()
		body, err := inflate(raw, gzipped, rc.opts)
		if err != nil {
			rc.refuse(w, enc, err)
			return
		}
		switch sig {
		case signalTraces:
			rc.traces(w, r, enc, body)
		case signalLogs:
			rc.logs(w, r, enc, body)
		default:
			rc.metrics(w, enc, body)
		}
	})
}

// acquire takes a slot of sem, or gives up when the client leaves.
func acquire(ctx context.Context, sem chan struct{}) bool {
	select {
	case sem <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

func (rc *receiver) traces(w http.ResponseWriter, r *http.Request, enc encoding, body []byte) {
	td, err := decodeTraces(enc, body)
	if err != nil {
		rc.refuse(w, enc, err)
		return
	}
	accepted, rejected, err := rc.sink.IngestTraces(r.Context(), td)
	if err != nil {
		rc.unavailable(w, enc, "traces", err)
		return
	}
	rc.log.Debug("otlp traces stored", "accepted", accepted, "rejected", rejected)
	rc.respond(w, enc, tracesResponse(rejected))
}

func (rc *receiver) logs(w http.ResponseWriter, r *http.Request, enc encoding, body []byte) {
	ld, err := decodeLogs(enc, body)
	if err != nil {
		rc.refuse(w, enc, err)
		return
	}
	accepted, rejected, err := rc.sink.IngestLogs(r.Context(), ld)
	if err != nil {
		rc.unavailable(w, enc, "logs", err)
		return
	}
	rc.log.Debug("otlp logs stored", "accepted", accepted, "rejected", rejected)
	rc.respond(w, enc, logsResponse(rejected))
}

// metrics answers a metrics export with a partial success rejecting every data point.
func (rc *receiver) metrics(w http.ResponseWriter, enc encoding, body []byte) {
	md, err := decodeMetrics(enc, body)
	if err != nil {
		rc.refuse(w, enc, err)
		return
	}
	rc.respond(w, enc, rc.opts.Stats.dropMetrics(md))
}

func (rc *receiver) respond(w http.ResponseWriter, enc encoding, resp exportResponse) {
	b, err := marshalResponse(enc, resp)
	if err != nil {
		rc.internal(w, err)
		return
	}
	writeResponse(w, enc, b)
}

// refuse answers a request the client must fix: 413 for size, 408 for a body that stalled,
// 400 otherwise, with the reason in an OTLP Status message.
func (rc *receiver) refuse(w http.ResponseWriter, enc encoding, err error) {
	status := http.StatusBadRequest
	var tooLarge *tooLargeError
	var slow *slowBodyError
	switch {
	case errors.As(err, &tooLarge):
		status = http.StatusRequestEntityTooLarge
	case errors.As(err, &slow):
		status = http.StatusRequestTimeout
	}
	rc.log.Debug("otlp request refused", "status", status, "err", err)
	writeStatus(w, enc, status, err.Error())
}

// unavailable answers a sink failure: 429 when the sink is saturated (the store's writer is
// behind), 503 otherwise; OTLP exporters retry both, after the Retry-After delay. The error
// text stays in the log: it may carry a file path.
func (rc *receiver) unavailable(w http.ResponseWriter, enc encoding, what string, err error) {
	if errors.Is(err, context.Canceled) {
		return // the client left; nobody reads the answer
	}
	if delay, busy := retryDelay(err); busy {
		rc.log.Debug("otlp batch refused: store busy", "signal", what)
		w.Header().Set("Retry-After", strconv.Itoa(int(max(delay.Round(time.Second), time.Second)/time.Second)))
		writeStatus(w, enc, http.StatusTooManyRequests, busyMessage(what, delay))
		return
	}
	rc.log.Warn("otlp batch not stored", "signal", what, "err", err)
	w.Header().Set("Retry-After", "1")
	writeStatus(w, enc, http.StatusServiceUnavailable, fmt.Sprintf("%s not stored, retry later", what))
}

// retryDelay returns the delay a saturated sink asks for, and whether err says it is saturated.
func retryDelay(err error) (time.Duration, bool) {
	var hint interface{ RetryAfter() time.Duration }
	if !errors.As(err, &hint) {
		return 0, false
	}
	return max(hint.RetryAfter(), 0), true
}

// busyMessage tells a sender refused for backpressure what happened and when to retry.
func busyMessage(what string, delay time.Duration) string {
	return fmt.Sprintf("%s not stored: runlens is still writing earlier batches; retry after %s", what, max(delay, time.Second))
}

func (rc *receiver) internal(w http.ResponseWriter, err error) {
	rc.log.Error("otlp response not encoded", "err", err)
	writePlain(w, http.StatusInternalServerError, "internal error")
}
