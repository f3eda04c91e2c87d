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

// Occurrence is one error occurrence: one cause in one run (docs/semantics.md R7). A span
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
	// Decisive marks the occurrence that failed its run (R5): of the causes whose chain of
	// error spans reaches the run's root, the one whose origin ended last (an error the run
	// went on after, such as a retried call, did not decide it). At most one per failed run.
	Decisive bool
	// Handled is true when the run's own verdict is ok: the error did not reach the run's entry
	// span (docs/semantics.md R8). False when the run is not known.
	Handled bool
	// EntryService is the service of the run's root span, where the work entered ("" when the
	// run is not known), so a failure is found by the service that served the request as well
	// as by the one where it started (R12).
	EntryService string
}

// exceptionOf returns the first non-empty exception.message and exception.type of a span's
// exception events, and whether one of them carried a stack trace.
func exceptionOf(events []SpanEvent) (msg, typ string, stack bool) {
	for _, e := range events {
		if e.Name != "exception" {
			continue
		}
		msg = cmp.Or(msg, e.Attributes["exception.message"])
		typ = cmp.Or(typ, e.Attributes["exception.type"])
		stack = stack || e.Attributes["exception.stacktrace"] != ""
	}
	return msg, typ, stack
}

// eventMessageKeys are the attributes a span event's text is read from: what the OpenTracing
// bridge and log-to-span-event adapters write (LogFields/LogKV "message", "msg", "error"),
// and the logs conventions' body and error message keys (docs/semantics.md R10).
var eventMessageKeys = []string{"message", "msg", "log.message", "error.message", "error", "event"}

// errorEventLevels are the level attribute values that mark a span event as an error report.
var errorEventLevels = []string{"error", "err", "fatal", "critical", "panic"}

// EventMessage is the text of a span event: its message attribute, else its name. An
// "exception" event's text is its exception.message.
func EventMessage(e *SpanEvent) string {
	if e.Name == "exception" {
		return strings.TrimSpace(e.Attributes["exception.message"])
	}
	for _, k := range eventMessageKeys {
		if v := strings.TrimSpace(e.Attributes[k]); v != "" && !(k == "event" && v == "error") {
			return v
		}
	}
	return strings.TrimSpace(e.Name)
}

// errorEventMessage is the text of the last span event that reports an error (a level
// attribute of error or worse, an "error" event field set true or to "error", or a name that
// is "error"); "" when none does. Exception events are read by exceptionOf.
func errorEventMessage(events []SpanEvent) string {
	msg := ""
	for i := range events {
		e := &events[i]
		if e.Name == "exception" {
			continue
		}
		lvl := strings.ToLower(strings.TrimSpace(cmp.Or(e.Attributes["level"], e.Attributes["log.severity"], e.Attributes["severity"])))
		isErr := slices.Contains(errorEventLevels, lvl) || strings.EqualFold(strings.TrimSpace(e.Name), "error") ||
			e.Attributes["event"] == "error" || e.Attributes["error"] == "true"
		if !isErr {
			continue
		}
		if m := EventMessage(e); m != "" && m != "error" {
			msg = m
		}
	}
	return msg
}

// SpanError returns an error span's own message and type, as get_run shows them: the
// exception event's message, else the status message, else an error span event's text; the
// exception event's type, else the error.type attribute.
func SpanError(s *SpanRow) (msg, typ string) {
	em, et, _ := exceptionOf(s.Events)
	return cmp.Or(em, s.StatusMessage, errorEventMessage(s.Events)), cmp.Or(et, s.Attributes["error.type"])
}

// RunOfTrace is the run identity of a trace, read off its root span.
type RunOfTrace struct {
	ID, Domain string
	// Known is false when the trace's root span is not among the spans.
	Known bool
	// OK is the root's own verdict is ok (R5); Service is the root's service.
	OK      bool
	Service string
}

// TraceRun reads the run of a trace from its spans: the root's execution id (else the trace
// id), domain, service and verdict. A trace without a root has an unknown run in the default
// domain.
func TraceRun(conv *conventions.Conventions, spans []SpanRow) RunOfTrace {
	for i := range spans {
		if spans[i].IsRoot() {
			return RunOfTrace{
				ID:      cmp.Or(conv.ExecutionID(spans[i].Attributes), spans[i].TraceID),
				Domain:  conv.Domain(spans[i].Attributes),
				Known:   true,
				OK:      RunFromRoot(conv, &spans[i]).Status == StatusOK,
				Service: ServiceOf(spans[i].Service),
			}
		}
	}
	return RunOfTrace{Domain: conv.DefaultDomain}
}

// Specificity ranks where an occurrence's message came from (docs/semantics.md R9): a thrown
// exception with its stack beats an exception message, which beats the text of a log or span
// event, which beats a bare status message, which beats nothing at all ("<span> failed").
type Specificity int

const (
	SpecNone Specificity = iota
	SpecStatus
	SpecEvent
	SpecException
	SpecThrown
)

// TraceOccurrences returns the error occurrences of one trace: one per cause
// (docs/semantics.md R7–R9).
//
//   - Origins: an error span none of whose descendants is an error span starts a failure; the
//     error spans above it and the trace's error logs fold into it, filling in what it lacks.
//     Its message is the most specific text recorded (R9): a thrown exception with its stack
//     (the origin's, else a folded span's), else a folded log's exception message, else an
//     exception recorded without a stack (unless its span's status says something else that the
//     trace repeats: then the exception is an instrumentation's template), else a folded log's
//     body, else an error span event's text, else a status message, else "<span name> failed";
//     the type likewise.
//   - One cause, one occurrence: origins with the same fingerprint (service, exception type,
//     normalized message) are one occurrence, whether they form a chain or are siblings (a
//     route handler and the error-handling middleware that records the same exception again).
//   - A generic text never wins: an origin whose message is only a status message or nothing
//     (an instrumentation's report that a call failed, such as a driver's error code) folds into
//     an occurrence of the same service and run with a recorded exception or event that was
//     recorded no earlier than it started (the app caught that failure and said more), when
//     there is one.
//
// A log is folded into the origin it was written in (or under), else into the first origin.
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
	// chain lists an origin's error ancestors, nearest first, and every ancestor's id.
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
	type cause struct {
		occ  Occurrence
		spec Specificity
		// recordedNs is when its most specific text was recorded: the end of the span that
		// carried it (an exception is recorded before its span ends).
		recordedNs int64
		merged     bool
		generic    bool
		// into is the cause that stands for this one once merged.
		into int
		// reaches is whether its chain of error spans reaches the trace's root.
		reaches bool
		endNs   int64
	}
	// said counts the records of the trace that carry each text: a text the app repeats
	// elsewhere (its logger, a handler's exception) is its own; an instrumentation's template is
	// said once (R9).
	said := map[string]int{}
	for i := range spans {
		if m, _, _ := exceptionOf(spans[i].Events); m != "" {
			said[m]++
		}
		if m := spans[i].StatusMessage; m != "" {
			said[m]++
		}
	}
	for i := range logs {
		for _, m := range []string{strings.TrimSpace(logs[i].Body), logs[i].Attributes["exception.message"]} {
			if m != "" {
				said[m]++
			}
		}
	}
	retries := newRetryIndex(spans)
	causes := make([]cause, 0, len(origins))
	for k, o := range origins {
		org := &spans[o]
		members := append([]int{o}, folds[k].anc...)
		spec, recorded := SpecNone, org.EndNs()
		var msg, excType string
		// A thrown exception with its stack, the innermost first.
		for _, i := range members {
			if m, t, st := exceptionOf(spans[i].Events); m != "" && st {
				msg, excType, spec, recorded = m, t, SpecThrown, spans[i].EndNs()
				break
			}
		}
		// Else what the app's logger said was thrown.
		for _, li := range folds[k].logs {
			if msg == "" {
				if m := logs[li].Attributes["exception.message"]; m != "" {
					msg, spec, recorded = m, SpecException, logs[li].TimeNs
					if logs[li].Attributes["exception.stacktrace"] != "" {
						spec = SpecThrown
					}
				}
			}
			excType = cmp.Or(excType, logs[li].Attributes["exception.type"])
		}
		// Else an exception recorded without a stack; when its span's own status says something
		// else that the trace repeats and the exception text it does not, the exception is the
		// instrumentation's template and the status is the cause's text.
		for _, i := range members {
			m, t, _ := exceptionOf(spans[i].Events)
			if msg != "" || m == "" {
				excType = cmp.Or(excType, t)
				continue
			}
			msg, spec, recorded = m, SpecException, spans[i].EndNs()
			if st := spans[i].StatusMessage; st != "" && st != m && said[st] > 1 && said[m] <= 1 {
				msg = st
			}
			excType = cmp.Or(excType, t)
		}
		// Else what was said nearest the failure: the logs written in a span of the chain and
		// that span's error events, the origin first, then the logs written elsewhere (a
		// caller's "request failed" never hides what the failing span said).
		if msg == "" {
			inMember := make(map[string]bool, len(members))
			for _, i := range members {
				inMember[spans[i].SpanID] = true
			}
		chain:
			for _, i := range members {
				for _, li := range folds[k].logs {
					if m := strings.TrimSpace(logs[li].Body); m != "" && logs[li].SpanID == spans[i].SpanID {
						msg, spec, recorded = m, SpecEvent, logs[li].TimeNs
						break chain
					}
				}
				if m := errorEventMessage(spans[i].Events); m != "" {
					msg, spec, recorded = m, SpecEvent, spans[i].EndNs()
					break
				}
			}
			for _, li := range folds[k].logs {
				if m := strings.TrimSpace(logs[li].Body); msg == "" && m != "" && !inMember[logs[li].SpanID] {
					msg, spec, recorded = m, SpecEvent, logs[li].TimeNs
				}
			}
		}
		if msg == "" {
			for _, i := range members {
				if m := spans[i].StatusMessage; m != "" {
					msg, spec = m, SpecStatus
					break
				}
			}
		}
		excType = cmp.Or(excType, org.Attributes["error.type"])
		for _, a := range folds[k].anc {
			excType = cmp.Or(excType, spans[a].Attributes["error.type"])
		}
		if msg == "" {
			msg = cmp.Or(org.Name, "span") + " failed"
		}
		// Generic (R9): nothing but an instrumented call's status text, or no text at all —
		// unless the call was retried and the retry succeeded: then it failed on its own.
		generic := (spec == SpecNone || (spec == SpecStatus && org.Kind == KindClient)) && !retries.retried(org)
		reaches := org.IsRoot()
		for _, a := range folds[k].anc {
			reaches = reaches || spans[a].IsRoot()
		}
		c := cause{spec: spec, generic: generic, recordedNs: recorded, into: k, reaches: reaches, endNs: org.EndNs(), occ: Occurrence{
			TimeNs: org.StartNs, Service: ServiceOf(org.Service), Domain: run.Domain,
			TraceID: org.TraceID, OriginSpanID: org.SpanID, Message: msg, ExceptionType: excType,
			Fingerprint: conventions.Fingerprint(excType, msg),
		}}
		if run.Known {
			c.occ.RunID, c.occ.Handled, c.occ.EntryService = run.ID, run.OK, run.Service
		}
		causes = append(causes, c)
	}
	// One cause, one occurrence (R7): the first origin of each service and fingerprint stands
	// for the others.
	seen := make(map[[2]string]int, len(causes))
	for k := range causes {
		key := [2]string{causes[k].occ.Service, causes[k].occ.Fingerprint}
		if first, ok := seen[key]; ok {
			causes[k].merged, causes[k].into = true, first
			causes[first].spec = max(causes[first].spec, causes[k].spec)
			continue
		}
		seen[key] = k
	}
	// A generic text never wins (R9): a generic origin folds into the first cause of its
	// service with a recorded exception or event text that was recorded no earlier than the
	// generic one started.
	for k := range causes {
		g := &causes[k]
		if g.merged || !g.generic {
			continue
		}
		for j := range causes {
			c := &causes[j]
			if j != k && !c.merged && c.spec >= SpecEvent && c.occ.Service == g.occ.Service && c.recordedNs >= g.occ.TimeNs {
				g.merged, g.into = true, j
				break
			}
		}
	}
	// The decisive cause of a failed run (R5, R7).
	if run.Known && !run.OK {
		d := -1
		for k := range causes {
			if c := &causes[k]; c.reaches && (d < 0 || c.endNs > causes[d].endNs) {
				d = k
			}
		}
		for steps := 0; d >= 0 && causes[d].merged && steps < len(causes); steps++ {
			d = causes[d].into
		}
		if d >= 0 {
			causes[d].occ.Decisive = true
		}
	}
	out := make([]Occurrence, 0, len(causes))
	for k := range causes {
		if !causes[k].merged {
			out = append(out, causes[k].occ)
		}
	}
	return out
}

// StackOf is the first exception stack among a span's events, "" when none.
func StackOf(events []SpanEvent) string {
	for _, e := range events {
		if e.Name == "exception" && e.Attributes["exception.stacktrace"] != "" {
			return e.Attributes["exception.stacktrace"]
		}
	}
	return ""
}

// CauseStack is the stack a cause was recorded with when its origin span (spans[origin])
// holds none, for its location (R9): the nearest span above it with an exception stack, else
// the first span below it that recorded one (frameworks record a thrown exception on a span
// whose status stays unset), else an error log of those spans that wrote one, else any error
// log of the trace that did. "" when nothing did.
func CauseStack(spans []SpanRow, logs []LogRow, origin int) string {
	if st := StackOf(spans[origin].Events); st != "" {
		return st
	}
	byID := make(map[string]int, len(spans))
	children := make(map[string][]int, len(spans))
	for i := range spans {
		if _, dup := byID[spans[i].SpanID]; !dup {
			byID[spans[i].SpanID] = i
		}
		if p := spans[i].ParentSpanID; p != "" && p != spans[i].SpanID {
			children[p] = append(children[p], i)
		}
	}
	related := map[string]bool{spans[origin].SpanID: true}
	for cur, steps := origin, 0; steps < len(spans); steps++ {
		p, ok := byID[spans[cur].ParentSpanID]
		if !ok || p == cur || related[spans[p].SpanID] {
			break
		}
		related[spans[p].SpanID] = true
		if st := StackOf(spans[p].Events); st != "" {
			return st
		}
		cur = p
	}
	below := ""
	queue := slices.Clone(children[spans[origin].SpanID])
	for len(queue) > 0 && len(related) <= len(spans) {
		i := queue[0]
		queue = queue[1:]
		if related[spans[i].SpanID] {
			continue
		}
		related[spans[i].SpanID] = true
		if below == "" {
			below = StackOf(spans[i].Events)
		}
		queue = append(queue, children[spans[i].SpanID]...)
	}
	if below != "" {
		return below
	}
	anyLog := ""
	for i := range logs {
		st := logs[i].Attributes["exception.stacktrace"]
		if st != "" && related[logs[i].SpanID] {
			return st
		}
		anyLog = cmp.Or(anyLog, st)
	}
	return anyLog
}

// retryIndex knows, per parent and span name, the latest start of a span that succeeded: a
// failed call with a later successful sibling of its name was retried (R9).
type retryIndex map[[2]string]int64

func newRetryIndex(spans []SpanRow) retryIndex {
	idx := retryIndex{}
	for i := range spans {
		if s := &spans[i]; !s.IsError() {
			k := [2]string{s.ParentSpanID, s.Name}
			if last, ok := idx[k]; !ok || s.StartNs > last {
				idx[k] = s.StartNs
			}
		}
	}
	return idx
}

func (idx retryIndex) retried(s *SpanRow) bool {
	last, ok := idx[[2]string{s.ParentSpanID, s.Name}]
	return ok && last >= s.EndNs()
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
		o.RunID, o.Handled, o.EntryService = run.ID, run.OK, run.Service
	}
	return o
}
