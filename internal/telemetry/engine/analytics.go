package engine

import (
	"context"

	"github.com/runlens/runlens/internal/telemetry"
)

// LastJob implements Source: the newest job execution in the window matching the filters, and
// the status of the same job's execution before it, assembled from their facts.
func (e *Engine) LastJob(ctx context.Context, q telemetry.JobQuery) (telemetry.JobResult, error) {
	f, err := e.JobFacts(ctx, q)
	if err != nil {
		return telemetry.JobResult{}, err
	}
	return f.Result(e.conv, q, e.limits.MaxHints), nil
}

// JobFacts are the facts of a last-job question: the backend's (JobIndexer) when it answers,
// else found in a scan of the window's job spans — the reference every backend's facts are
// held to.
func (e *Engine) JobFacts(ctx context.Context, q telemetry.JobQuery) (telemetry.JobFacts, error) {
	if c, ok := capability[telemetry.JobIndexer](e); ok {
		f, handled, err := c.IndexJobs(ctx, q, e.Ask())
		if err != nil || handled {
			return f, err
		}
	}
	if len(e.conv.JobKeys.IDKeys) == 0 {
		return telemetry.JobFacts{}, nil
	}
	b, err := e.scanSpans(ctx, telemetry.SpanScan{Window: q.Window, Service: q.Service, AttrKeys: e.conv.JobKeys.IDKeys, Fields: telemetry.FieldAttributes | telemetry.FieldEvents})
	if err != nil {
		return telemetry.JobFacts{}, err
	}
	return telemetry.JobFactsOf(e.conv, b.Spans, q), nil
}

// ServicePerformance implements Source: latency and errors over the service's entry spans
// (with an operation: over that operation's spans, entry or not), assembled from their
// duration facts; when the operation matched nothing, the service's entry operations are
// named instead.
func (e *Engine) ServicePerformance(ctx context.Context, q telemetry.PerformanceQuery) (telemetry.Performance, error) {
	q = q.WithDefaults()
	dq := telemetry.DurationQuery{Window: q.Window, Service: q.Service, Operation: q.Operation, Invocation: q.Invocation}
	d, entries, err := e.durations(ctx, dq, true)
	if err != nil {
		return telemetry.Performance{}, err
	}
	p := d.Performance(q)
	if q.Operation != "" && d.All.Count == 0 {
		if entries == nil {
			dq.Operation = ""
			all, _, err := e.durations(ctx, dq, false)
			if err != nil {
				return telemetry.Performance{}, err
			}
			entries = &all
		}
		names := make([]string, 0, len(entries.Operations))
		for _, o := range entries.Operations {
			names = append(names, o.Name)
		}
		p.KnownOperations = telemetry.BoundedSorted(names, e.limits.MaxHints)
		p.Scan.Scanned += entries.Scan.Scanned
		p.Scan.Limited = p.Scan.Limited || entries.Scan.Limited
	}
	return p, nil
}

// Durations are the duration facts of a service's samples: the backend's (DurationIndexer)
// when it answers, else computed from a scan of the window's spans — the reference every
// backend's facts are held to.
func (e *Engine) Durations(ctx context.Context, q telemetry.DurationQuery) (telemetry.Durations, error) {
	d, _, err := e.durations(ctx, q, false)
	return d, err
}

// durations is Durations; with orEntries, when an operation's spans were computed from a scan
// that found none, also the entry spans' facts from the same scan (nil otherwise).
func (e *Engine) durations(ctx context.Context, q telemetry.DurationQuery, orEntries bool) (telemetry.Durations, *telemetry.Durations, error) {
	if c, ok := capability[telemetry.DurationIndexer](e, q.Invocation); ok {
		d, handled, err := c.IndexDurations(ctx, q, e.Ask())
		if err != nil || handled {
			return d, nil, err
		}
	}
	b, err := e.scanSpans(ctx, telemetry.SpanScan{Window: q.Window, Service: q.Service, Invocation: q.Invocation})
	if err != nil {
		return telemetry.Durations{}, nil, err
	}
	var samples []telemetry.SpanRow
	if q.Operation != "" {
		for _, s := range b.Spans {
			if s.Name == q.Operation {
				samples = append(samples, s)
			}
		}
	}
	var entries *telemetry.Durations
	if q.Operation == "" || (orEntries && len(samples) == 0) {
		spans, lim, err := e.entrySpans(ctx, b.Spans)
		if err != nil {
			return telemetry.Durations{}, nil, err
		}
		if q.Operation == "" {
			samples, b.Limited = spans, b.Limited || lim
		} else {
			// The same scan: its rows are counted once, in the operation's facts.
			ed := telemetry.DurationsOf(spans)
			ed.Scan = windowScan(q.Window)
			ed.Scan.Limited = b.Limited || lim
			entries = &ed
		}
	}
	d := telemetry.DurationsOf(samples)
	d.Scan = windowScan(q.Window)
	d.Scan.Scanned, d.Scan.Limited = b.Scanned, b.Limited
	return d, entries, nil
}

// entrySpans keeps the entry spans among the window's spans, by ShapeTrace's rule: a span is
// not an entry when a span carrying its parent's id belongs to its service. Parents among the
// spans themselves answer most; the traces of the others are fetched.
func (e *Engine) entrySpans(ctx context.Context, spans []telemetry.SpanRow) ([]telemetry.SpanRow, bool, error) {
	// (trace, span id, service) of every known span: of the window, then of fetched traces.
	known := make(map[[3]string]bool, len(spans))
	for _, s := range spans {
		known[[3]string{s.TraceID, s.SpanID, s.Service}] = true
	}
	hasParent := func(s *telemetry.SpanRow) bool {
		return s.ParentSpanID != "" && s.ParentSpanID != s.SpanID
	}
	var unknown []string
	for i := range spans {
		s := &spans[i]
		if !telemetry.IsEntryKind(s.Kind) && hasParent(s) && !known[[3]string{s.TraceID, s.ParentSpanID, s.Service}] {
			unknown = append(unknown, s.TraceID)
		}
	}
	limited := false
	if len(unknown) > 0 {
		traces, lim, _, err := e.traceSpans(ctx, sortedUnique(unknown), false, 0, 0)
		if err != nil {
			return nil, false, err
		}
		limited = lim
		for t, ss := range traces {
			for _, s := range ss {
				known[[3]string{t, s.SpanID, s.Service}] = true
			}
		}
	}
	out := make([]telemetry.SpanRow, 0, len(spans))
	for i := range spans {
		s := &spans[i]
		if telemetry.IsEntryKind(s.Kind) || !hasParent(s) || !known[[3]string{s.TraceID, s.ParentSpanID, s.Service}] {
			out = append(out, *s)
		}
	}
	return out, limited, nil
}

// DBOperations implements Source: the window's database operations (one system and one
// normalized statement each), by total time, assembled from their facts.
func (e *Engine) DBOperations(ctx context.Context, q telemetry.DBQuery) (telemetry.DBReport, error) {
	q = q.WithDefaults()
	d, err := e.DBFacts(ctx, q)
	if err != nil {
		return telemetry.DBReport{}, err
	}
	return d.Report(q, e.limits.MaxHints), nil
}

// DBFacts are the window's database operations: the backend's (DBIndexer) when it answers,
// else computed from a scan of the window's database spans — the reference every backend's
// facts are held to.
func (e *Engine) DBFacts(ctx context.Context, q telemetry.DBQuery) (telemetry.DBOperations, error) {
	if c, ok := capability[telemetry.DBIndexer](e); ok {
		d, handled, err := c.IndexDB(ctx, q, e.Ask())
		if err != nil || handled {
			return d, err
		}
	}
	b, err := e.scanSpans(ctx, telemetry.SpanScan{Window: q.Window, Service: q.Service, AttrKeys: telemetry.DBAttrKeys(e.conv), Fields: telemetry.FieldAttributes})
	if err != nil {
		return telemetry.DBOperations{}, err
	}
	var ops []telemetry.DBSample
	for i := range b.Spans {
		s := &b.Spans[i]
		op, ok := telemetry.DBOperationOf(e.conv, s)
		if !ok {
			continue
		}
		ops = append(ops, telemetry.DBSample{Op: op, DurationNs: s.DurationNs, Error: s.IsError()})
	}
	d := telemetry.DBOperationsOf(q, ops)
	d.Scan = windowScan(q.Window)
	d.Scan.Scanned, d.Scan.Limited = b.Scanned, b.Limited
	return d, nil
}
