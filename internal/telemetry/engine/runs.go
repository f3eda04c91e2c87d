package engine

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/runlens/runlens/internal/telemetry"
)

// windowRuns returns every run whose root span started in the window (of one service, when
// set), newest first, with its normalized status.
func (e *Engine) windowRuns(ctx context.Context, w telemetry.Window, service string, asOf int64, invocation string) ([]telemetry.RunSummary, bool, error) {
	roots, err := e.scanSpans(ctx, telemetry.SpanScan{Window: w, Service: service, RootsOnly: true, AsOf: asOf, Fields: telemetry.FieldAttributes, Invocation: invocation})
	if err != nil {
		return nil, false, err
	}
	traces := make([]string, 0, len(roots.Spans))
	for _, r := range roots.Spans {
		traces = append(traces, r.TraceID)
	}
	errored, limited, _, err := e.traceSpans(ctx, sortedUnique(traces), true, asOf, 0)
	if err != nil {
		return nil, false, err
	}
	runs := make([]telemetry.RunSummary, 0, len(roots.Spans))
	for i := range roots.Spans {
		root := &roots.Spans[i]
		r := telemetry.RunFromRoot(e.conv, root)
		r.ErrorCount = int64(len(errored[root.TraceID]))
		runs = append(runs, r)
	}
	telemetry.SortRuns(runs)
	return runs, roots.Limited || limited, nil
}

// Runs implements Source: one page of the window's runs, filtered by domain and normalized
// status before paging. A service filter that finds no run says where the runs holding the
// service's spans entered (docs/semantics.md R12).
func (e *Engine) Runs(ctx context.Context, q telemetry.RunsQuery) (telemetry.RunPage, error) {
	if err := telemetry.CheckDomain(q.Domain, e.conv.DomainNames()); err != nil {
		return telemetry.RunPage{}, err
	}
	q = q.WithDefaults()
	p, err := e.runs(ctx, q)
	if err != nil || q.Service == "" || p.Total > 0 {
		return p, err
	}
	p.EnteredAt, err = e.enteredAt(ctx, q)
	return p, err
}

// enteredAtSample bounds the spans of a service read to find where their runs entered.
const enteredAtSample = 1000

// enteredAt lists, by name and at most MaxRelated, the services other than q.Service where
// the runs holding q.Service's spans of the window entered.
func (e *Engine) enteredAt(ctx context.Context, q telemetry.RunsQuery) ([]string, error) {
	b, err := e.scanSpans(ctx, telemetry.SpanScan{Window: q.Window, Service: q.Service, AsOf: q.AsOf, Invocation: q.Invocation, Limit: enteredAtSample})
	if err != nil {
		return nil, err
	}
	traces := make([]string, 0, len(b.Spans))
	for _, s := range b.Spans {
		traces = append(traces, s.TraceID)
	}
	roots, err := e.traceRoots(ctx, sortedUnique(traces), q.AsOf)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, r := range roots {
		if r.Service != q.Service {
			out = append(out, r.Service)
		}
	}
	return telemetry.FirstEntryServices(out), nil
}

func (e *Engine) runs(ctx context.Context, q telemetry.RunsQuery) (telemetry.RunPage, error) {
	if c, ok := capability[telemetry.RunLister](e, q.Invocation); ok {
		p, handled, err := c.ListRuns(ctx, q, e.Ask())
		if err != nil || handled {
			return p, err
		}
	}
	runs, limited, err := e.windowRuns(ctx, q.Window, q.Service, q.AsOf, q.Invocation)
	if err != nil {
		return telemetry.RunPage{}, err
	}
	var match []telemetry.RunSummary
	for _, r := range runs {
		if (q.Domain == "" || r.Domain == q.Domain) && (q.Status == "" || r.Status == q.Status) {
			match = append(match, r)
		}
	}
	page := telemetry.RunPage{Total: len(match), Scan: windowScan(q.Window)}
	page.Scan.Limited = limited
	page.Scan.Scanned = int64(len(runs))
	if q.Offset < len(match) {
		page.Runs = match[q.Offset:min(len(match), q.Offset+q.Limit)]
	}
	traces := make([]string, 0, len(page.Runs))
	for _, r := range page.Runs {
		traces = append(traces, r.TraceID)
	}
	spans, _, _, err := e.traceSpans(ctx, sortedUnique(traces), false, q.AsOf, 0)
	if err != nil {
		return telemetry.RunPage{}, err
	}
	for i := range page.Runs {
		page.Runs[i].SpanCount = int64(len(spans[page.Runs[i].TraceID]))
	}
	return page, nil
}

// Run implements Source: one run by trace id or run id, its spans in start order and its logs
// oldest first, each bounded; SpanTotal is the true span count.
func (e *Engine) Run(ctx context.Context, q telemetry.RunQuery) (telemetry.Run, error) {
	traceID, err := e.resolveRun(ctx, q.ID)
	if err != nil {
		return telemetry.Run{}, err
	}
	maxSpans := cmp.Or(q.MaxSpans, e.limits.MaxRunSpans)
	fields := telemetry.FieldEvents | telemetry.FieldAttributes
	b, err := e.b.ScanSpans(ctx, telemetry.SpanScan{TraceIDs: []string{traceID}, Limit: maxSpans, Oldest: true, Fields: fields})
	if err != nil {
		return telemetry.Run{}, wrapUnreachable(err)
	}
	if len(b.Spans) == 0 {
		return telemetry.Run{}, fmt.Errorf("%w: %s", telemetry.ErrRunNotFound, q.ID)
	}
	logs, err := e.b.ScanLogs(ctx, telemetry.LogScan{TraceIDs: []string{traceID}, Limit: cmp.Or(q.MaxLogs, e.limits.MaxRunLogs), Oldest: true, Fields: telemetry.FieldAttributes})
	if err != nil {
		return telemetry.Run{}, wrapUnreachable(err)
	}
	run := telemetry.Run{Limited: b.Limited || logs.Limited, SpanTotal: b.Matched}
	if !b.Limited {
		run.SpanTotal = int64(len(b.Spans))
	}
	var root *telemetry.SpanRow
	var errorSpans int64
	for i := range b.Spans {
		s := &b.Spans[i]
		if s.IsRoot() && (root == nil || s.StartNs < root.StartNs) {
			root = s
		}
		if s.IsError() {
			errorSpans++
		}
	}
	if root == nil { // the root never arrived: the earliest span heads the run
		root = &b.Spans[0]
		for i := range b.Spans {
			if b.Spans[i].StartNs < root.StartNs {
				root = &b.Spans[i]
			}
		}
	}
	run.RunSummary = telemetry.RunFromRoot(e.conv, root)
	run.ErrorCount = errorSpans
	if !root.IsRoot() {
		run.ID, run.Domain = traceID, e.conv.DefaultDomain
	}
	run.SpanCount = run.SpanTotal
	var errLogs []telemetry.LogRow
	for i := range logs.Logs {
		l := &logs.Logs[i]
		run.Logs = append(run.Logs, telemetry.LogRecord{
			TimeMs: telemetry.NsToMs(l.TimeNs), Severity: l.SeverityText, Message: l.Body,
			TraceID: l.TraceID, SpanID: l.SpanID, IsError: l.IsError(),
		})
		if l.IsError() {
			errLogs = append(errLogs, *l)
		}
	}
	if occ := telemetry.TraceOccurrences(e.conv, b.Spans, errLogs); len(occ) > 0 {
		// The cause that failed the run (R5) leads; else the first error.
		i := max(0, slices.IndexFunc(occ, func(o telemetry.Occurrence) bool { return o.Decisive }))
		run.ErrorMessage = occ[i].Message
	}
	slices.SortStableFunc(b.Spans, func(x, y telemetry.SpanRow) int {
		return cmp.Or(cmp.Compare(x.StartNs, y.StartNs), cmp.Compare(x.SpanID, y.SpanID))
	})
	for i := range b.Spans {
		s := &b.Spans[i]
		sp := telemetry.Span{
			TraceID: s.TraceID, SpanID: s.SpanID, ParentSpanID: s.ParentSpanID, Name: s.Name,
			Service: telemetry.ServiceOf(s.Service), Status: telemetry.StatusOK, StartNs: s.StartNs, DurationNs: s.DurationNs,
		}
		if s.IsError() {
			sp.Status = telemetry.StatusError
			sp.ErrorMessage, sp.ExceptionType = telemetry.SpanError(s)
			failure := *s
			sp.Failure = &failure
		}
		if q.WithAttributes {
			sp.Attributes, sp.Events = s.Attributes, s.Events
		}
		run.Spans = append(run.Spans, sp)
	}
	return run, nil
}

// resolveRun maps a run id or trace id to the trace to read.
func (e *Engine) resolveRun(ctx context.Context, id string) (string, error) {
	b, err := e.b.ScanSpans(ctx, telemetry.SpanScan{TraceIDs: []string{id}, Limit: 1})
	if err != nil {
		return "", wrapUnreachable(err)
	}
	if len(b.Spans) > 0 {
		return id, nil
	}
	if c, ok := capability[telemetry.RunResolver](e); ok {
		t, handled, err := c.ResolveRun(ctx, id, e.Ask())
		if err != nil {
			return "", wrapUnreachable(err)
		}
		if handled {
			if t == "" {
				return "", fmt.Errorf("%w: %s", telemetry.ErrRunNotFound, id)
			}
			return t, nil
		}
	}
	if len(e.conv.ExecutionIDKeys) > 0 {
		// Every root carrying id under some execution-id key, newest first: a newer root whose
		// first execution id is another one must not hide an older run keyed by id.
		b, err = e.scanSpans(ctx, telemetry.SpanScan{RootsOnly: true, AttrKeys: e.conv.ExecutionIDKeys, AttrValue: id, Fields: telemetry.FieldAttributes})
		if err != nil {
			return "", err
		}
		for i := range b.Spans {
			if e.conv.ExecutionID(b.Spans[i].Attributes) == id {
				return b.Spans[i].TraceID, nil
			}
		}
	}
	return "", fmt.Errorf("%w: %s", telemetry.ErrRunNotFound, id)
}
