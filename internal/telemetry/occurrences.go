package telemetry

import (
	"cmp"
	"slices"
)

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
