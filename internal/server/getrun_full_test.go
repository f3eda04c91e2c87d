package server

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/runlens/runlens/internal/telemetry/engine"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/runlens/runlens/gen"
	"github.com/runlens/runlens/internal/contract/oracle"
	"github.com/runlens/runlens/internal/flows"
	"github.com/runlens/runlens/internal/mcp"
	"github.com/runlens/runlens/internal/shape"
	"github.com/runlens/runlens/internal/telemetry/conventions"
	"github.com/runlens/runlens/internal/telemetry/store"
)

// TestGetRunFullBoundsTheAttributesOfAWideSpan stores a run whose root span carries 500
// attributes with values far over the schema's length bound, the way a chatty instrumentation
// library can, and asks get_run for detail=full through the server's one answer path: the call
// succeeds, the answer validates against the published output schema, and it says per span how
// many attributes it left out and that the page was cut.
func TestGetRunFullBoundsTheAttributesOfAWideSpan(t *testing.T) {
	const attrs = 500
	var keys []string
	h, traceID := runServer(t, func(td ptrace.Traces, _ plog.Logs, root, child ptrace.Span) {
		for i := range attrs {
			key := fmt.Sprintf("app.attr.%03d", i)
			keys = append(keys, key)
			root.Attributes().PutStr(key, strings.Repeat(fmt.Sprintf("value %d é ", i), 1000))
		}
		child.Attributes().PutStr("app.small", "ok")
	})
	slices.Sort(keys)
	res := getRun(t, h, traceID, "full")
	tool, _ := gen.Lookup(gen.ToolGetRun)
	if fields, err := oracle.NewValidator().Validate("get_run.output", tool.OutputSchema, res.Structured); err != nil || len(fields) > 0 {
		t.Fatalf("the answer fails its output schema: %v %v", fields, err)
	}

	var out gen.GetRunOutput
	if err := json.Unmarshal(res.Structured, &out); err != nil {
		t.Fatal(err)
	}
	if !out.Page.Truncated {
		t.Error("attributes were left out but page.truncated is false")
	}
	bySpan := map[string]gen.GetRunOutputSpan{}
	for _, s := range out.Spans {
		bySpan[s.SpanID] = s
	}
	wide, narrow := bySpan[rootSpanID.String()], bySpan[childSpanID.String()]
	kept := slices.Sorted(maps.Keys(wide.Attributes))
	if want := keys[:maxSpanAttributes(t)]; !slices.Equal(kept, want) {
		t.Errorf("kept attributes %d (%v…), want the first %d in key order", len(kept), kept[:min(3, len(kept))], len(want))
	}
	if wide.OmittedAttributes == nil || *wide.OmittedAttributes != int64(attrs-len(kept)) {
		t.Errorf("omittedAttributes of the wide span = %v, want %d", wide.OmittedAttributes, attrs-len(kept))
	}
	for k, v := range wide.Attributes {
		if utf8.RuneCountInString(v) > 4096 || !strings.HasSuffix(v, shape.Ellipsis) {
			t.Errorf("attribute %s is %d characters and ends %q; want at most 4096, marked as cut", k, utf8.RuneCountInString(v), v[max(0, len(v)-8):])
			break
		}
	}
	if narrow.OmittedAttributes != nil || narrow.Attributes["app.small"] != "ok" {
		t.Errorf("the narrow span lost something: attributes %v, omitted %v", narrow.Attributes, narrow.OmittedAttributes)
	}
}

// maxSpanAttributes reads the published bound on one span's attributes.
func maxSpanAttributes(t *testing.T) int {
	t.Helper()
	tool, _ := gen.Lookup(gen.ToolGetRun)
	var s struct {
		Properties struct {
			Spans struct {
				Items struct {
					Properties struct {
						Attributes struct {
							MaxProperties int `json:"maxProperties"`
						} `json:"attributes"`
					} `json:"properties"`
				} `json:"items"`
			} `json:"spans"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(tool.OutputSchema, &s); err != nil || s.Properties.Spans.Items.Properties.Attributes.MaxProperties == 0 {
		t.Fatalf("no maxProperties on get_run span attributes: %v", err)
	}
	return s.Properties.Spans.Items.Properties.Attributes.MaxProperties
}

// TestGetRunNeverFailsItsSchemaOnOversizedTelemetry gives get_run a run whose every field is
// larger than the output schema allows — names, ids, error messages, a span event, a thousand
// correlated logs of 40,000 characters, and a chain of spans deeper than criticalPath may list
// — and requires a valid, honestly truncated answer at every detail level.
func TestGetRunNeverFailsItsSchemaOnOversizedTelemetry(t *testing.T) {
	const chain = 250
	h, traceID := runServer(t, func(td ptrace.Traces, ld plog.Logs, root, child ptrace.Span) {
		root.SetName(strings.Repeat("n", 5000))
		root.Status().SetCode(ptrace.StatusCodeError)
		root.Status().SetMessage(strings.Repeat("failure ", 3000))
		ev := root.Events().AppendEmpty()
		ev.SetName(strings.Repeat("e", 5000))
		ev.Attributes().PutStr(strings.Repeat("k", 5000), strings.Repeat("v", 50000))
		td.ResourceSpans().At(0).Resource().Attributes().PutStr("service.name", strings.Repeat("s", 1000))
		spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
		parent := child
		for i := range chain {
			sp := spans.AppendEmpty()
			sp.SetTraceID(root.TraceID())
			sp.SetSpanID(pcommon.SpanID{9, 9, 9, 9, 0, 0, byte(i >> 8), byte(i)})
			sp.SetParentSpanID(parent.SpanID())
			sp.SetName("step")
			sp.SetStartTimestamp(parent.StartTimestamp())
			sp.SetEndTimestamp(parent.EndTimestamp())
			parent = sp
		}
		records := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
		for i := range 1000 {
			lr := records.AppendEmpty()
			lr.SetTraceID(root.TraceID())
			lr.SetSpanID(root.SpanID())
			lr.SetTimestamp(root.StartTimestamp() + pcommon.Timestamp(i))
			lr.SetSeverityText(strings.Repeat("W", 100))
			lr.Body().SetStr(strings.Repeat(fmt.Sprintf("log %d ", i), 8000))
		}
	})
	tool, _ := gen.Lookup(gen.ToolGetRun)
	v := oracle.NewValidator()
	for _, detail := range []string{"summary", "standard", "full"} {
		t.Run("detail "+detail, func(t *testing.T) {
			res := getRun(t, h, traceID, detail)
			if fields, err := v.Validate("get_run.output", tool.OutputSchema, res.Structured); err != nil || len(fields) > 0 {
				t.Fatalf("the answer fails its output schema: %v %v", fields, err)
			}
			var out gen.GetRunOutput
			if err := json.Unmarshal(res.Structured, &out); err != nil {
				t.Fatal(err)
			}
			if !out.Page.Truncated {
				t.Error("the answer was cut but page.truncated is false")
			}
			if !strings.HasSuffix(out.Summary, shape.Ellipsis) {
				t.Errorf("the over-long summary is not marked as cut: …%q", out.Summary[max(0, len(out.Summary)-20):])
			}
		})
	}
}

// The span ids runServer gives the root and its child.
var (
	rootSpanID  = pcommon.SpanID{1, 1, 1, 1, 1, 1, 1, 1}
	childSpanID = pcommon.SpanID{2, 2, 2, 2, 2, 2, 2, 2}
)

// runServer stores one run — a server root span and one child, changed by edit, plus whatever
// edit adds — in a fresh embedded store and returns the server over real flows, with the trace id.
func runServer(t *testing.T, edit func(td ptrace.Traces, ld plog.Logs, root, child ptrace.Span)) (*Handler, string) {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, store.Options{Path: filepath.Join(t.TempDir(), "t.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	conv, err := conventions.Preset("otel")
	if err != nil {
		t.Fatal(err)
	}
	td, ld := ptrace.NewTraces(), plog.NewLogs()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "wide")
	spans := rs.ScopeSpans().AppendEmpty().Spans()
	now := time.Now()
	traceID := pcommon.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	root := spans.AppendEmpty()
	root.SetTraceID(traceID)
	root.SetSpanID(rootSpanID)
	root.SetName("GET /wide")
	root.SetKind(ptrace.SpanKindServer)
	root.SetStartTimestamp(pcommon.NewTimestampFromTime(now.Add(-2 * time.Second)))
	root.SetEndTimestamp(pcommon.NewTimestampFromTime(now.Add(-time.Second)))
	child := spans.AppendEmpty()
	child.SetTraceID(traceID)
	child.SetSpanID(childSpanID)
	child.SetParentSpanID(rootSpanID)
	child.SetName("narrow")
	child.SetStartTimestamp(root.StartTimestamp())
	child.SetEndTimestamp(root.EndTimestamp())
	edit(td, ld, root, child)
	if _, _, err := st.IngestTraces(ctx, td); err != nil {
		t.Fatal(err)
	}
	if ld.LogRecordCount() > 0 {
		if _, _, err := st.IngestLogs(ctx, ld); err != nil {
			t.Fatal(err)
		}
	}
	f := flows.New(flows.Deps{Telemetry: engine.New(store.NewBackend(st), conv)})
	return New(Options{Flows: f}), traceID.String()
}

// getRun calls get_run on the trace at detail and fails the test unless it is a successful answer.
func getRun(t *testing.T, h *Handler, traceID, detail string) mcp.CallResult {
	t.Helper()
	args := fmt.Sprintf(`{"id":%q,"detail":%q}`, traceID, detail)
	res, err := h.CallTool(context.Background(), mcp.CallRequest{Name: gen.ToolGetRun, Arguments: json.RawMessage(args)})
	if err != nil {
		t.Fatalf("get_run detail=%s: %v", detail, err)
	}
	if res.IsError {
		t.Fatalf("get_run detail=%s is a tool error: %s", detail, res.Structured)
	}
	return res
}

// TestGetRunFullRedactsCredentialLiteralsInStatements stores a database span whose statements
// set a password, the way an ORM's instrumentation records them, and asks get_run for the
// attributes: the literals are gone, the statements stay readable.
func TestGetRunFullRedactsCredentialLiteralsInStatements(t *testing.T) {
	statements := map[string]struct{ text, secret, kept string }{
		"db.query.text": {"UPDATE users SET pw = 'stmtC4n4ryPw' WHERE id = 7", "stmtC4n4ryPw", "UPDATE users SET pw = '"},
		"db.statement":  {"SELECT id FROM accounts WHERE passwd: legacyC4n4ry AND active", "legacyC4n4ry", "AND active"},
		"sql.query":     {"ALTER USER app WITH PASSWORD 'alterC4n4ryPw'", "alterC4n4ryPw", "ALTER USER app"},
	}
	h, traceID := runServer(t, func(_ ptrace.Traces, _ plog.Logs, _, child ptrace.Span) {
		child.Attributes().PutStr("db.system.name", "postgresql")
		for k, s := range statements {
			child.Attributes().PutStr(k, s.text)
		}
	})
	res := getRun(t, h, traceID, "full")
	var out gen.GetRunOutput
	if err := json.Unmarshal(res.Structured, &out); err != nil {
		t.Fatal(err)
	}
	for _, s := range out.Spans {
		if s.SpanID != childSpanID.String() {
			continue
		}
		for k, want := range statements {
			got, ok := s.Attributes[k]
			if !ok || strings.Contains(got, want.secret) || !strings.Contains(got, want.kept) || !strings.Contains(got, shape.Redacted) {
				t.Errorf("%s = %q, want %q with its literal redacted", k, got, want.text)
			}
		}
	}
	if strings.Contains(string(res.Structured), "C4n4ry") {
		t.Errorf("a credential literal is in the answer: %s", res.Structured)
	}
}
