package flows

import (
	"cmp"
	"slices"

	"github.com/runlens/runlens/gen"
	"github.com/runlens/runlens/internal/telemetry"
)

// Span events are telemetry (TELEMETRY.md): get_run shows them on their span wherever spans
// show attributes (detail full), bounded the way logs are. An instrumentation that logs
// through span events can put thousands on one span, so one answer keeps the oldest
// maxSpanEvents of each span and maxRunEvents in all (spans in tree order, so the root's come
// first), and says per span how many it left out. Exception events are among
// them as recorded; they also still give the span its error message and frames.
const (
	maxSpanEvents      = 32  // spans[].events: maxItems
	maxRunEvents       = 200 // span events in one answer, as many as logs
	maxEventAttributes = 32  // spans[].events[].attributes: maxProperties
	maxEventNameLen    = 1024
)

// spanEvents returns the oldest events of a span that fit within maxSpanEvents and what is
// left of the answer's budget (which it lowers), oldest first (events recorded at the same
// time in the order recorded), and how many it left out. Names and attribute values are
// bounded and redacted later, with the rest of the answer (boundRun).
func spanEvents(events []telemetry.SpanEvent, budget *int) ([]gen.GetRunOutputSpanEvent, int64) {
	if len(events) == 0 {
		return nil, 0
	}
	order := make([]int, len(events))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(events[a].TimeNs, events[b].TimeNs) })
	keep := max(min(len(order), maxSpanEvents, *budget), 0)
	*budget -= keep
	out := make([]gen.GetRunOutputSpanEvent, 0, keep)
	for _, i := range order[:keep] {
		e := &events[i]
		ev := gen.GetRunOutputSpanEvent{TimeUnixMs: max(telemetry.NsToMs(e.TimeNs), 0), Name: e.Name}
		if len(e.Attributes) > 0 {
			ev.Attributes = e.Attributes
		}
		out = append(out, ev)
	}
	return out, int64(len(events) - keep)
}

// boundEvents brings the span events of out within get_run's schema: at most maxSpanEvents per
// span and maxRunEvents in the answer, names cut to their maxLength, attributes bounded and
// redacted as span attributes are. It sets each span's omittedEvents and marks the answer cut
// when any event was left out.
func (f *Flows) boundEvents(out *gen.GetRunOutput, b *bounder) {
	budget := maxRunEvents
	for i := range out.Spans {
		s := &out.Spans[i]
		var omitted int64
		if s.OmittedEvents != nil {
			omitted = *s.OmittedEvents
		}
		if keep := max(min(len(s.Events), maxSpanEvents, budget), 0); keep < len(s.Events) {
			omitted += int64(len(s.Events) - keep)
			s.Events = s.Events[:keep]
		}
		budget -= len(s.Events)
		for j := range s.Events {
			e := &s.Events[j]
			e.Name = validUTF8(e.Name)
			b.str(&e.Name, maxEventNameLen)
			e.TimeUnixMs = max(e.TimeUnixMs, 0)
			if len(e.Attributes) > 0 {
				var cut int
				e.Attributes, cut = f.boundAttributes(e.Attributes, maxEventAttributes, b)
				if cut > 0 {
					e.OmittedAttributes = ptr(int64(cut))
				}
			}
		}
		if len(s.Events) == 0 {
			s.Events = nil
		}
		s.OmittedEvents = nil
		if omitted > 0 {
			s.OmittedEvents, b.cut = ptr(omitted), true
		}
	}
}
