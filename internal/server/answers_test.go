package server

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/runlens/runlens/internal/telemetry/engine"

	"github.com/runlens/runlens/internal/flows"
	"github.com/runlens/runlens/internal/mcp"
	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/fixture"
	"github.com/runlens/runlens/internal/telemetry/memory"
)

var answersNow = time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)

// fixtureServer is the server over real flows on the otel fixture: answers go through the
// whole tool path (argument validation, shaping, output-schema validation).
// preset is the fixture's attribute dialect: "" (otel) or netscript, whose runs carry
// execution ids that are not their trace ids.
func fixtureServer(t *testing.T, preset string) (*Handler, *fixture.Dataset) {
	t.Helper()
	d, err := fixture.New(fixture.Options{Now: answersNow, Seed: 11, Preset: preset})
	if err != nil {
		t.Fatal(err)
	}
	b := &memory.Backend{}
	b.AddTraces(d.Traces)
	b.AddLogs(d.Logs)
	f := flows.New(flows.Deps{Telemetry: engine.New(embeddedKind{b}, d.Conventions), Now: func() time.Time { return answersNow }})
	return New(Options{Flows: f}), d
}

// embeddedKind is the in-memory backend described as the embedded store, a kind the
// get_app_status schema knows.
type embeddedKind struct{ *memory.Backend }

func (e embeddedKind) Describe(ctx context.Context) telemetry.SourceInfo {
	info := e.Backend.Describe(ctx)
	info.Kind = "embedded"
	return info
}

// callJSON calls tool with args and returns the structured answer, failing the test on a
// protocol error; tool errors are returned with isError set.
func callJSON(t *testing.T, h *Handler, tool, args string) (map[string]any, bool) {
	t.Helper()
	res, err := h.CallTool(context.Background(), mcp.CallRequest{Name: tool, Arguments: json.RawMessage(args)})
	if err != nil {
		t.Fatalf("%s %s: %v", tool, args, err)
	}
	var doc map[string]any
	if err := json.Unmarshal(res.Structured, &doc); err != nil {
		t.Fatalf("%s %s: %v in %s", tool, args, err, res.Structured)
	}
	return doc, res.IsError
}

// items returns doc[field] as a list of objects.
func items(doc map[string]any, field string) []map[string]any {
	var out []map[string]any
	for _, v := range asList(doc[field]) {
		if m, ok := v.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

func TestNoFieldRepeatsAnother(t *testing.T) {
	h, _ := fixtureServer(t, "")
	ns, _ := fixtureServer(t, "netscript")
	t.Run("a run's trace id is left out when it is the run id", func(t *testing.T) {
		same, differ := 0, 0
		for _, h := range []*Handler{h, ns} {
			doc, _ := callJSON(t, h, "list_runs", `{"limit":100,"window":"1d"}`)
			for _, r := range items(doc, "runs") {
				switch tr, ok := r["traceId"]; {
				case !ok:
					same++
				case tr == r["id"]:
					t.Fatalf("run %v repeats its id as traceId", r["id"])
				default:
					differ++
				}
			}
		}
		if same == 0 || differ == 0 {
			t.Fatalf("%d runs without traceId and %d with one: the fixture has both kinds", same, differ)
		}
	})
	t.Run("get_run leaves out the trace id it was asked by", func(t *testing.T) {
		runs, _ := callJSON(t, h, "list_runs", `{"limit":1}`)
		id := items(runs, "runs")[0]["id"].(string)
		doc, isErr := callJSON(t, h, "get_run", `{"id":"`+id+`"}`)
		if _, ok := doc["traceId"]; isErr || ok {
			t.Fatalf("get_run %s: %v", id, doc)
		}
	})
	t.Run("related trace ids are left out when they are the related run ids", func(t *testing.T) {
		with, without := 0, 0
		for _, h := range []*Handler{h, ns} {
			doc, _ := callJSON(t, h, "get_recent_errors", `{"limit":100,"window":"1d"}`)
			for _, g := range items(doc, "groups") {
				tr, ok := g["relatedTraceIds"]
				switch {
				case ok && jsonEqual(tr, g["relatedRunIds"]):
					t.Fatalf("group %v repeats relatedRunIds as relatedTraceIds", g["fingerprint"])
				case ok:
					with++
				case g["relatedRunIds"] != nil:
					without++
				}
			}
		}
		if with == 0 || without == 0 {
			t.Fatalf("%d groups with relatedTraceIds, %d without: the fixtures have both kinds", with, without)
		}
	})
	t.Run("an operation's label is left out when it is its statement", func(t *testing.T) {
		doc, _ := callJSON(t, h, "analyze_db_bottlenecks", `{"limit":20,"window":"1d"}`)
		unlabelled := 0
		for _, o := range items(doc, "operations") {
			label, ok := o["operation"]
			if !ok {
				unlabelled++
				if o["statement"] == nil {
					t.Fatalf("operation %v has neither label nor statement", o)
				}
			} else if label == o["statement"] {
				t.Fatalf("operation %v repeats its statement as its label", label)
			}
		}
		if unlabelled == 0 {
			t.Fatal("every operation carries a label: the fixture has statements without a summary")
		}
	})
}

func TestGetRunIdsAreCaseInsensitiveWhereTheyAreHex(t *testing.T) {
	h, _ := fixtureServer(t, "")
	ns, _ := fixtureServer(t, "netscript")
	trace := firstRunID(t, h, "")
	if strings.ToUpper(trace) == trace {
		t.Fatalf("trace id %q has no letter to change the case of", trace)
	}
	doc, isErr := callJSON(t, h, "get_run", `{"id":"`+strings.ToUpper(trace)+`"}`)
	if isErr || doc["id"] != trace {
		t.Fatalf("get_run of the upper-case trace id %s: %v", strings.ToUpper(trace), doc)
	}
	exec := firstRunID(t, ns, "worker")
	if !strings.HasPrefix(exec, "exec-") {
		t.Fatalf("the netscript job run %q is not an execution id", exec)
	}
	if doc, isErr := callJSON(t, ns, "get_run", `{"id":"`+exec+`"}`); isErr || doc["id"] != exec {
		t.Fatalf("get_run of the execution id %s: %v", exec, doc)
	}
	// An execution id is the app's string: its case is part of it.
	if doc, isErr := callJSON(t, ns, "get_run", `{"id":"`+strings.ToUpper(exec)+`"}`); !isErr || doc["code"] != "run_not_found" {
		t.Fatalf("get_run of %s: %v, want run_not_found", strings.ToUpper(exec), doc)
	}
}

// firstRunID is the id of the newest run of the last day in domain ("" for any).
func firstRunID(t *testing.T, h *Handler, domain string) string {
	t.Helper()
	args := `{"limit":1,"window":"1d"}`
	if domain != "" {
		args = `{"limit":1,"window":"1d","domain":"` + domain + `"}`
	}
	doc, _ := callJSON(t, h, "list_runs", args)
	runs := items(doc, "runs")
	if len(runs) == 0 {
		t.Fatalf("list_runs %s: no run", args)
	}
	return runs[0]["id"].(string)
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

func TestEveryNameTakingArgumentAnswersAnUnknownName(t *testing.T) {
	h, _ := fixtureServer(t, "")
	hint := func(doc map[string]any) string { s, _ := doc["hint"].(string); return s }
	t.Run("get_app_status says the service is unknown, not that it is quiet", func(t *testing.T) {
		doc, _ := callJSON(t, h, "get_app_status", `{"service":"nosuch"}`)
		known := asList(doc["knownServices"])
		if doc["status"] != "unknown" || len(known) == 0 || len(known) > 10 || !strings.Contains(hint(doc), `"nosuch"`) ||
			!strings.Contains(hint(doc), "checkout") {
			t.Fatalf("get_app_status service=nosuch: %v", doc)
		}
		for i := 1; i < len(known); i++ {
			if known[i-1].(string) >= known[i].(string) {
				t.Fatalf("knownServices %v are not sorted", known)
			}
		}
	})
	t.Run("a service named in another case is pointed at", func(t *testing.T) {
		doc, _ := callJSON(t, h, "get_app_status", `{"service":"Checkout"}`)
		if doc["status"] != "unknown" || !strings.Contains(hint(doc), `did you mean "checkout"`) {
			t.Fatalf("get_app_status service=Checkout: %v", doc)
		}
	})
	t.Run("a quiet window is a warning that says there is no telemetry in it", func(t *testing.T) {
		doc, _ := callJSON(t, h, "get_app_status", `{"window":"1s"}`)
		if doc["status"] != "warn" || doc["knownServices"] != nil || !strings.Contains(hint(doc), "no telemetry in the window") {
			t.Fatalf("get_app_status window=1s: %v", doc)
		}
	})
	t.Run("a known service with data has no hint", func(t *testing.T) {
		doc, _ := callJSON(t, h, "get_app_status", `{"service":"checkout"}`)
		if doc["status"] == "unknown" || doc["hint"] != nil || doc["knownServices"] != nil {
			t.Fatalf("get_app_status service=checkout: %v", doc)
		}
	})
	for _, tool := range []string{"list_runs", "get_recent_errors"} {
		t.Run(tool+" refuses an unknown domain, listing the domains", func(t *testing.T) {
			doc, isErr := callJSON(t, h, tool, `{"domain":"nosuch"}`)
			if msg, _ := doc["message"].(string); !isErr || doc["code"] != "invalid_arguments" || !strings.Contains(msg, "http") {
				t.Fatalf("%s domain=nosuch: %v", tool, doc)
			}
		})
	}
	for _, tool := range []string{"list_runs", "get_recent_errors", "analyze_db_bottlenecks", "get_last_job_result"} {
		t.Run(tool+" says a service is unknown and which exist", func(t *testing.T) {
			doc, isErr := callJSON(t, h, tool, `{"service":"nosuch"}`)
			if isErr || !strings.Contains(hint(doc), `no service is named "nosuch"`) || !strings.Contains(hint(doc), "checkout") {
				t.Fatalf("%s service=nosuch: %v", tool, doc)
			}
		})
	}
	t.Run("an empty list_runs says the window holds no telemetry", func(t *testing.T) {
		doc, _ := callJSON(t, h, "list_runs", `{"window":"1s"}`)
		if doc["count"] != 0.0 || !strings.Contains(hint(doc), "no telemetry in the window") {
			t.Fatalf("list_runs window=1s: %v", doc)
		}
	})
	t.Run("no errors while the app ran needs no hint", func(t *testing.T) {
		doc, _ := callJSON(t, h, "get_recent_errors", `{"service":"nosuch"}`)
		quiet, _ := callJSON(t, h, "get_recent_errors", `{"window":"1s"}`)
		if doc["count"] != 0.0 || quiet["hint"] == nil {
			t.Fatalf("get_recent_errors: %v, %v", doc, quiet)
		}
	})
}

func TestAnalyzeDBBottlenecksPagesWithACursor(t *testing.T) {
	h, _ := fixtureServer(t, "")
	all, _ := callJSON(t, h, "analyze_db_bottlenecks", `{"limit":20,"window":"1d"}`)
	want := items(all, "operations")
	if len(want) < 3 {
		t.Fatalf("the fixture has %d operations in a day, want at least 3", len(want))
	}
	var got []map[string]any
	args := `{"limit":2,"window":"1d"}`
	for range want {
		doc, isErr := callJSON(t, h, "analyze_db_bottlenecks", args)
		if isErr {
			t.Fatalf("analyze_db_bottlenecks %s: %v", args, doc)
		}
		got = append(got, items(doc, "operations")...)
		page := doc["page"].(map[string]any)
		next, _ := page["nextCursor"].(string)
		if (next != "") != (len(got) < len(want)) || page["truncated"] != (len(got) < len(want)) {
			t.Fatalf("after %d of %d operations, page %v", len(got), len(want), page)
		}
		if next == "" {
			break
		}
		args = `{"limit":2,"window":"1d","cursor":"` + next + `"}`
	}
	if !jsonEqual(got, want) {
		t.Fatalf("paged operations %v, want %v", got, want)
	}
}

func TestFullDetailHoldsMoreThanStandard(t *testing.T) {
	h, _ := fixtureServer(t, "")
	for _, tc := range []struct{ tool, field, args string }{
		{"list_runs", "runs", `"window":"1d"`},
		{"analyze_db_bottlenecks", "operations", `"window":"1d","limit":1`},
	} {
		std, _ := callJSON(t, h, tc.tool, `{`+tc.args+`}`)
		full, _ := callJSON(t, h, tc.tool, `{`+tc.args+`,"detail":"full"}`)
		if n, m := len(items(std, tc.field)), len(items(full, tc.field)); m <= n {
			t.Errorf("%s: %d %s at full detail, %d at standard; want more", tc.tool, m, tc.field, n)
		}
	}
	// get_app_status lists the 20 busiest services at standard, up to 50 at full.
	b := &memory.Backend{}
	start := answersNow.Add(-time.Minute).UnixNano()
	for i := range 30 {
		b.AddSpans(telemetry.SpanRow{TraceID: fmt.Sprintf("%032x", i+1), SpanID: fmt.Sprintf("%016x", i+1), Name: "GET /",
			Kind: telemetry.KindServer, Service: fmt.Sprintf("svc-%02d", i), StartNs: start, DurationNs: 1e6, StatusCode: telemetry.CodeUnset})
	}
	f := flows.New(flows.Deps{Telemetry: engine.New(embeddedKind{b}, nil), Now: func() time.Time { return answersNow }})
	h = New(Options{Flows: f})
	std, _ := callJSON(t, h, "get_app_status", `{}`)
	full, _ := callJSON(t, h, "get_app_status", `{"detail":"full"}`)
	if n, m := len(items(std, "services")), len(items(full, "services")); n != 20 || m != 30 {
		t.Errorf("get_app_status: %d services at standard, %d at full; want 20 and 30", n, m)
	}
}
