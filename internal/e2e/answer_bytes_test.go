package e2e

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

	"github.com/runlens/runlens/internal/telemetry/engine"

	"github.com/runlens/runlens/gen"
	"github.com/runlens/runlens/internal/e2e/corpus/captured"
	"github.com/runlens/runlens/internal/flows"
	"github.com/runlens/runlens/internal/golden"
	"github.com/runlens/runlens/internal/mcp"
	"github.com/runlens/runlens/internal/server"
	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/memory"
)

// answerGrowth is how much a standard answer may grow before the B9 golden asks why.
const answerGrowth = 0.10

// answerBytesGolden records, per corpus app and telemetry tool, the bytes of the standard
// answer (BENCHMARKS.md B9) to the tool's default arguments over the capture.
var answerBytesGolden = filepath.Join("testdata", "answer_bytes.json")

// describedEmbedded is the in-memory backend described as the embedded store, a source kind
// the get_app_status schema knows.
type describedEmbedded struct{ *memory.Backend }

func (d describedEmbedded) Describe(ctx context.Context) telemetry.SourceInfo {
	info := d.Backend.Describe(ctx)
	info.Kind = "embedded"
	return info
}

// TestStandardAnswersKeepTheirSize holds the standard answer of every telemetry tool over the
// captured corpus apps to the sizes recorded in testdata/answer_bytes.json: an answer that
// grows by more than 10% fails, so that a change that makes answers larger says why (and
// updates the table with UPDATE_GOLDEN=1).
func TestStandardAnswersKeepTheirSize(t *testing.T) {
	got := map[string]map[string]int{}
	for _, app := range corpusApps {
		now := time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)
		c, err := captured.Load(filepath.Join("corpus", "captured", captured.Dir, app+".json.gz"), now)
		if err != nil {
			t.Fatal(err)
		}
		m := &memory.Backend{}
		m.AddSpans(c.Spans...)
		m.AddLogRows(c.Logs...)
		f := flows.New(flows.Deps{Telemetry: engine.New(describedEmbedded{m}, nil), Now: func() time.Time { return now.Add(time.Second) }})
		got[app] = standardAnswerBytes(t, server.New(server.Options{Flows: f}))
	}
	raw, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]map[string]int
	if err := json.Unmarshal(golden.Read(t, answerBytesGolden, append(raw, '\n')), &want); err != nil {
		t.Fatal(err)
	}
	for _, app := range corpusApps {
		for tool, n := range got[app] {
			was, ok := want[app][tool]
			switch {
			case !ok:
				t.Errorf("%s on %s: no recorded size; run UPDATE_GOLDEN=1 go test ./internal/e2e -run TestStandardAnswersKeepTheirSize", tool, app)
			case float64(n) > float64(was)*(1+answerGrowth):
				t.Errorf("%s on %s: the standard answer grew from %d to %d bytes (+%.0f%%, more than %.0f%%): say why in the commit "+
					"that makes it so, and record the new size with UPDATE_GOLDEN=1 go test ./internal/e2e -run TestStandardAnswersKeepTheirSize",
					tool, app, was, n, 100*(float64(n)/float64(was)-1), 100*answerGrowth)
			case n != was:
				t.Logf("%s on %s: %d bytes, recorded %d", tool, app, n, was)
			}
		}
	}
}

// standardAnswerBytes calls each telemetry tool with its default arguments over the last day
// (get_run on the newest run, analyze_service_performance on the busiest service) and returns
// the bytes of each answer's structured content.
func standardAnswerBytes(t *testing.T, h *server.Handler) map[string]int {
	t.Helper()
	sizes := map[string]int{}
	call := func(tool string, args map[string]any) map[string]any {
		t.Helper()
		args["window"] = "1d"
		if tool == gen.ToolGetRun {
			delete(args, "window")
		}
		raw, _ := json.Marshal(args)
		res, err := h.CallTool(context.Background(), mcp.CallRequest{Name: tool, Arguments: raw})
		if err != nil || res.IsError {
			t.Fatalf("%s %s: %v %s", tool, raw, err, res.Structured)
		}
		sizes[tool] = len(res.Structured)
		var doc map[string]any
		if err := json.Unmarshal(res.Structured, &doc); err != nil {
			t.Fatal(err)
		}
		return doc
	}
	status := call(gen.ToolGetAppStatus, map[string]any{})
	runs := call(gen.ToolListRuns, map[string]any{})
	call(gen.ToolGetRecentErrors, map[string]any{})
	call(gen.ToolGetLastJobResult, map[string]any{})
	call(gen.ToolAnalyzeDBBottlenecks, map[string]any{})
	if l, _ := runs["runs"].([]any); len(l) > 0 {
		call(gen.ToolGetRun, map[string]any{"id": l[0].(map[string]any)["id"]})
	}
	if l, _ := status["services"].([]any); len(l) > 0 {
		call(gen.ToolAnalyzeServicePerformance, map[string]any{"service": l[0].(map[string]any)["service"]})
	}
	var line []string
	for _, k := range slices.Sorted(maps.Keys(sizes)) {
		line = append(line, fmt.Sprintf("%s %d", k, sizes[k]))
	}
	t.Logf("standard answer bytes: %s", strings.Join(line, ", "))
	return sizes
}
