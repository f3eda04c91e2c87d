package engine

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"github.com/runlens/runlens/internal/telemetry"
)

// Invocation implements Source.
func (e *Engine) Invocation(ctx context.Context, q telemetry.InvocationQuery) (telemetry.InvocationReport, error) {
	var r telemetry.InvocationReport
	spans, err := e.scanSpans(ctx, telemetry.SpanScan{Window: q.Window, Invocation: q.ID})
	if err != nil {
		return r, err
	}
	logs, err := e.scanLogs(ctx, telemetry.LogScan{Window: q.Window, Invocation: q.ID})
	if err != nil {
		return r, err
	}
	r.Limited = spans.Limited || logs.Limited
	r.Spans = int64(len(spans.Spans))
	services := map[string]bool{}
	for i := range spans.Spans {
		services[telemetry.ServiceOf(spans.Spans[i].Service)] = true
	}
	for i := range logs.Logs {
		l := &logs.Logs[i]
		services[telemetry.ServiceOf(l.Service)] = true
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
	r.Services = telemetry.Keys(services)
	occ, err := e.occurrences(ctx, q.Window, 0, q.ID)
	if err != nil {
		return r, err
	}
	r.Limited = r.Limited || occ.limited
	r.Errors = telemetry.GroupOccurrences(occ.list, "", "")
	if n := cmp.Or(q.MaxGroups, 5); len(r.Errors.Groups) > n {
		r.Errors.Groups = r.Errors.Groups[:n]
	}
	entries, lim, err := e.entrySpans(ctx, spans.Spans)
	if err != nil {
		return r, err
	}
	r.Limited = r.Limited || lim
	slices.SortStableFunc(entries, func(a, b telemetry.SpanRow) int {
		return cmp.Or(cmp.Compare(b.DurationNs, a.DurationNs), cmp.Compare(a.Name, b.Name), cmp.Compare(a.SpanID, b.SpanID))
	})
	for _, s := range entries[:min(len(entries), cmp.Or(q.MaxSlowest, 5))] {
		r.Slowest = append(r.Slowest, telemetry.SlowSpan{Name: s.Name, Service: telemetry.ServiceOf(s.Service), DurationNs: s.DurationNs, TraceID: s.TraceID})
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
