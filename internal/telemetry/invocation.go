package telemetry

import (
	"cmp"
	"context"
	"slices"
	"strings"
)

// InvocationQuery asks what one command invocation's processes sent.
type InvocationQuery struct {
	ID     string
	Window Window
	// MaxGroups, MaxSlowest and MaxRuns bound the answer (defaults 5, 5 and 10).
	MaxGroups, MaxSlowest, MaxRuns int
}

// InvocationReport is what arrived from the processes of one command run.
type InvocationReport struct {
	Spans int64
	// Services are the services that sent spans or logs (sorted).
	Services []string
	// ErrorLogs, WarnLogs and OtherLogs count the log records by severity.
	ErrorLogs, WarnLogs, OtherLogs int64
	// Errors groups the run's error occurrences as get_recent_errors does (bounded).
	Errors ErrorReport
	// Slowest are the slowest entry spans (bounded), slowest first.
	Slowest []SlowSpan
	// RunIDs are the runs the invocation started, newest first (bounded).
	RunIDs []string
	// Limited is true when a scan bound cut what was read.
	Limited bool
}

// SlowSpan is one slow entry span of an invocation.
type SlowSpan struct {
	Name, Service string
	DurationNs    int64
	TraceID       string
}

// Invocation implements Source.
func (e *Engine) Invocation(ctx context.Context, q InvocationQuery) (InvocationReport, error) {
	var r InvocationReport
	spans, err := e.scanSpans(ctx, SpanScan{Window: q.Window, Invocation: q.ID})
	if err != nil {
		return r, err
	}
	logs, err := e.scanLogs(ctx, LogScan{Window: q.Window, Invocation: q.ID})
	if err != nil {
		return r, err
	}
	r.Limited = spans.Limited || logs.Limited
	r.Spans = int64(len(spans.Spans))
	services := map[string]bool{}
	for i := range spans.Spans {
		services[ServiceOf(spans.Spans[i].Service)] = true
	}
	for i := range logs.Logs {
		l := &logs.Logs[i]
		services[ServiceOf(l.Service)] = true
		switch {
		case l.IsError():
			r.ErrorLogs++
		case l.SeverityNumber >= 13 || strings.EqualFold(strings.TrimSpace(l.SeverityText), "warn") ||
			strings.EqualFold(strings.TrimSpace(l.SeverityText), "warning"):
			r.WarnLogs++
		default:
			r.OtherLogs++
		}
	}
	r.Services = keys(services)
	occ, err := e.occurrences(ctx, q.Window, 0, q.ID)
	if err != nil {
		return r, err
	}
	r.Limited = r.Limited || occ.limited
	r.Errors = GroupOccurrences(occ.list, "", "")
	if n := cmp.Or(q.MaxGroups, 5); len(r.Errors.Groups) > n {
		r.Errors.Groups = r.Errors.Groups[:n]
	}
	entries, lim, err := e.entrySpans(ctx, spans.Spans)
	if err != nil {
		return r, err
	}
	r.Limited = r.Limited || lim
	slices.SortStableFunc(entries, func(a, b SpanRow) int {
		return cmp.Or(cmp.Compare(b.DurationNs, a.DurationNs), cmp.Compare(a.Name, b.Name), cmp.Compare(a.SpanID, b.SpanID))
	})
	for _, s := range entries[:min(len(entries), cmp.Or(q.MaxSlowest, 5))] {
		r.Slowest = append(r.Slowest, SlowSpan{Name: s.Name, Service: ServiceOf(s.Service), DurationNs: s.DurationNs, TraceID: s.TraceID})
	}
	runs, lim, err := e.windowRuns(ctx, q.Window, "", 0, q.ID)
	if err != nil {
		return r, err
	}
	r.Limited = r.Limited || lim
	for _, run := range runs {
		if len(r.RunIDs) >= cmp.Or(q.MaxRuns, 10) {
			break
		}
		if !slices.Contains(r.RunIDs, run.ID) {
			r.RunIDs = append(r.RunIDs, run.ID)
		}
	}
	return r, nil
}
