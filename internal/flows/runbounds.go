package flows

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/runlens/runlens/gen"
	"github.com/runlens/runlens/internal/shape"
)

// The bounds of get_run's output schema (schemas/tools/get_run.output.json). Telemetry carries
// whatever an application sent: a span with 500 attributes, a name of 10 KB, a run with a
// thousand logs or a chain of spans deeper than any tree view. An answer that fails its own
// schema is no answer at all (-32603), so GetRun sends what the schema allows, cut the way the
// disclosure layer cuts (whole items from the end, strings ending with shape.Ellipsis), and
// says so: page.truncated, omittedAttributes per span and per span event, and omittedEvents
// per span (the bounds of span events are in runevents.go).
const (
	maxRunItems       = 200 // logs and criticalPath: maxItems
	maxSpanAttributes = 128 // spans[].attributes: maxProperties
	maxAttributeValue = 4096
	maxIDLen          = 64 // traceId, spanId, parentSpanId, logs[].spanId, criticalPath[].spanId
	maxRunIDLen       = 256
	maxServiceLen     = 256
	maxNameLen        = 1024 // summary, outcome, spans[].name, criticalPath[].name
	maxErrorLen       = 8192 // errorMessage, spans[].errorMessage
	maxSeverityLen    = 32
	maxLogMessageLen  = 32768
)

// boundRun brings out within get_run's schema and reports whether it cut anything. Strings are
// cut to their maxLength in bytes, which is never more characters than the schema counts.
func (f *Flows) boundRun(out *gen.GetRunOutput) bool {
	var b bounder
	b.str(&out.ID, maxRunIDLen)
	b.str(&out.Summary, maxNameLen)
	b.opt(out.TraceID, maxIDLen)
	b.opt(out.Outcome, maxNameLen)
	b.opt(out.ErrorMessage, maxErrorLen)
	for i := range out.Spans {
		s := &out.Spans[i]
		b.str(&s.SpanID, maxIDLen)
		b.opt(s.ParentSpanID, maxIDLen)
		b.str(&s.Name, maxNameLen)
		b.str(&s.Service, maxServiceLen)
		b.opt(s.ErrorMessage, maxErrorLen)
		if len(s.Attributes) > 0 {
			var omitted int
			s.Attributes, omitted = f.boundAttributes(s.Attributes, maxSpanAttributes, &b)
			if omitted > 0 {
				s.OmittedAttributes = ptr(int64(omitted))
			}
		}
	}
	f.boundEvents(out, &b)
	if len(out.Logs) > maxRunItems {
		out.Logs, b.cut = out.Logs[:maxRunItems], true
	}
	for i := range out.Logs {
		l := &out.Logs[i]
		b.str(&l.Severity, maxSeverityLen)
		b.str(&l.Message, maxLogMessageLen)
		b.opt(l.SpanID, maxIDLen)
	}
	if len(out.CriticalPath) > maxRunItems {
		out.CriticalPath, b.cut = out.CriticalPath[:maxRunItems], true
	}
	for i := range out.CriticalPath {
		p := &out.CriticalPath[i]
		b.str(&p.SpanID, maxIDLen)
		b.str(&p.Name, maxNameLen)
		b.str(&p.Service, maxServiceLen)
		p.DurationMs = max(p.DurationMs, 0)
	}
	return b.cut
}

// boundAttributes keeps the first maxKeys keys in key order (so the same span or event always
// shows the same ones), each value made valid UTF-8 (a binary value's stray bytes become
// U+FFFD), redacted and then cut to maxAttributeValue, and returns how many it left out.
// Values are redacted before they are cut so that the server's redaction of the whole answer
// finds nothing left that could make them longer again; the values of sensitive keys are
// replaced whole by that redaction.
func (f *Flows) boundAttributes(attrs map[string]string, maxKeys int, b *bounder) (map[string]string, int) {
	keys := make([]string, 0, len(attrs))
	for k := range attrs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	omitted := 0
	if len(keys) > maxKeys {
		omitted = len(keys) - maxKeys
		keys = keys[:maxKeys]
		b.cut = true
	}
	kept := make(map[string]string, len(keys))
	for _, k := range keys {
		v := f.redact(validUTF8(attrs[k]))
		b.str(&v, maxAttributeValue)
		kept[k] = v
	}
	return kept, omitted
}

// validUTF8 returns s with each run of invalid bytes replaced by U+FFFD, so that a cut counts
// the characters the answer will hold and never splits what JSON would carry as one.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// bounder cuts strings in place and remembers whether it cut any.
type bounder struct{ cut bool }

func (b *bounder) str(s *string, max int) {
	var cut bool
	*s, cut = shape.CapString(*s, max)
	b.cut = b.cut || cut
}

func (b *bounder) opt(s *string, max int) {
	if s != nil {
		b.str(s, max)
	}
}
