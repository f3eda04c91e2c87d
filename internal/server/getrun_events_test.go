package server

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/runlens/runlens/gen"
	"github.com/runlens/runlens/internal/contract/oracle"
	"github.com/runlens/runlens/internal/shape"
)

// TestGetRunFullShowsSpanEventsBounded stores a run of a chatty app that logs through span
// events — ten spans with 40 events each, recorded newest first, every event with more
// attributes than an answer keeps, a password, a token, an oversized value, a binary value and
// a value that is not UTF-8 — and asks get_run through the server's one answer path. At
// detail full each span shows its oldest events, at most the per-span bound and the
// per-answer bound in all, with what was left out counted per span; values of
// secret-looking keys are redacted, long values cut with an ellipsis, and the answer
// validates. At detail standard no span carries events.
func TestGetRunFullShowsSpanEventsBounded(t *testing.T) {
	const (
		extraSpans    = 8
		eventsPerSpan = 40
		attrsPerEvent = 40
	)
	h, traceID := runServer(t, func(td ptrace.Traces, _ plog.Logs, root, child ptrace.Span) {
		spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
		withEvents := []ptrace.Span{root}
		for i := range extraSpans {
			sp := spans.AppendEmpty()
			sp.SetTraceID(root.TraceID())
			sp.SetSpanID(pcommon.SpanID{3, 3, 3, 3, 0, 0, 0, byte(i)})
			sp.SetParentSpanID(child.SpanID())
			sp.SetName(fmt.Sprintf("step %d", i))
			sp.SetStartTimestamp(child.StartTimestamp())
			sp.SetEndTimestamp(child.EndTimestamp())
			withEvents = append(withEvents, sp)
		}
		for _, sp := range withEvents {
			for i := eventsPerSpan - 1; i >= 0; i-- { // newest first, as the answer is not
				ev := sp.Events().AppendEmpty()
				ev.SetName(fmt.Sprintf("event %02d", i))
				ev.SetTimestamp(sp.StartTimestamp() + pcommon.Timestamp(i)*1e6)
				a := ev.Attributes()
				a.PutStr("app.a.password", "hunter2")
				a.PutStr("app.b.auth_token", "tok-1234567890")
				a.PutStr("app.c.long", strings.Repeat("é long value ", 1000))
				a.PutEmptyBytes("app.d.blob").FromRaw([]byte(strings.Repeat("\x00\xff\xfe", 3000)))
				a.PutStr("app.e.latin1", "caf\xe9 "+strings.Repeat("\xe9", 5000))
				for k := 5; k < attrsPerEvent; k++ {
					a.PutInt(fmt.Sprintf("app.z.%02d", k), int64(k))
				}
			}
		}
	})
	tool, _ := gen.Lookup(gen.ToolGetRun)
	v := oracle.NewValidator()

	res := getRun(t, h, traceID, "full")
	if fields, err := v.Validate("get_run.output", tool.OutputSchema, res.Structured); err != nil || len(fields) > 0 {
		t.Fatalf("the answer fails its output schema: %v %v", fields, err)
	}
	if strings.Contains(string(res.Structured), "hunter2") || strings.Contains(string(res.Structured), "tok-1234567890") {
		t.Error("a secret-looking event attribute reached the answer")
	}
	var out gen.GetRunOutput
	if err := json.Unmarshal(res.Structured, &out); err != nil {
		t.Fatal(err)
	}
	if !out.Page.Truncated {
		t.Error("events were left out but page.truncated is false")
	}
	const total = (extraSpans + 1) * eventsPerSpan
	kept, omitted := 0, int64(0)
	for _, s := range out.Spans {
		if len(s.Events) > 32 {
			t.Errorf("span %s shows %d events, more than the per-span bound", s.Name, len(s.Events))
		}
		kept += len(s.Events)
		if s.OmittedEvents != nil {
			omitted += *s.OmittedEvents
		}
		for i, e := range s.Events {
			if want := fmt.Sprintf("event %02d", i); e.Name != want {
				t.Errorf("span %s event %d is %q, want %q: the oldest first", s.Name, i, e.Name, want)
				break
			}
			if len(e.Attributes) != 32 || e.OmittedAttributes == nil || *e.OmittedAttributes != attrsPerEvent-32 {
				t.Errorf("event %q keeps %d attributes, omitted %v; want 32 and %d", e.Name, len(e.Attributes), e.OmittedAttributes, attrsPerEvent-32)
			}
			for _, k := range []string{"app.a.password", "app.b.auth_token"} {
				if e.Attributes[k] != shape.Redacted {
					t.Errorf("event %q: %s = %q, want it redacted", e.Name, k, e.Attributes[k])
				}
			}
			for _, k := range []string{"app.c.long", "app.d.blob", "app.e.latin1"} {
				val := e.Attributes[k]
				if !utf8.ValidString(val) || utf8.RuneCountInString(val) > 4096 || !strings.HasSuffix(val, shape.Ellipsis) {
					t.Errorf("event %q: %s is %d characters (valid UTF-8 %v), ends %q; want at most 4096, marked as cut",
						e.Name, k, utf8.RuneCountInString(val), utf8.ValidString(val), val[max(0, len(val)-8):])
				}
			}
			if e.Attributes["app.z.05"] != "5" {
				t.Errorf("event %q: app.z.05 = %q, want 5", e.Name, e.Attributes["app.z.05"])
			}
		}
	}
	if kept != 200 {
		t.Errorf("the answer shows %d events, want the per-answer bound, 200", kept)
	}
	if omitted != total-200 {
		t.Errorf("omittedEvents sum to %d over the spans, want %d", omitted, total-200)
	}

	var std gen.GetRunOutput
	if err := json.Unmarshal(getRun(t, h, traceID, "standard").Structured, &std); err != nil {
		t.Fatal(err)
	}
	for _, s := range std.Spans {
		if s.Events != nil || s.OmittedEvents != nil {
			t.Fatalf("detail standard shows events on %s", s.Name)
		}
	}
}
