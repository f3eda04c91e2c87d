// Package engine composes the telemetry tools' answers: it implements telemetry.Source over
// any telemetry.Backend with the rules of package telemetry (docs/semantics.md), asking the
// backend's capabilities first and computing from bounded scans otherwise. Backends never
// import it.
package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/conventions"
)

// Engine implements telemetry.Source over any telemetry.Backend: the semantics of docs/semantics.md — runs and their
// status, domains, jobs, error occurrences and their grouping, entry spans, database
// operations, percentiles — written once, so they cannot drift between sources.
//
// A backend that can aggregate server-side declares it by implementing capability interfaces
// (ActivityCounter, OccurrenceIndexer, DurationIndexer, DBIndexer, JobIndexer, RunLister,
// RunResolver): each supplies a fact — tallies, an occurrence index, duration or database
// facts, a job execution, a page of runs — and the engine assembles every answer from facts,
// once. It computes the same facts from scans when the backend declines (answers
// handled=false, e.g. because its precomputed columns were derived with other conventions).
// Both ways give the same facts and answers: the conformance suite (package telemetrytest)
// holds every backend to both.
type Engine struct {
	b      telemetry.Backend
	conv   *conventions.Conventions
	limits telemetry.Limits
	// scansOnly ignores the backend's capabilities (tests prove both paths agree).
	scansOnly bool
}

var _ telemetry.Source = (*Engine)(nil)

// New returns the engine over b with conv (the otel preset when nil).
func New(b telemetry.Backend, conv *conventions.Conventions) *Engine {
	if conv == nil {
		conv = conventions.Default()
	}
	return &Engine{b: b, conv: conv, limits: telemetry.DefaultLimits()}
}

// WithLimits returns a copy of e with other limits (zero fields keep e's).
func (e *Engine) WithLimits(l telemetry.Limits) *Engine {
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
func (e *Engine) Backend() telemetry.Backend { return e.b }

// Ask is what the engine hands its backend with each question: its conventions and limits.
func (e *Engine) Ask() telemetry.Ask { return telemetry.Ask{Conv: e.conv, Limits: e.limits} }

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
func (e *Engine) Fingerprint(ctx context.Context) (telemetry.Snapshot, error) {
	return e.b.Fingerprint(ctx)
}

// Describe implements Source.
func (e *Engine) Describe(ctx context.Context) telemetry.SourceInfo { return e.b.Describe(ctx) }

// CoverageNote implements Coverage: the backend's note, if it declares one.
func (e *Engine) CoverageNote() string { return telemetry.CoverageNote(e.b) }

// scanSpans runs a scan bounded by the engine's row limit.
func (e *Engine) scanSpans(ctx context.Context, s telemetry.SpanScan) (telemetry.SpanBatch, error) {
	if s.Limit <= 0 || s.Limit > e.limits.MaxScanRows {
		s.Limit = e.limits.MaxScanRows
	}
	b, err := e.b.ScanSpans(ctx, s)
	if err != nil {
		return telemetry.SpanBatch{}, wrapUnreachable(err)
	}
	return b, nil
}

// scanLogs runs a log scan bounded by the engine's row limit.
func (e *Engine) scanLogs(ctx context.Context, s telemetry.LogScan) (telemetry.LogBatch, error) {
	if s.Limit <= 0 || s.Limit > e.limits.MaxScanRows {
		s.Limit = e.limits.MaxScanRows
	}
	b, err := e.b.ScanLogs(ctx, s)
	if err != nil {
		return telemetry.LogBatch{}, wrapUnreachable(err)
	}
	return b, nil
}

// traceChunk bounds the trace ids of one scan, so a backend's query text stays small.
const traceChunk = 500

// traceSpans returns the spans of traces, grouped by trace, reading at most the row limit in
// all; limited reports a cut.
func (e *Engine) traceSpans(ctx context.Context, traces []string, errorsOnly bool, asOf int64, fields telemetry.Fields) (map[string][]telemetry.SpanRow, bool, int64, error) {
	out := make(map[string][]telemetry.SpanRow, len(traces))
	budget := e.limits.MaxScanRows
	limited := false
	var scanned int64
	for i := 0; i < len(traces); i += traceChunk {
		if budget <= 0 {
			limited = true
			break
		}
		chunk := traces[i:min(len(traces), i+traceChunk)]
		b, err := e.scanSpans(ctx, telemetry.SpanScan{TraceIDs: chunk, ErrorsOnly: errorsOnly, AsOf: asOf, Limit: budget, Fields: fields})
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
func (e *Engine) traceLogs(ctx context.Context, traces []string, asOf int64) (map[string][]telemetry.LogRow, bool, error) {
	out := make(map[string][]telemetry.LogRow, len(traces))
	limited := false
	budget := e.limits.MaxScanRows
	for i := 0; i < len(traces); i += traceChunk {
		if budget <= 0 {
			limited = true
			break
		}
		chunk := traces[i:min(len(traces), i+traceChunk)]
		b, err := e.scanLogs(ctx, telemetry.LogScan{TraceIDs: chunk, ErrorsOnly: true, AsOf: asOf, Limit: budget, Fields: telemetry.FieldAttributes})
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
	if errors.Is(err, telemetry.ErrUnreachable) || errors.Is(err, telemetry.ErrRefused) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("%w: %w", telemetry.ErrUnreachable, err)
}

// windowScan is the Scan of a window.
func windowScan(w telemetry.Window) telemetry.Scan {
	return telemetry.Scan{WindowStartMs: w.StartMs, WindowEndMs: w.EndMs}
}
