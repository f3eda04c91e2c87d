package engine

import (
	"context"

	"github.com/runlens/runlens/internal/telemetry"
)

// Status implements Source: counts of the window, error occurrences, runs per domain and
// activity per service.
func (e *Engine) Status(ctx context.Context, q telemetry.StatusQuery) (telemetry.Status, error) {
	if c, ok := capability[telemetry.StatusAggregator](e, q.Invocation); ok {
		// The backend tallies activity; the error occurrences and their handled share are the
		// engine's one rule (docs/semantics.md R7, R8), over the failing traces: both at once,
		// the occurrences given up if the backend declines.
		occCtx, cancel := context.WithCancel(ctx)
		defer cancel()
		var rep telemetry.ErrorReport
		var repErr error
		done := make(chan struct{})
		go func() {
			defer close(done)
			rep, repErr = e.Errors(occCtx, telemetry.ErrorsQuery{Window: q.Window, Service: q.Service, Invocation: q.Invocation, Settle: 1})
		}()
		st, handled, err := c.AggregateStatus(ctx, q, e.ask())
		if err != nil || !handled {
			cancel()
		}
		<-done
		if err != nil {
			return st, err
		}
		if handled {
			if repErr != nil {
				return telemetry.Status{}, repErr
			}
			return withOccurrences(st, rep), nil
		}
	}
	st := telemetry.Status{Scan: windowScan(q.Window)}
	spans, err := e.scanSpans(ctx, telemetry.SpanScan{Window: q.Window, Service: q.Service, Invocation: q.Invocation})
	if err != nil {
		return telemetry.Status{}, err
	}
	logs, err := e.scanLogs(ctx, telemetry.LogScan{Window: q.Window, Service: q.Service, Invocation: q.Invocation})
	if err != nil {
		return telemetry.Status{}, err
	}
	st.Scan.Scanned = spans.Scanned + logs.Scanned
	st.Scan.Limited = spans.Limited || logs.Limited
	per := telemetry.ServiceTallies{}
	for i := range spans.Spans {
		s := &spans.Spans[i]
		st.Spans++
		st.NewestSpanMs = max(st.NewestSpanMs, telemetry.NsToMs(s.StartNs))
		per.Touch(telemetry.ServiceOf(s.Service), telemetry.NsToMs(s.StartNs)).Spans++
	}
	for i := range logs.Logs {
		st.Logs++
		per.Touch(telemetry.ServiceOf(logs.Logs[i].Service), telemetry.NsToMs(logs.Logs[i].TimeNs))
	}
	occ, err := e.occurrences(ctx, q.Window, 0, q.Invocation)
	if err != nil {
		return telemetry.Status{}, err
	}
	st.Scan.Limited = st.Scan.Limited || occ.limited
	for i := range occ.list {
		o := &occ.list[i]
		if !o.MatchesService(q.Service) {
			continue
		}
		st.Errors++
		if o.Handled {
			st.HandledErrors++
		}
		// A service's row counts what started there; an occurrence found through its run's
		// entry service (R12) counts in the total only.
		if q.Service == "" || o.Service == q.Service {
			per.Touch(o.Service, telemetry.NsToMs(o.TimeNs)).Errors++
		}
	}
	per.List(&st, q.MaxServices)
	runs, limited, err := e.windowRuns(ctx, q.Window, q.Service, 0, q.Invocation)
	if err != nil {
		return telemetry.Status{}, err
	}
	st.Scan.Limited = st.Scan.Limited || limited
	byDomain := map[string]*telemetry.DomainActivity{}
	for _, name := range e.conv.DomainNames() {
		st.Domains = append(st.Domains, telemetry.DomainActivity{Domain: name})
	}
	for i := range st.Domains {
		byDomain[st.Domains[i].Domain] = &st.Domains[i]
	}
	for _, r := range runs {
		d := byDomain[r.Domain]
		if d == nil {
			continue
		}
		d.SeenCount++
		if r.Status == telemetry.StatusError {
			d.ErrorCount++
		}
		d.MostRecentMs = max(d.MostRecentMs, r.StartMs)
	}
	return st, nil
}

// withOccurrences replaces a backend's error counts of st with the window's occurrences as
// Errors answered them (rep): the total, the handled share, and each listed service's count (what
// started there).
func withOccurrences(st telemetry.Status, rep telemetry.ErrorReport) telemetry.Status {
	st.Scan.Limited = st.Scan.Limited || rep.Scan.Limited
	st.Errors, st.HandledErrors = rep.Events, 0
	listed := make(map[string]*telemetry.ServiceActivity, len(st.ServiceActivity))
	for i := range st.ServiceActivity {
		st.ServiceActivity[i].Errors = 0
		listed[st.ServiceActivity[i].Service] = &st.ServiceActivity[i]
	}
	for _, g := range rep.Groups {
		st.HandledErrors += g.Handled
		if a := listed[g.Service]; a != nil {
			a.Errors += g.Count
		}
	}
	return st
}
