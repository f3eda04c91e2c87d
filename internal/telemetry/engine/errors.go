package engine

import (
	"context"
	"slices"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/conventions"
)

// occurrenceSet is the error occurrences of a window with what reading them covered.
type occurrenceSet struct {
	list    []telemetry.Occurrence
	limited bool
	scanned int64
	// erroredTraces are the traces with an error span among those read.
	erroredTraces map[string]bool
}

// occurrences computes the window's error occurrences from scans: the window's error spans,
// their whole traces (to find each failure's origin and run), the traces' error logs, and the
// window's error logs (those outside any failing trace are occurrences of their own).
func (e *Engine) occurrences(ctx context.Context, w telemetry.Window, asOf int64, invocation string) (occurrenceSet, error) {
	var set occurrenceSet
	// The window's error logs are read beside the spans: neither read waits for the other.
	var errLogs telemetry.LogBatch
	var errLogsErr error
	logsRead := make(chan struct{})
	go func() {
		defer close(logsRead)
		errLogs, errLogsErr = e.scanLogs(ctx, telemetry.LogScan{Window: w, ErrorsOnly: true, AsOf: asOf, Fields: telemetry.FieldAttributes, Invocation: invocation})
	}()
	defer func() { <-logsRead }()
	spans, logs, n, ok, err := e.failingInOnePass(ctx, w, asOf, invocation)
	if err != nil {
		return set, err
	}
	traceSet := map[string]bool{}
	if ok {
		// The window's error spans are among their traces' spans: no read of their own.
		for t, list := range spans {
			for i := range list {
				if list[i].IsError() && w.ContainsNs(list[i].StartNs) {
					traceSet[t] = true
					break
				}
			}
		}
		set.scanned = n
	} else {
		errSpans, err := e.scanSpans(ctx, telemetry.SpanScan{Window: w, ErrorsOnly: true, AsOf: asOf, Invocation: invocation})
		if err != nil {
			return set, err
		}
		set.limited, set.scanned = errSpans.Limited, errSpans.Scanned
		for _, s := range errSpans.Spans {
			traceSet[s.TraceID] = true
		}
		var lim bool
		spans, logs, lim, n, err = e.failingTraces(ctx, sortedUnique(telemetry.Keys(traceSet)), asOf)
		if err != nil {
			return set, err
		}
		set.limited, set.scanned = set.limited || lim, set.scanned+n
	}
	if <-logsRead; errLogsErr != nil {
		return set, errLogsErr
	}
	set.limited = set.limited || errLogs.Limited
	set.scanned += errLogs.Scanned
	// Logs whose trace had no error span in the window may still belong to a failing trace.
	var probe []string
	for _, l := range errLogs.Logs {
		if l.TraceID != "" && !traceSet[l.TraceID] {
			probe = append(probe, l.TraceID)
		}
	}
	probe = sortedUnique(probe)
	probed, lim, _, err := e.traceSpans(ctx, probe, true, asOf, 0)
	if err != nil {
		return set, err
	}
	set.limited = set.limited || lim
	set.erroredTraces = traceSet
	for _, t := range sortedUnique(telemetry.Keys(traceSet)) {
		for _, o := range telemetry.TraceOccurrences(e.conv, spans[t], logs[t]) {
			if w.ContainsNs(o.TimeNs) {
				set.list = append(set.list, o)
			}
		}
	}
	// Lone error logs: no trace, or a trace with no error span anywhere.
	var loneTraces []string
	for _, l := range errLogs.Logs {
		if l.TraceID != "" && !traceSet[l.TraceID] && len(probed[l.TraceID]) == 0 {
			loneTraces = append(loneTraces, l.TraceID)
		}
	}
	roots, err := e.traceRoots(ctx, sortedUnique(loneTraces), asOf)
	if err != nil {
		return set, err
	}
	for i := range errLogs.Logs {
		l := &errLogs.Logs[i]
		if l.TraceID != "" && (traceSet[l.TraceID] || len(probed[l.TraceID]) > 0) {
			continue
		}
		set.list = append(set.list, telemetry.LogOccurrence(e.conv, l, roots[l.TraceID]))
	}
	return set, nil
}

// failingInOnePass reads, from a backend that can, the spans (with attributes and events) and
// the error logs of every trace with an error span in window w, in one pass each, without a
// list of their ids. ok is false when the backend cannot, when the question is not over the
// present (asOf) or one invocation, or when either read was cut: the caller then reads the
// window's error spans and their traces by lists of ids.
func (e *Engine) failingInOnePass(ctx context.Context, w telemetry.Window, asOf int64, invocation string) (spans map[string][]telemetry.SpanRow, logs map[string][]telemetry.LogRow, scanned int64, ok bool, err error) {
	c, can := capability[telemetry.FailingTraceScanner](e, invocation)
	if !can || asOf != 0 {
		return nil, nil, 0, false, nil
	}
	var lb telemetry.LogBatch
	var lbErr error
	logsRead := make(chan struct{})
	go func() {
		defer close(logsRead)
		lb, lbErr = c.ScanFailingTraceLogs(ctx, telemetry.FailingScan{Window: w, Limit: e.limits.MaxScanRows, Fields: telemetry.FieldAttributes})
	}()
	sb, err := c.ScanFailingTraceSpans(ctx, telemetry.FailingScan{Window: w, Limit: e.limits.MaxScanRows, Fields: telemetry.FieldAttributes | telemetry.FieldEvents, RootAndErrorAttributes: true})
	<-logsRead
	if err == nil {
		err = lbErr
	}
	if err != nil || sb.Limited || lb.Limited {
		return nil, nil, 0, false, err
	}
	spans = map[string][]telemetry.SpanRow{}
	for _, s := range sb.Spans {
		spans[s.TraceID] = append(spans[s.TraceID], s)
	}
	logs = map[string][]telemetry.LogRow{}
	for _, l := range lb.Logs {
		logs[l.TraceID] = append(logs[l.TraceID], l)
	}
	return spans, logs, sb.Scanned, true, nil
}

// failingTraces reads the spans (with attributes and events) and the error logs of the traces
// named, by lists of ids.
func (e *Engine) failingTraces(ctx context.Context, failing []string, asOf int64) (map[string][]telemetry.SpanRow, map[string][]telemetry.LogRow, bool, int64, error) {
	spans, lim, n, err := e.traceSpans(ctx, failing, false, asOf, telemetry.FieldAttributes|telemetry.FieldEvents)
	if err != nil {
		return nil, nil, false, 0, err
	}
	logs, lim2, err := e.traceLogs(ctx, failing, asOf)
	if err != nil {
		return nil, nil, false, 0, err
	}
	return spans, logs, lim || lim2, n, nil
}

// traceRoots returns the run of each trace that has a root span.
func (e *Engine) traceRoots(ctx context.Context, traces []string, asOf int64) (map[string]telemetry.RunOfTrace, error) {
	out := map[string]telemetry.RunOfTrace{}
	for i := 0; i < len(traces); i += traceChunk {
		chunk := traces[i:min(len(traces), i+traceChunk)]
		b, err := e.scanSpans(ctx, telemetry.SpanScan{TraceIDs: chunk, RootsOnly: true, AsOf: asOf, Fields: telemetry.FieldAttributes})
		if err != nil {
			return nil, err
		}
		for _, s := range b.Spans {
			if _, ok := out[s.TraceID]; !ok {
				out[s.TraceID] = telemetry.TraceRun(e.conv, []telemetry.SpanRow{s})
			}
		}
	}
	return out, nil
}

// Errors implements Source: the window's error occurrences grouped by origin service, run
// domain and message fingerprint, most recent group first — the answer assembled from the
// window's OccurrenceIndex.
func (e *Engine) Errors(ctx context.Context, q telemetry.ErrorsQuery) (telemetry.ErrorReport, error) {
	idx, err := e.Occurrences(ctx, q)
	if err != nil {
		return telemetry.ErrorReport{}, err
	}
	return idx.Report(), nil
}

// Occurrences is the window's OccurrenceIndex: the backend's (OccurrenceIndexer) when it
// answers, else computed from scans — the reference every backend's index is held to.
func (e *Engine) Occurrences(ctx context.Context, q telemetry.ErrorsQuery) (telemetry.OccurrenceIndex, error) {
	if err := telemetry.CheckDomain(q.Domain, e.conv.DomainNames()); err != nil {
		return telemetry.OccurrenceIndex{}, err
	}
	if c, ok := capability[telemetry.OccurrenceIndexer](e, q.Invocation); ok {
		idx, handled, err := c.IndexOccurrences(ctx, q, e.Ask())
		if err != nil || handled {
			return idx, err
		}
	}
	// The occurrences are the engine's one rule (docs/semantics.md R7–R12), computed over the
	// window's failing traces.
	set, err := e.occurrences(ctx, q.Window, q.AsOf, q.Invocation)
	if err != nil {
		return telemetry.OccurrenceIndex{}, err
	}
	idx := telemetry.IndexOccurrences(set.list, q.Service, q.Domain)
	idx.Scan = windowScan(q.Window)
	idx.Scan.Scanned, idx.Scan.Limited = set.scanned, set.limited
	return idx, nil
}

// SampleSpans implements Source: the spans named, as recorded (attributes and events), at
// most one per reference; a span that is not stored is left out. A span whose own events hold
// no exception stack carries, as an exception event of its own, the stack its cause was
// recorded with elsewhere in its trace (CauseStack), so its location can be read off it.
func (e *Engine) SampleSpans(ctx context.Context, refs []telemetry.SpanRef) ([]telemetry.SpanRow, error) {
	want := make(map[telemetry.SpanRef]bool, len(refs))
	traces := make([]string, 0, len(refs))
	for _, r := range refs {
		want[r] = true
		traces = append(traces, r.TraceID)
	}
	traces = sortedUnique(traces)
	byTrace, _, _, err := e.traceSpans(ctx, traces, false, 0, telemetry.FieldAttributes|telemetry.FieldEvents)
	if err != nil {
		return nil, err
	}
	logs, _, err := e.traceLogs(ctx, traces, 0)
	if err != nil {
		return nil, err
	}
	var out []telemetry.SpanRow
	for _, t := range traces {
		spans := byTrace[t]
		for i := range spans {
			k := telemetry.SpanRef{TraceID: spans[i].TraceID, SpanID: spans[i].SpanID}
			if !want[k] {
				continue
			}
			s := spans[i]
			if telemetry.StackOf(s.Events) == "" {
				if st := telemetry.CauseStack(spans, logs[t], i); st != "" {
					s.Events = append(slices.Clip(s.Events), telemetry.SpanEvent{TimeNs: s.EndNs(), Name: "exception",
						Attributes: conventions.Attributes{"exception.stacktrace": st}})
				}
			}
			out = append(out, s)
			delete(want, k)
		}
	}
	return out, nil
}

// sortedUnique sorts s and drops duplicates and empty strings.
func sortedUnique(s []string) []string {
	slices.Sort(s)
	s = slices.Compact(s)
	if len(s) > 0 && s[0] == "" {
		s = s[1:]
	}
	return s
}
