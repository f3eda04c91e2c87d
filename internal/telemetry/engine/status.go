package engine

import (
	"context"

	"github.com/runlens/runlens/internal/telemetry"
)

// Status implements Source: the window's activity (Activity) with its error occurrences as
// Errors answers them (docs/semantics.md R7–R12), both read at once and assembled here.
func (e *Engine) Status(ctx context.Context, q telemetry.StatusQuery) (telemetry.Status, error) {
	occCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var rep telemetry.ErrorReport
	var repErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		rep, repErr = e.Errors(occCtx, telemetry.ErrorsQuery{Window: q.Window, Service: q.Service, Invocation: q.Invocation, Settle: 1})
	}()
	act, err := e.Activity(ctx, q)
	if err != nil {
		cancel()
	}
	<-done
	if err != nil {
		return telemetry.Status{}, err
	}
	if repErr != nil {
		return telemetry.Status{}, repErr
	}
	return e.status(q, act, rep), nil
}

// status assembles a status answer from the window's activity and its error occurrences (rep):
// the total and its handled share, each service's count of what started there (R12), the
// services listed busiest first, and one entry per configured domain in configuration order.
func (e *Engine) status(q telemetry.StatusQuery, act telemetry.Activity, rep telemetry.ErrorReport) telemetry.Status {
	st := telemetry.Status{Spans: act.Spans, Logs: act.Logs, NewestSpanMs: act.NewestSpanMs, Errors: rep.Events, Scan: windowScan(q.Window)}
	st.Scan.Scanned = act.Scan.Scanned
	st.Scan.Limited = act.Scan.Limited || rep.Scan.Limited
	per := act.Services
	if per == nil {
		per = telemetry.ServiceTallies{}
	}
	for _, g := range rep.Groups {
		st.HandledErrors += g.Handled
		if a := per[g.Service]; a != nil {
			a.Errors += g.Count
		}
	}
	per.List(&st, q.MaxServices)
	for _, name := range e.conv.DomainNames() {
		d := act.Domains[name]
		d.Domain = name
		st.Domains = append(st.Domains, d)
	}
	return st
}

// Activity is the window's activity without its error occurrences: the backend's
// (ActivityCounter) when it answers, else computed from scans — the reference every backend's
// fact is held to.
func (e *Engine) Activity(ctx context.Context, q telemetry.StatusQuery) (telemetry.Activity, error) {
	if c, ok := capability[telemetry.ActivityCounter](e, q.Invocation); ok {
		act, handled, err := c.CountActivity(ctx, q, e.Ask())
		if err != nil || handled {
			return act, err
		}
	}
	act := telemetry.Activity{Services: telemetry.ServiceTallies{}, Scan: windowScan(q.Window)}
	spans, err := e.scanSpans(ctx, telemetry.SpanScan{Window: q.Window, Service: q.Service, Invocation: q.Invocation})
	if err != nil {
		return telemetry.Activity{}, err
	}
	logs, err := e.scanLogs(ctx, telemetry.LogScan{Window: q.Window, Service: q.Service, Invocation: q.Invocation})
	if err != nil {
		return telemetry.Activity{}, err
	}
	act.Scan.Scanned = spans.Scanned + logs.Scanned
	act.Scan.Limited = spans.Limited || logs.Limited
	for i := range spans.Spans {
		s := &spans.Spans[i]
		act.Spans++
		act.NewestSpanMs = max(act.NewestSpanMs, telemetry.NsToMs(s.StartNs))
		act.Services.Touch(telemetry.ServiceOf(s.Service), telemetry.NsToMs(s.StartNs)).Spans++
	}
	for i := range logs.Logs {
		act.Logs++
		act.Services.Touch(telemetry.ServiceOf(logs.Logs[i].Service), telemetry.NsToMs(logs.Logs[i].TimeNs))
	}
	runs, limited, err := e.windowRuns(ctx, q.Window, q.Service, 0, q.Invocation)
	if err != nil {
		return telemetry.Activity{}, err
	}
	act.Scan.Limited = act.Scan.Limited || limited
	act.Domains = map[string]telemetry.DomainActivity{}
	for _, r := range runs {
		d := act.Domains[r.Domain]
		d.Domain = r.Domain
		d.SeenCount++
		if r.Status == telemetry.StatusError {
			d.ErrorCount++
		}
		d.MostRecentMs = max(d.MostRecentMs, r.StartMs)
		act.Domains[r.Domain] = d
	}
	return act, nil
}
