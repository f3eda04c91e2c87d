// Package otlp is runlens's OTLP/HTTP receiver: it accepts traces and logs from an
// application's OpenTelemetry exporter, decodes them with the collector's pdata (which reads
// OTLP/JSON's hex ids correctly, unlike protojson), hands them to a Sink, and acknowledges a
// batch only once the Sink has made it durable.
package otlp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

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
	// MaxConcurrent bounds the requests in progress; others wait for a slot.
	MaxConcurrent int
	// Logger receives refused requests (debug) and sink failures (warn); nil discards.
	Logger *slog.Logger
	// AllowedHosts are host names accepted in Host and Origin besides the loopback ones
	// (127.0.0.0/8, ::1, localhost), compared without case; see guard.
	AllowedHosts []string
	// StoreID, when set, is served at IdentityPath (see StoreID), so another runlens process
	// finding the port taken can tell whether this receiver writes its store.
	StoreID string
}

// Sink stores decoded batches. It returns how many records it accepted and rejected, and
// must return nil only once the accepted records are durable: the receiver's 200 promises it.
// On error nothing of the batch may have been stored, so the client can safely retry.
type Sink interface {
	IngestTraces(ctx context.Context, td ptrace.Traces) (accepted, rejected int, err error)
	IngestLogs(ctx context.Context, ld plog.Logs) (accepted, rejected int, err error)
}

// receiver serves the three OTLP/HTTP paths.
type receiver struct {
	sink Sink
	opts Options
	log  *slog.Logger
	sem  chan struct{}
}

// NewHandler returns the handler for POST /v1/traces, /v1/logs and /v1/metrics. Metrics are
// read, answered 200 and dropped: runlens's tools do not use them, and refusing them would make
// an exporter configured with one endpoint for all signals log errors forever. Every request
// first passes the guard: a loopback (or configured) Host and no foreign Origin.
func NewHandler(sink Sink, o Options) http.Handler {
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.MaxDecompressedBytes <= 0 {
		o.MaxDecompressedBytes = DefaultMaxDecompressedBytes
	}
	if o.MaxConcurrent <= 0 {
		o.MaxConcurrent = DefaultMaxConcurrent
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	rc := &receiver{sink: sink, opts: o, log: log, sem: make(chan struct{}, o.MaxConcurrent)}
	mux := http.NewServeMux()
	mux.Handle(TracesPath, rc.serve(signalTraces))
	mux.Handle(LogsPath, rc.serve(signalLogs))
	mux.Handle(MetricsPath, rc.serve(signalMetrics))
	if o.StoreID != "" {
		mux.Handle(IdentityPath, identityHandler(o.StoreID))
	}
	return newGuard(mux, o.AllowedHosts, log.Debug)
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
		select {
		case rc.sem <- struct{}{}:
			defer func() { <-rc.sem }()
		case <-r.Context().Done():
			return
		}
		body, err := readBody(w, r, rc.opts)
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
			writeResponse(w, enc, emptyMetricsResponse(enc))
		}
	})
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
	resp, err := tracesResponse(enc, rejected)
	if err != nil {
		rc.internal(w, err)
		return
	}
	writeResponse(w, enc, resp)
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
	resp, err := logsResponse(enc, rejected)
	if err != nil {
		rc.internal(w, err)
		return
	}
	writeResponse(w, enc, resp)
}

// refuse answers a request the client must fix: 413 for size, 400 otherwise, with the reason
// in an OTLP Status message.
func (rc *receiver) refuse(w http.ResponseWriter, enc encoding, err error) {
	status := http.StatusBadRequest
	var tooLarge *tooLargeError
	if errors.As(err, &tooLarge) {
		status = http.StatusRequestEntityTooLarge
	}
	rc.log.Debug("otlp request refused", "status", status, "err", err)
	writeStatus(w, enc, status, err.Error())
}

// unavailable answers a sink failure with 503, which OTLP exporters retry with backoff.
// The error text stays in the log: it may carry a file path.
func (rc *receiver) unavailable(w http.ResponseWriter, enc encoding, what string, err error) {
	if errors.Is(err, context.Canceled) {
		return // the client left; nobody reads the answer
	}
	rc.log.Warn("otlp batch not stored", "signal", what, "err", err)
	w.Header().Set("Retry-After", "1")
	writeStatus(w, enc, http.StatusServiceUnavailable, fmt.Sprintf("%s not stored, retry later", what))
}

func (rc *receiver) internal(w http.ResponseWriter, err error) {
	rc.log.Error("otlp response not encoded", "err", err)
	writePlain(w, http.StatusInternalServerError, "internal error")
}
