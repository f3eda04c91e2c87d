package telemetry

import (
	"cmp"
	"context"
	"github.com/runlens/runlens/internal/telemetry/conventions"
	"slices"
)

// occurrenceSet is the error occurrences of a window with what reading them covered.
type occurrenceSet struct {
	list    []Occurrence
	limited bool
	scanned int64
	// erroredTraces are the traces with an error span among those read.
	erroredTraces map[string]bool
}

// occurrences computes the window's error occurrences from scans: the window's error spans,
// their whole traces (to find each failure's origin and run), the traces' error logs, and the
// window's error logs (those outside any failing trace are occurrences of their own).
func (e *Engine) occurrences(ctx context.Context, w Window, asOf int64, invocation string) (occurrenceSet, error) {
	var set occurrenceSet
	// The window's error logs are read beside the spans: neither read waits for the other.
	var errLogs LogBatch
	var errLogsErr error
	logsRead := make(chan struct{})
	go func() {
		defer close(logsRead)
		errLogs, errLogsErr = e.scanLogs(ctx, LogScan{Window: w, ErrorsOnly: true, AsOf: asOf, Fields: FieldAttributes, Invocation: invocation})
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
		errSpans, err := e.scanSpans(ctx, SpanScan{Window: w, ErrorsOnly: true, AsOf: asOf, Invocation: invocation})
		if err != nil {
			return set, err
		}
		set.limited, set.scanned = errSpans.Limited, errSpans.Scanned
		for _, s := range errSpans.Spans {
			traceSet[s.TraceID] = true
		}
		var lim bool
		spans, logs, lim, n, err = e.failingTraces(ctx, sortedUnique(keys(traceSet)), asOf)
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
	for _, t := range sortedUnique(keys(traceSet)) {
		for _, o := range TraceOccurrences(e.conv, spans[t], logs[t]) {
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
		set.list = append(set.list, LogOccurrence(e.conv, l, roots[l.TraceID]))
	}
	return set, nil
}

// failingInOnePass reads, from a backend that can, the spans (with attributes and events) and
// the error logs of every trace with an error span in window w, in one pass each, without a
// list of their ids. ok is false when the backend cannot, when the question is not over the
// present (asOf) or one invocation, or when either read was cut: the caller then reads the
// window's error spans and their traces by lists of ids.
func (e *Engine) failingInOnePass(ctx context.Context, w Window, asOf int64, invocation string) (spans map[string][]SpanRow, logs map[string][]LogRow, scanned int64, ok bool, err error) {
	c, can := capability[FailingTraceScanner](e, invocation)
	if !can || asOf != 0 {
		return nil, nil, 0, false, nil
	}
	var lb LogBatch
	var lbErr error
	logsRead := make(chan struct{})
	go func() {
		defer close(logsRead)
		lb, lbErr = c.ScanFailingTraceLogs(ctx, FailingScan{Window: w, Limit: e.limits.MaxScanRows, Fields: FieldAttributes})
	}()
	sb, err := c.ScanFailingTraceSpans(ctx, FailingScan{Window: w, Limit: e.limits.MaxScanRows, Fields: FieldAttributes | FieldEvents, RootAndErrorAttributes: true})
	<-logsRead
	if err == nil {
		err = lbErr
	}
	if err != nil || sb.Limited || lb.Limited {
		return nil, nil, 0, false, err
	}
	spans = map[string][]SpanRow{}
	for _, s := range sb.Spans {
		spans[s.TraceID] = append(spans[s.TraceID], s)
	}
	logs = map[string][]LogRow{}
	for _, l := range lb.Logs {
		logs[l.TraceID] = append(logs[l.TraceID], l)
	}
	return spans, logs, sb.Scanned, true, nil
}

// failingTraces reads the spans (with attributes and events) and the error logs of the traces
// named, by lists of ids.
func (e *Engine) failingTraces(ctx context.Context, failing []string, asOf int64) (map[string][]SpanRow, map[string][]LogRow, bool, int64, error) {
	spans, lim, n, err := e.traceSpans(ctx, failing, false, asOf, FieldAttributes|FieldEvents)
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
func (e *Engine) traceRoots(ctx context.Context, traces []string, asOf int64) (map[string]RunOfTrace, error) {
	out := map[string]RunOfTrace{}
	for i := 0; i < len(traces); i += traceChunk {
		chunk := traces[i:min(len(traces), i+traceChunk)]
		b, err := e.scanSpans(ctx, SpanScan{TraceIDs: chunk, RootsOnly: true, AsOf: asOf, Fields: FieldAttributes})
		if err != nil {
			return nil, err
		}
		for _, s := range b.Spans {
			if _, ok := out[s.TraceID]; !ok {
				out[s.TraceID] = TraceRun(e.conv, []SpanRow{s})
			}
		}
	}
	return out, nil
}

// Errors implements Source: the window's error occurrences grouped by origin service, run
// domain and message fingerprint, most recent group first.
func (e *Engine) Errors(ctx context.Context, q ErrorsQuery) (ErrorReport, error) {
	if err := checkDomain(q.Domain, e.conv.DomainNames()); err != nil {
		return ErrorReport{}, err
	}
	if c, ok := capability[ErrorAggregator](e, q.Invocation); ok {
		rep, handled, err := c.AggregateOccurrences(ctx, q, e.ask())
		if err != nil || handled {
			return rep, err
		}
	}
	// The occurrences are the engine's one rule (docs/semantics.md R7–R12), computed over the
	// window's failing traces.
	set, err := e.occurrences(ctx, q.Window, q.AsOf, q.Invocation)
	if err != nil {
		return ErrorReport{}, err
	}
	rep := GroupOccurrences(set.list, q.Service, q.Domain)
	rep.Scan = windowScan(q.Window)
	rep.Scan.Scanned, rep.Scan.Limited = set.scanned, set.limited
	return rep, nil
}

// MatchesService reports whether the occurrence answers a service filter (docs/semantics.md
// R12): it started in the service, or in a run that entered there. An empty filter matches.
func (o *Occurrence) MatchesService(service string) bool {
	return service == "" || o.Service == service || o.EntryService == service
}

// GroupOccurrences groups occurrences by service, domain and fingerprint after the service and
// domain filters: groups most recent first (then by count, then fingerprint), each group's
// sample the message of its most recent occurrence, related ids most recent first.
func GroupOccurrences(list []Occurrence, service, domain string) ErrorReport {
	// The filters first, then a stable sort of pointers: a day's occurrences are tens of
	// thousands, and moving the structs themselves dominated the grouping.
	occ := make([]*Occurrence, 0, len(list))
	for i := range list {
		if o := &list[i]; o.MatchesService(service) && (domain == "" || o.Domain == domain) {
			occ = append(occ, o)
		}
	}
	slices.SortStableFunc(occ, func(a, b *Occurrence) int {
		return cmp.Or(cmp.Compare(b.TimeNs, a.TimeNs), cmp.Compare(a.TraceID, b.TraceID), cmp.Compare(a.OriginSpanID, b.OriginSpanID))
	})
	var rep ErrorReport
	index := map[[3]string]int{}
	for _, o := range occ {
		rep.Events++
		k := [3]string{o.Service, o.Domain, o.Fingerprint}
		i, ok := index[k]
		if !ok {
			i = len(rep.Groups)
			index[k] = i
			rep.Groups = append(rep.Groups, ErrorGroup{
				Service: o.Service, Domain: o.Domain, Fingerprint: o.Fingerprint, SampleMessage: o.Message,
				ExceptionType: o.ExceptionType, LastSeenMs: NsToMs(o.TimeNs),
			})
		}
		g := &rep.Groups[i]
		if g.SampleSpanID == "" && o.OriginSpanID != "" {
			g.SampleTraceID, g.SampleSpanID = o.TraceID, o.OriginSpanID
		}
		g.Count++
		if o.Handled {
			g.Handled++
		}
		if es := o.EntryService; es != "" && es != o.Service && !slices.Contains(g.EntryServices, es) {
			g.EntryServices = append(g.EntryServices, es)
		}
		g.FirstSeenMs = NsToMs(o.TimeNs)
		g.ExceptionType = cmp.Or(g.ExceptionType, o.ExceptionType)
		if o.RunID != "" && !slices.Contains(g.RunIDs, o.RunID) && len(g.RunIDs) < MaxRelated {
			g.RunIDs = append(g.RunIDs, o.RunID)
		}
		if o.TraceID != "" && !slices.Contains(g.TraceIDs, o.TraceID) && len(g.TraceIDs) < MaxRelated {
			g.TraceIDs = append(g.TraceIDs, o.TraceID)
		}
	}
	for i := range rep.Groups {
		rep.Groups[i].EntryServices = FirstEntryServices(rep.Groups[i].EntryServices)
	}
	slices.SortStableFunc(rep.Groups, func(a, b ErrorGroup) int {
		return cmp.Or(cmp.Compare(b.LastSeenMs, a.LastSeenMs), cmp.Compare(b.Count, a.Count), cmp.Compare(a.Fingerprint, b.Fingerprint))
	})
	return rep
}

// FirstEntryServices orders a group's entry services (other than its own service) by name and
// keeps the first MaxRelated: a fact any backend can compute from distinct values.
func FirstEntryServices(list []string) []string {
	slices.Sort(list)
	list = slices.Compact(list)
	return list[:min(len(list), MaxRelated):min(len(list), MaxRelated)]
}

// SpanRef names one span.
type SpanRef struct{ TraceID, SpanID string }

// SampleSpans implements Source: the spans named, as recorded (attributes and events), at
// most one per reference; a span that is not stored is left out. A span whose own events hold
// no exception stack carries, as an exception event of its own, the stack its cause was
// recorded with elsewhere in its trace (CauseStack), so its location can be read off it.
func (e *Engine) SampleSpans(ctx context.Context, refs []SpanRef) ([]SpanRow, error) {
	want := make(map[SpanRef]bool, len(refs))
	traces := make([]string, 0, len(refs))
	for _, r := range refs {
		want[r] = true
		traces = append(traces, r.TraceID)
	}
	traces = sortedUnique(traces)
	byTrace, _, _, err := e.traceSpans(ctx, traces, false, 0, FieldAttributes|FieldEvents)
	if err != nil {
		return nil, err
	}
	logs, _, err := e.traceLogs(ctx, traces, 0)
	if err != nil {
		return nil, err
	}
	var out []SpanRow
	for _, t := range traces {
		spans := byTrace[t]
		for i := range spans {
			k := SpanRef{spans[i].TraceID, spans[i].SpanID}
			if !want[k] {
				continue
			}
			s := spans[i]
			if stackOf(s.Events) == "" {
				if st := CauseStack(spans, logs[t], i); st != "" {
					s.Events = append(slices.Clip(s.Events), SpanEvent{TimeNs: s.EndNs(), Name: "exception",
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
