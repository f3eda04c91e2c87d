package telemetry

import (
	"cmp"
	"context"
	"slices"

	"github.com/runlens/runlens/internal/telemetry/conventions"
)

// Backend is what a telemetry source must provide for the engine to answer every tool: bounded
// scans of spans and log records with push-down filters, a snapshot fingerprint, and a
// description. It holds no semantics: what a run, an error occurrence, an entry span or a
// database operation is, the engine decides from the rows (see Engine).
//
// Every filter of SpanScan and LogScan is binding: a backend that cannot apply one server-side
// applies it to what it fetched (MatchSpan and MatchLog do it), so every backend returns the
// same rows for the same scan. Limits are honest: a batch that stopped early says Limited. A
// backend holds each span once per trace and span id (the first copy that arrived: an exporter
// that retries a batch sends its spans again), so the engine never deduplicates what it reads.
type Backend interface {
	// ScanSpans returns the spans matching s, newest first (oldest first with s.Oldest).
	ScanSpans(ctx context.Context, s SpanScan) (SpanBatch, error)
	// ScanLogs returns the log records matching s, newest first (oldest first with s.Oldest).
	ScanLogs(ctx context.Context, s LogScan) (LogBatch, error)
	// Services lists known service names (bounded, sorted; "unknown" for spans without
	// service.name), for hints.
	Services(ctx context.Context, limit int) ([]string, error)
	// Fingerprint identifies the current data snapshot (see Snapshot).
	Fingerprint(ctx context.Context) (Snapshot, error)
	// Describe says what the source is and whether it answers.
	Describe(ctx context.Context) SourceInfo
}

// SpanKind values, as the OpenTelemetry Collector's ClickHouse exporter writes them.
const (
	KindUnspecified = "Unspecified"
	KindInternal    = "Internal"
	KindServer      = "Server"
	KindClient      = "Client"
	KindProducer    = "Producer"
	KindConsumer    = "Consumer"
)

// Span status codes, as the exporter writes them.
const (
	CodeUnset = "Unset"
	CodeOk    = "Ok"
	CodeError = "Error"
)

// SpanRow is one span as every backend returns it: the OTLP span flattened, attribute values
// in their canonical text form (an integer 3 as "3"), whatever type they were sent with.
type SpanRow struct {
	TraceID, SpanID, ParentSpanID string
	Name                          string
	// Kind is one of the Kind constants.
	Kind string
	// Service is the service.name resource attribute as sent; empty when absent.
	Service string
	// StartNs and DurationNs are nanoseconds; DurationNs is never negative.
	StartNs, DurationNs int64
	// StatusCode is one of the Code constants.
	StatusCode    string
	StatusMessage string
	// Attributes are the span's own attributes (resource attributes excluded); nil when the
	// scan did not ask for them.
	Attributes conventions.Attributes
	// Events are the span's events; nil when the scan did not ask for them.
	Events []SpanEvent
	// Resource are the resource attributes of the process that sent the span; nil when the
	// scan did not ask for them.
	Resource conventions.Attributes
}

// SpanEvent is one span event (exception events carry exception.type, exception.message and
// exception.stacktrace).
type SpanEvent struct {
	TimeNs     int64
	Name       string
	Attributes conventions.Attributes
}

// IsError reports whether the span's status is Error.
func (s *SpanRow) IsError() bool { return s.StatusCode == CodeError }

// IsRoot reports whether the span has no parent.
func (s *SpanRow) IsRoot() bool { return s.ParentSpanID == "" }

// EndNs is the span's end.
func (s *SpanRow) EndNs() int64 { return s.StartNs + s.DurationNs }

// LogRow is one log record as every backend returns it.
type LogRow struct {
	TimeNs         int64
	TraceID        string
	SpanID         string
	Service        string
	SeverityNumber int32
	SeverityText   string
	// Body is the body as text (maps and arrays as JSON).
	Body string
	// Attributes are the record's own attributes; nil when the scan did not ask for them.
	Attributes conventions.Attributes
	// Resource are the resource attributes of the process that sent the record; nil when the
	// scan did not ask for them.
	Resource conventions.Attributes
}

// IsError reports whether the record is an error signal (TELEMETRY.md).
func (l *LogRow) IsError() bool { return conventions.IsErrorLog(l.SeverityNumber, l.SeverityText) }

// Fields selects the optional parts of a row a scan returns; ids, names, times, service and
// status are always returned.
type Fields uint8

const (
	// FieldAttributes asks for the span or record attributes.
	FieldAttributes Fields = 1 << iota
	// FieldEvents asks for span events.
	FieldEvents
	// FieldResource asks for the resource attributes.
	FieldResource
)

// InvocationKey is the resource attribute execute_command gives the processes of one command
// run, so their telemetry can be told apart from everything else the store holds.
const InvocationKey = "runlens.invocation.id"

// SpanScan selects spans. Zero fields do not filter.
type SpanScan struct {
	// Window bounds the span start; a zero Window does not bound time.
	Window Window
	// Service keeps one service's spans; UnknownService keeps those without service.name.
	Service string
	// RootsOnly keeps spans without a parent; ErrorsOnly those with status Error.
	RootsOnly  bool
	ErrorsOnly bool
	// TraceIDs keeps the spans of these traces.
	TraceIDs []string
	// Names keeps spans with one of these names.
	Names []string
	// AttrKeys keeps spans carrying a non-empty attribute with one of these keys; a key ending
	// in "." is a prefix. With AttrValue, the attribute (exact keys only) must equal it.
	AttrKeys  []string
	AttrValue string
	// Limit bounds the rows returned (0: the backend's own limit); Oldest returns the oldest
	// first instead of the newest.
	Limit  int
	Oldest bool
	// AsOf pins the snapshot (0: latest).
	AsOf int64
	// Fields selects the optional parts returned.
	Fields Fields
	// Invocation keeps the spans of processes whose InvocationKey resource attribute is it.
	Invocation string
}

// FailingScan selects what a FailingTraceScanner reads: the rows of the traces with a span of
// status Error that started in Window (error log records only, for logs), at most Limit.
type FailingScan struct {
	Window Window
	Limit  int
	Fields Fields
	// RootAndErrorAttributes says the attributes are asked for only on root spans and spans
	// of status Error (what the occurrence rules read of them); a backend may leave the other
	// spans' attributes empty, which saves reading most of them.
	RootAndErrorAttributes bool
}

// LogScan selects log records. Zero fields do not filter.
type LogScan struct {
	Window  Window
	Service string
	// ErrorsOnly keeps error records.
	ErrorsOnly bool
	// TraceIDs keeps the records correlated to these traces.
	TraceIDs []string
	Limit    int
	Oldest   bool
	AsOf     int64
	Fields   Fields
	// Invocation keeps the records of processes whose InvocationKey resource attribute is it.
	Invocation string
}

// SpanBatch is the answer of a span scan.
type SpanBatch struct {
	Spans []SpanRow
	// Limited is true when more spans matched than were returned.
	Limited bool
	// Matched is the number of matching spans when the backend knows it (then ≥ len(Spans)),
	// -1 when it does not; without Limited it equals len(Spans).
	Matched int64
	// Scanned is how many rows the backend examined (informational).
	Scanned int64
}

// LogBatch is the answer of a log scan.
type LogBatch struct {
	Logs    []LogRow
	Limited bool
	Matched int64
	Scanned int64
}

// ServiceOf is the service name the tools report for a row's service.name.
func ServiceOf(s string) string {
	if s == "" {
		return UnknownService
	}
	return s
}

// MatchSpan reports whether r satisfies every filter of s (limits and ordering aside), for
// backends that filter what they fetched.
func MatchSpan(s *SpanScan, r *SpanRow) bool {
	switch {
	case s.Window != (Window{}) && !s.Window.ContainsNs(r.StartNs):
		return false
	case s.Service != "" && ServiceOf(r.Service) != s.Service:
		return false
	case s.RootsOnly && !r.IsRoot():
		return false
	case s.ErrorsOnly && !r.IsError():
		return false
	case len(s.TraceIDs) > 0 && !contains(s.TraceIDs, r.TraceID):
		return false
	case len(s.Names) > 0 && !contains(s.Names, r.Name):
		return false
	case len(s.AttrKeys) > 0 && !hasAttr(r.Attributes, s.AttrKeys, s.AttrValue):
		return false
	case s.Invocation != "" && r.Resource[InvocationKey] != s.Invocation:
		return false
	}
	return true
}

// MatchLog reports whether r satisfies every filter of s.
func MatchLog(s *LogScan, r *LogRow) bool {
	switch {
	case s.Window != (Window{}) && !s.Window.ContainsNs(r.TimeNs):
		return false
	case s.Service != "" && ServiceOf(r.Service) != s.Service:
		return false
	case s.ErrorsOnly && !r.IsError():
		return false
	case len(s.TraceIDs) > 0 && !contains(s.TraceIDs, r.TraceID):
		return false
	case s.Invocation != "" && r.Resource[InvocationKey] != s.Invocation:
		return false
	}
	return true
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// hasAttr reports whether attrs carries a non-empty value under one of keys (a key ending in
// "." is a prefix), equal to value when value is set.
func hasAttr(attrs conventions.Attributes, keys []string, value string) bool {
	for _, k := range keys {
		if n := len(k); n > 0 && k[n-1] == '.' && value == "" {
			for ak, av := range attrs {
				if av != "" && len(ak) >= n && ak[:n] == k {
					return true
				}
			}
			continue
		}
		if v := attrs[k]; v != "" && (value == "" || v == value) {
			return true
		}
	}
	return false
}

// ContainsNs reports whether t (Unix ns) falls inside the window.
func (w Window) ContainsNs(tNs int64) bool { return tNs >= w.StartMs*1e6 && tNs < w.EndMs*1e6 }

// BoundSpans finishes a scan over rows a backend filtered itself: newest first (oldest first
// with s.Oldest; the span id breaks ties), cut at s.Limit, without the parts s.Fields did not
// ask for. limited says the rows were already incomplete (then Matched is unknown, -1).
func BoundSpans(s *SpanScan, out []SpanRow, scanned int64, limited bool) SpanBatch {
	slices.SortStableFunc(out, func(x, y SpanRow) int {
		return order(s.Oldest, cmp.Or(cmp.Compare(x.StartNs, y.StartNs), cmp.Compare(x.SpanID, y.SpanID)))
	})
	out, matched, limited := cut(out, s.Limit, limited)
	for i := range out {
		if s.Fields&FieldAttributes == 0 {
			out[i].Attributes = nil
		}
		if s.Fields&FieldEvents == 0 {
			out[i].Events = nil
		}
		if s.Fields&FieldResource == 0 {
			out[i].Resource = nil
		}
	}
	return SpanBatch{Spans: out, Matched: matched, Limited: limited, Scanned: scanned}
}

// BoundLogs is BoundSpans for log records (records of one instant keep the order they came in).
func BoundLogs(s *LogScan, out []LogRow, scanned int64, limited bool) LogBatch {
	slices.SortStableFunc(out, func(x, y LogRow) int { return order(s.Oldest, cmp.Compare(x.TimeNs, y.TimeNs)) })
	out, matched, limited := cut(out, s.Limit, limited)
	for i := range out {
		if s.Fields&FieldAttributes == 0 {
			out[i].Attributes = nil
		}
		if s.Fields&FieldResource == 0 {
			out[i].Resource = nil
		}
	}
	return LogBatch{Logs: out, Matched: matched, Limited: limited, Scanned: scanned}
}

// cut applies a scan's limit to rows in order. Matched is every row, or unknown (-1) when the
// rows were already incomplete; limited is true when rows are missing either way.
func cut[T any](rows []T, limit int, incomplete bool) (out []T, matched int64, limited bool) {
	matched, limited = int64(len(rows)), incomplete
	if incomplete {
		matched = -1
	}
	if limit > 0 && len(rows) > limit {
		rows, limited = rows[:limit], true
	}
	return rows, matched, limited
}

// order turns an oldest-first comparison into the scan's order.
func order(oldest bool, c int) int {
	if oldest {
		return c
	}
	return -c
}
