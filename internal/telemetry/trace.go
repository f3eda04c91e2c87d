package telemetry

import (
	"cmp"
	"slices"
	"strings"

	"github.com/runlens/runlens/internal/telemetry/conventions"
)

// SpanShape is what a span is within its trace: the trace-level facts of TELEMETRY.md that no
// single span can tell about itself.
type SpanShape struct {
	// Entry: work enters its service through this span — kind Server or Consumer, or its
	// parent is absent (a root, or a parent that never arrived) or belongs to another service.
	Entry bool
	// Origin: an error span none of whose descendants is an error span — where a failure
	// started. Always false for a span that is not an error.
	Origin bool
}

// IsEntryKind reports whether a span kind alone makes a span an entry span.
func IsEntryKind(kind string) bool { return kind == KindServer || kind == KindConsumer }

// ShapeTrace computes the shape of each span of spans (one trace, or as much of it as is
// known), index for index. A span whose parent id is its own id has no parent. Duplicate span
// ids keep the first occurrence as the target of error marking, but whether a span is an entry
// does not depend on their order: it is not one when any span carrying its parent's id belongs
// to its service. Cycles in corrupt data cannot loop, and error spans that are all below one
// another in a cycle still make one origin (the earliest).
func ShapeTrace(spans []SpanRow) []SpanShape {
	byID := make(map[string]int, len(spans))
	services := make(map[[2]string]bool, len(spans))
	for i := range spans {
		if _, dup := byID[spans[i].SpanID]; !dup {
			byID[spans[i].SpanID] = i
		}
		services[[2]string{spans[i].SpanID, spans[i].Service}] = true
	}
	out := make([]SpanShape, len(spans))
	hasErrorBelow := make([]bool, len(spans))
	for i := range spans {
		s := &spans[i]
		p, ok := byID[s.ParentSpanID]
		parentKnown := ok && s.ParentSpanID != "" && s.ParentSpanID != s.SpanID
		out[i].Entry = IsEntryKind(s.Kind) || !parentKnown || !services[[2]string{s.ParentSpanID, s.Service}]
		if !s.IsError() || !parentKnown {
			continue
		}
		// Mark every ancestor as having an error below it; stop at a cycle or at an ancestor
		// already marked (everything above it is marked too).
		for steps, cur := 0, p; steps < len(spans); steps++ {
			if hasErrorBelow[cur] {
				break
			}
			hasErrorBelow[cur] = true
			next, ok := byID[spans[cur].ParentSpanID]
			if !ok || spans[cur].ParentSpanID == "" || next == cur {
				break
			}
			cur = next
		}
	}
	first, found := -1, false
	for i := range spans {
		out[i].Origin = spans[i].IsError() && !hasErrorBelow[i]
		found = found || out[i].Origin
		if spans[i].IsError() && (first < 0 || spans[i].StartNs < spans[first].StartNs ||
			(spans[i].StartNs == spans[first].StartNs && spans[i].SpanID < spans[first].SpanID)) {
			first = i
		}
	}
	// Error spans whose parents form a cycle (corrupt data) are each below another: the
	// earliest of them stands for the failure, so it is counted once rather than never.
	if !found && first >= 0 {
		out[first].Origin = true
	}
	return out
}

// Occurrence is one error occurrence: one failure of one run (TELEMETRY.md). A span
// occurrence starts at its origin span; a log occurrence is an error log outside any failing
// trace.
type Occurrence struct {
	TimeNs int64
	// Service is the origin's service (the log's, for a log occurrence), "unknown" when absent.
	Service string
	// Domain and RunID are the run's; RunID is empty when the run is not known.
	Domain, RunID string
	TraceID       string
	// OriginSpanID is empty for a log occurrence.
	OriginSpanID  string
	Message       string
	ExceptionType string
	Fingerprint   string
}

// exceptionOf returns the first non-empty exception.message and exception.type of a span's
// exception events.
func exceptionOf(events []SpanEvent) (msg, typ string) {
	for _, e := range events {
		if e.Name != "exception" {
			continue
		}
		msg = cmp.Or(msg, e.Attributes["exception.message"])
		typ = cmp.Or(typ, e.Attributes["exception.type"])
	}
	return msg, typ
}

// SpanError returns an error span's own message and type, as get_run shows them: the
// exception event's message, else the status message; the exception event's type, else the
// error.type attribute.
func SpanError(s *SpanRow) (msg, typ string) {
	em, et := exceptionOf(s.Events)
	return cmp.Or(em, s.StatusMessage), cmp.Or(et, s.Attributes["error.type"])
}

// RunOfTrace is the run identity of a trace, read off its root span.
type RunOfTrace struct {
	ID, Domain string
	// Known is false when the trace's root span is not among the spans.
	Known bool
}

// TraceRun reads the run of a trace from its spans: the root's execution id (else the trace
// id) and domain. A trace without a root has an unknown run in the default domain.
func TraceRun(conv *conventions.Conventions, spans []SpanRow) RunOfTrace {
	for i := range spans {
		if spans[i].IsRoot() {
			return RunOfTrace{
				ID:     cmp.Or(conv.ExecutionID(spans[i].Attributes), spans[i].TraceID),
				Domain: conv.Domain(spans[i].Attributes),
				Known:  true,
			}
		}
	}
	return RunOfTrace{Domain: conv.DefaultDomain}
}

// TraceOccurrences returns the error occurrences of one trace: one per origin error span. The
// error spans above an origin and the trace's error logs fold into it, filling in what the
// origin lacks: the message is the origin's exception message, else a folded span's, else a
// folded log's body, else a status message, else "<span name> failed"; the type likewise. A
// log is folded into the origin it was written in (or under), else into the first origin.
// spans need attributes and events; logs are the trace's error logs.
func TraceOccurrences(conv *conventions.Conventions, spans []SpanRow, logs []LogRow) []Occurrence {
	shapes := ShapeTrace(spans)
	run := TraceRun(conv, spans)
	byID := make(map[string]int, len(spans))
	for i := range spans {
		if _, dup := byID[spans[i].SpanID]; !dup {
			byID[spans[i].SpanID] = i
		}
	}
	var origins []int
	for i := range spans {
		if shapes[i].Origin {
			origins = append(origins, i)
		}
	}
	if len(origins) == 0 {
		return nil
	}
	// Stable: duplicates of one origin keep the order of spans, so every source lists them alike.
	slices.SortStableFunc(origins, func(a, b int) int {
		return cmp.Or(cmp.Compare(spans[a].StartNs, spans[b].StartNs), strings.Compare(spans[a].SpanID, spans[b].SpanID))
	})
	// ancestors lists an origin's error ancestors, nearest first, and every ancestor's id.
	chain := func(o int) (errAnc []int, all map[string]bool) {
		all = map[string]bool{spans[o].SpanID: true}
		cur := o
		for steps := 0; steps < len(spans); steps++ {
			p, ok := byID[spans[cur].ParentSpanID]
			if !ok || spans[cur].ParentSpanID == "" || p == cur || all[spans[p].SpanID] {
				break
			}
			all[spans[p].SpanID] = true
			if spans[p].IsError() {
				errAnc = append(errAnc, p)
			}
			cur = p
		}
		return errAnc, all
	}
	type fold struct {
		anc  []int
		logs []int
	}
	folds := make([]fold, len(origins))
	chains := make([]map[string]bool, len(origins))
	for k, o := range origins {
		folds[k].anc, chains[k] = chain(o)
	}
	sortedLogs := make([]int, len(logs))
	for i := range logs {
		sortedLogs[i] = i
	}
	slices.SortStableFunc(sortedLogs, func(a, b int) int { return cmp.Compare(logs[a].TimeNs, logs[b].TimeNs) })
	for _, li := range sortedLogs {
		target := 0
		for k, o := range origins {
			if logs[li].SpanID != "" && logs[li].SpanID == spans[o].SpanID {
				target = k
				break
			}
		}
		if logs[li].SpanID != spans[origins[target]].SpanID {
			for k := range origins {
				if chains[k][logs[li].SpanID] {
					target = k
					break
				}
			}
		}
		folds[target].logs = append(folds[target].logs, li)
	}
	out := make([]Occurrence, 0, len(origins))
	for k, o := range origins {
		org := &spans[o]
		var excMsg, excType string
		excMsg, excType = exceptionOf(org.Events)
		for _, a := range folds[k].anc {
			m, t := exceptionOf(spans[a].Events)
			excMsg, excType = cmp.Or(excMsg, m), cmp.Or(excType, t)
		}
		msg := excMsg
		for _, li := range folds[k].logs {
			msg = cmp.Or(msg, strings.TrimSpace(logs[li].Body), logs[li].Attributes["exception.message"])
			excType = cmp.Or(excType, logs[li].Attributes["exception.type"])
		}
		msg = cmp.Or(msg, org.StatusMessage)
		for _, a := range folds[k].anc {
			msg = cmp.Or(msg, spans[a].StatusMessage)
		}
		excType = cmp.Or(excType, org.Attributes["error.type"])
		for _, a := range folds[k].anc {
			excType = cmp.Or(excType, spans[a].Attributes["error.type"])
		}
		if msg == "" {
			msg = cmp.Or(org.Name, "span") + " failed"
		}
		out = append(out, Occurrence{
			TimeNs: org.StartNs, Service: ServiceOf(org.Service), Domain: run.Domain, RunID: run.ID,
			TraceID: org.TraceID, OriginSpanID: org.SpanID, Message: msg, ExceptionType: excType,
			Fingerprint: conventions.Fingerprint(excType, msg),
		})
	}
	return out
}

// LogOccurrence is the occurrence of an error log outside any failing trace; run is the run
// of its trace when known.
func LogOccurrence(conv *conventions.Conventions, l *LogRow, run RunOfTrace) Occurrence {
	msg := cmp.Or(strings.TrimSpace(l.Body), l.Attributes["exception.message"])
	typ := cmp.Or(l.Attributes["exception.type"], l.Attributes["error.type"])
	if msg == "" {
		msg = cmp.Or(strings.TrimSpace(l.SeverityText), "error") + " log"
	}
	o := Occurrence{
		TimeNs: l.TimeNs, Service: ServiceOf(l.Service), Domain: cmp.Or(run.Domain, conv.DefaultDomain),
		TraceID: l.TraceID, Message: msg, ExceptionType: typ, Fingerprint: conventions.Fingerprint(typ, msg),
	}
	if run.Known {
		o.RunID = run.ID
	}
	return o
}
