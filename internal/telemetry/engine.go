package telemetry

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/runlens/runlens/internal/telemetry/conventions"
)

// Engine implements Source over any Backend: the semantics of TELEMETRY.md — runs and their
// status, domains, jobs, error occurrences and their grouping, entry spans, database
// operations, percentiles — written once, so they cannot drift between sources.
//
// A backend that can aggregate server-side declares it by implementing one of the capability
// interfaces (StatusAggregator, …); the engine asks it first and computes the answer from
// scans when the backend declines (answers handled=false, e.g. because its precomputed columns
// were derived with other conventions). Both ways give the same answer: the conformance suite
// (package telemetrytest) holds every backend to it.
type Engine struct {
	b      Backend
	conv   *conventions.Conventions
	limits Limits
	// scansOnly ignores the backend's capabilities (tests prove both paths agree).
	scansOnly bool
}

var _ Source = (*Engine)(nil)

// Limits bound what the engine reads for one answer when it computes from scans.
type Limits struct {
	// MaxScanRows bounds the rows of one scan (default 200,000); a scan cut by it makes the
	// answer's Scan.Limited true.
	MaxScanRows int
	// MaxRunSpans and MaxRunLogs bound get_run's reads (defaults 10,000 and 1,000).
	MaxRunSpans int
	MaxRunLogs  int
	// MaxHints bounds the known names offered when a filter matched nothing (default 10).
	MaxHints int
}

// DefaultLimits are the limits NewEngine uses; an Engine hands its own to the backend with
// each question (Ask, and each scan's Limit).
func DefaultLimits() Limits {
	return Limits{MaxScanRows: 200_000, MaxRunSpans: 10_000, MaxRunLogs: 1_000, MaxHints: 10}
}

// NewEngine returns the engine over b with conv (the otel preset when nil).
func NewEngine(b Backend, conv *conventions.Conventions) *Engine {
	if conv == nil {
		conv = conventions.Default()
	}
	return &Engine{b: b, conv: conv, limits: DefaultLimits()}
}

// WithLimits returns a copy of e with other limits (zero fields keep e's).
func (e *Engine) WithLimits(l Limits) *Engine {
	c := *e
	if l.MaxScanRows > 0 {
		c.limits.MaxScanRows = l.MaxScanRows
	}
	if l.MaxRunSpans > 0 {
		c.limits.MaxRunSpans = l.MaxRunSpans
	}
	if l.MaxRunLogs > 0 {
		c.limits.MaxRunLogs = l.MaxRunLogs
	}
	if l.MaxHints > 0 {
		c.limits.MaxHints = l.MaxHints
	}
	return &c
}

// ScansOnly returns a copy of e that never uses the backend's capabilities: every answer is
// computed from scans. The conformance suite runs both.
func (e *Engine) ScansOnly() *Engine {
	c := *e
	c.scansOnly = true
	return &c
}

// Conventions are the engine's conventions.
func (e *Engine) Conventions() *conventions.Conventions { return e.conv }

// Backend is the engine's backend.
func (e *Engine) Backend() Backend { return e.b }

// Ask is what the engine hands a capability with each question: the conventions its answer
// follows and the engine's limits, so that no backend reads either from a package variable.
type Ask struct {
	Conv   *conventions.Conventions
	Limits Limits
}

// ask is the engine's Ask.
func (e *Engine) ask() Ask { return Ask{Conv: e.conv, Limits: e.limits} }

// Capabilities: optional interfaces a Backend implements to answer a tool's question
// server-side. Each receives the engine's conventions and limits (Ask) and answers
// handled=false when it cannot answer with them; it must then have no side effects. What it
// answers must equal what the engine computes from scans.
type (
	// StatusAggregator answers Status.
	StatusAggregator interface {
		AggregateStatus(ctx context.Context, q StatusQuery, ask Ask) (st Status, handled bool, err error)
	}
	// RunLister answers Runs.
	RunLister interface {
		ListRuns(ctx context.Context, q RunsQuery, ask Ask) (p RunPage, handled bool, err error)
	}
	// ErrorAggregator answers Errors from occurrences that TraceOccurrences computed (the
	// store's shaped traces), with each group's handled share and entry services read off the
	// runs' roots and the service filter of docs/semantics.md R12.
	ErrorAggregator interface {
		AggregateOccurrences(ctx context.Context, q ErrorsQuery, ask Ask) (r ErrorReport, handled bool, err error)
	}
	// JobFinder answers LastJob.
	JobFinder interface {
		FindLastJob(ctx context.Context, q JobQuery, ask Ask) (j JobResult, handled bool, err error)
	}
	// PerformanceAggregator answers ServicePerformance.
	PerformanceAggregator interface {
		AggregatePerformance(ctx context.Context, q PerformanceQuery, ask Ask) (p Performance, handled bool, err error)
	}
	// DBAggregator answers DBOperations.
	DBAggregator interface {
		AggregateDB(ctx context.Context, q DBQuery, ask Ask) (r DBReport, handled bool, err error)
	}
	// FailingTraceScanner reads in one pass what the engine otherwise reads by lists of trace
	// ids: the spans, and the error logs, of the traces with an error span in a window (a
	// backend where every list costs a scan of the window's trace ids answers a day's
	// thousands of failing traces with one scan instead of one per list). It returns the rows
	// the lists would, newest first, cut at the limit.
	FailingTraceScanner interface {
		ScanFailingTraceSpans(ctx context.Context, s FailingScan) (SpanBatch, error)
		ScanFailingTraceLogs(ctx context.Context, s FailingScan) (LogBatch, error)
	}
	// RunResolver finds the trace of a run id (an execution id) faster than a scan.
	RunResolver interface {
		ResolveRun(ctx context.Context, id string, ask Ask) (traceID string, handled bool, err error)
	}
)

// capability returns the backend as capability C, unless the engine scans only or the query
// is about one command invocation (no backend keeps rollups per invocation: its telemetry is
// small and recent, and scans read it fast).
func capability[C any](e *Engine, invocation ...string) (C, bool) {
	var zero C
	if e.scansOnly || (len(invocation) > 0 && invocation[0] != "") {
		return zero, false
	}
	c, ok := e.b.(C)
	return c, ok
}

// Services implements Source.
func (e *Engine) Services(ctx context.Context, limit int) ([]string, error) {
	return e.b.Services(ctx, limit)
}

// Fingerprint implements Source.
func (e *Engine) Fingerprint(ctx context.Context) (Snapshot, error) { return e.b.Fingerprint(ctx) }

// Describe implements Source.
func (e *Engine) Describe(ctx context.Context) SourceInfo { return e.b.Describe(ctx) }

// CoverageNote implements Coverage: the backend's note, if it declares one.
func (e *Engine) CoverageNote() string { return CoverageNote(e.b) }

// scanSpans runs a scan bounded by the engine's row limit.
func (e *Engine) scanSpans(ctx context.Context, s SpanScan) (SpanBatch, error) {
	if s.Limit <= 0 || s.Limit > e.limits.MaxScanRows {
		s.Limit = e.limits.MaxScanRows
	}
	b, err := e.b.ScanSpans(ctx, s)
	if err != nil {
		return SpanBatch{}, wrapUnreachable(err)
	}
	return b, nil
}

// scanLogs runs a log scan bounded by the engine's row limit.
func (e *Engine) scanLogs(ctx context.Context, s LogScan) (LogBatch, error) {
	if s.Limit <= 0 || s.Limit > e.limits.MaxScanRows {
		s.Limit = e.limits.MaxScanRows
	}
	b, err := e.b.ScanLogs(ctx, s)
	if err != nil {
		return LogBatch{}, wrapUnreachable(err)
	}
	return b, nil
}

// traceChunk bounds the trace ids of one scan, so a backend's query text stays small.
const traceChunk = 500

// traceSpans returns the spans of traces, grouped by trace, reading at most the row limit in
// all; limited reports a cut.
func (e *Engine) traceSpans(ctx context.Context, traces []string, errorsOnly bool, asOf int64, fields Fields) (map[string][]SpanRow, bool, int64, error) {
	out := make(map[string][]SpanRow, len(traces))
	budget := e.limits.MaxScanRows
	limited := false
	var scanned int64
	for i := 0; i < len(traces); i += traceChunk {
		if budget <= 0 {
			limited = true
			break
		}
		chunk := traces[i:min(len(traces), i+traceChunk)]
		b, err := e.scanSpans(ctx, SpanScan{TraceIDs: chunk, ErrorsOnly: errorsOnly, AsOf: asOf, Limit: budget, Fields: fields})
		if err != nil {
			return nil, false, 0, err
		}
		limited = limited || b.Limited
		scanned += b.Scanned
		budget -= len(b.Spans)
		for _, s := range b.Spans {
			out[s.TraceID] = append(out[s.TraceID], s)
		}
	}
	return out, limited, scanned, nil
}

// traceLogs returns the error logs of traces, grouped by trace.
func (e *Engine) traceLogs(ctx context.Context, traces []string, asOf int64) (map[string][]LogRow, bool, error) {
	out := make(map[string][]LogRow, len(traces))
	limited := false
	budget := e.limits.MaxScanRows
	for i := 0; i < len(traces); i += traceChunk {
		if budget <= 0 {
			limited = true
			break
		}
		chunk := traces[i:min(len(traces), i+traceChunk)]
		b, err := e.scanLogs(ctx, LogScan{TraceIDs: chunk, ErrorsOnly: true, AsOf: asOf, Limit: budget, Fields: FieldAttributes})
		if err != nil {
			return nil, false, err
		}
		limited = limited || b.Limited
		budget -= len(b.Logs)
		for _, l := range b.Logs {
			out[l.TraceID] = append(out[l.TraceID], l)
		}
	}
	return out, limited, nil
}

// wrapUnreachable marks a backend failure as the source being unreachable unless it already
// says what it is (unreachable, refused, cancelled).
func wrapUnreachable(err error) error {
	if errors.Is(err, ErrUnreachable) || errors.Is(err, ErrRefused) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrUnreachable, err)
}

// windowScan is the Scan of a window.
func windowScan(w Window) Scan { return Scan{WindowStartMs: w.StartMs, WindowEndMs: w.EndMs} }

// keys returns the keys of a map, sorted.
func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
