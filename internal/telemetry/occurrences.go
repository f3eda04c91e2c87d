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

// OccurrenceGroup is one error group's facts (docs/semantics.md R7–R12), from which
// OccurrenceIndex.Report assembles its ErrorGroup.
type OccurrenceGroup struct {
	Service, Domain, Fingerprint string
	// Count counts its occurrences, Handled those whose run's verdict is ok (R8).
	Count, Handled int64
	// FirstNs and LastNs are the times of its oldest and newest occurrence.
	FirstNs, LastNs int64
	// EntryServices are the services where its runs entered other than Service (R12), in any
	// order, repeats allowed.
	EntryServices []string
	// Newest holds its occurrences that decide its sample message (the newest), exception type,
	// sample span and related ids, newest first (CompareOccurrences), until they are settled
	// (Settled) or the occurrences end; it may hold others between them, which change nothing.
	// Empty for a group whose fields the question does not need (ErrorsQuery.Settle). Their
	// Decisive, Handled and EntryService are not read (the group's counts say those).
	Newest []Occurrence
}

// OccurrenceIndex is a window's error groups after a question's filters, in the order their
// newest occurrences are met (CompareOccurrences; ties in the order the occurrences were
// listed): the facts an errors answer is assembled from, by Report.
type OccurrenceIndex struct {
	Groups []OccurrenceGroup
	Scan   Scan
}

// CompareOccurrences orders occurrences newest first, then by trace and origin span id.
func CompareOccurrences(a, b *Occurrence) int {
	return cmp.Or(cmp.Compare(b.TimeNs, a.TimeNs), cmp.Compare(a.TraceID, b.TraceID), cmp.Compare(a.OriginSpanID, b.OriginSpanID))
}

// CompareGroups orders error groups as an answer lists them: most recent first (by
// millisecond), then by count, then by fingerprint.
func CompareGroups(lastA, countA int64, fpA string, lastB, countB int64, fpB string) int {
	return cmp.Or(cmp.Compare(lastB, lastA), cmp.Compare(countB, countA), cmp.Compare(fpA, fpB))
}

// IndexOccurrences indexes occurrences by service, domain and fingerprint after the service
// and domain filters: the reference every backend's index is held to. Each group keeps the
// newest occurrences that settle it.
func IndexOccurrences(list []Occurrence, service, domain string) OccurrenceIndex {
	// The filters first, then a stable sort of pointers: a day's occurrences are tens of
	// thousands, and moving the structs themselves dominated the grouping.
	occ := make([]*Occurrence, 0, len(list))
	for i := range list {
		if o := &list[i]; o.MatchesService(service) && (domain == "" || o.Domain == domain) {
			occ = append(occ, o)
		}
	}
	slices.SortStableFunc(occ, CompareOccurrences)
	var idx OccurrenceIndex
	index := map[[3]string]int{}
	var settle []settling
	for _, o := range occ {
		k := [3]string{o.Service, o.Domain, o.Fingerprint}
		i, ok := index[k]
		if !ok {
			i = len(idx.Groups)
			index[k] = i
			idx.Groups = append(idx.Groups, OccurrenceGroup{Service: o.Service, Domain: o.Domain, Fingerprint: o.Fingerprint, LastNs: o.TimeNs})
			settle = append(settle, settling{})
		}
		g := &idx.Groups[i]
		g.Count++
		if o.Handled {
			g.Handled++
		}
		if es := o.EntryService; es != "" && es != o.Service && !slices.Contains(g.EntryServices, es) {
			g.EntryServices = append(g.EntryServices, es)
		}
		g.FirstNs = o.TimeNs
		if settle[i].add(o) {
			g.Newest = append(g.Newest, *o)
		}
	}
	return idx
}

// settling follows what a group's newest occurrences have settled: its sample span, its
// exception type and its related ids (MaxRelated runs and traces).
type settling struct {
	runs, traces    []string
	seen, span, typ bool
	done            bool
}

// add takes the group's next occurrence (newest first) and reports whether it decides
// anything: the sample (the first), the sample span, the exception type or a related id.
func (s *settling) add(o *Occurrence) bool {
	if s.done {
		return false
	}
	decides := !s.seen
	s.seen = true
	if !s.span && o.OriginSpanID != "" {
		s.span, decides = true, true
	}
	if !s.typ && o.ExceptionType != "" {
		s.typ, decides = true, true
	}
	if o.RunID != "" && !slices.Contains(s.runs, o.RunID) && len(s.runs) < MaxRelated {
		s.runs, decides = append(s.runs, o.RunID), true
	}
	if o.TraceID != "" && !slices.Contains(s.traces, o.TraceID) && len(s.traces) < MaxRelated {
		s.traces, decides = append(s.traces, o.TraceID), true
	}
	s.done = s.span && s.typ && len(s.runs) == MaxRelated && len(s.traces) == MaxRelated
	return decides
}

// Settled reports whether g's newest occurrences settle its sample, exception type and
// related ids, so that older ones cannot change them.
func (g *OccurrenceGroup) Settled() bool {
	var s settling
	for i := range g.Newest {
		s.add(&g.Newest[i])
	}
	return s.done
}

// Report assembles the errors answer from the index (docs/semantics.md R7–R12): each group's
// sample is the message of its newest occurrence, its exception type the newest one given,
// its related ids the newest distinct ones, its sample span the newest origin; the groups
// listed by CompareGroups, ties in the index's order.
func (idx OccurrenceIndex) Report() ErrorReport {
	rep := ErrorReport{Scan: idx.Scan}
	for _, og := range idx.Groups {
		rep.Events += og.Count
		g := ErrorGroup{
			Service: og.Service, Domain: og.Domain, Fingerprint: og.Fingerprint, Count: og.Count, Handled: og.Handled,
			FirstSeenMs: NsToMs(og.FirstNs), LastSeenMs: NsToMs(og.LastNs),
			EntryServices: FirstEntryServices(slices.Clone(og.EntryServices)),
		}
		for i := range og.Newest {
			o := &og.Newest[i]
			if i == 0 {
				g.SampleMessage = o.Message
			}
			if g.SampleSpanID == "" && o.OriginSpanID != "" {
				g.SampleTraceID, g.SampleSpanID = o.TraceID, o.OriginSpanID
			}
			g.ExceptionType = cmp.Or(g.ExceptionType, o.ExceptionType)
			if o.RunID != "" && !slices.Contains(g.RunIDs, o.RunID) && len(g.RunIDs) < MaxRelated {
				g.RunIDs = append(g.RunIDs, o.RunID)
			}
			if o.TraceID != "" && !slices.Contains(g.TraceIDs, o.TraceID) && len(g.TraceIDs) < MaxRelated {
				g.TraceIDs = append(g.TraceIDs, o.TraceID)
			}
		}
		rep.Groups = append(rep.Groups, g)
	}
	slices.SortStableFunc(rep.Groups, func(a, b ErrorGroup) int {
		return CompareGroups(a.LastSeenMs, a.Count, a.Fingerprint, b.LastSeenMs, b.Count, b.Fingerprint)
	})
	return rep
}

// GroupOccurrences groups occurrences by service, domain and fingerprint after the service and
// domain filters into an errors answer: IndexOccurrences' index, reported.
func GroupOccurrences(list []Occurrence, service, domain string) ErrorReport {
	return IndexOccurrences(list, service, domain).Report()
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
