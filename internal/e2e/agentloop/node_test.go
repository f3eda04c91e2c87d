package agentloop

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runlens/runlens/gen"
)

// nodeProject lays out a TypeScript workspace (testdata/node: a test run instrumented with the
// OpenTelemetry JS SDK) beside a node_modules link to the pinned SDK, and a runlens.json that
// allows running it with the pinned Node 22, which runs .ts files by stripping their types:
// its stack traces name the .ts sources and their lines.
func nodeProject(t *testing.T) string {
	t.Helper()
	tools := nodeTools(t)
	root := t.TempDir()
	err := filepath.WalkDir(filepath.Join("testdata", "node"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(filepath.Join("testdata", "node"), p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(root, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(root, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(tools, "node_modules"), filepath.Join(root, "node_modules")); err != nil {
		t.Fatal(err)
	}
	node := filepath.Join(tools, "node_modules", ".bin", "node")
	cfg := map[string]any{
		"receiver": map[string]any{"address": freeAddr(t)},
		"commands": map[string]any{
			"catalog": []any{
				map[string]any{"path": "test checkout", "argv": []string{node, "src/main.ts", "checkout"}},
				map[string]any{"path": "test deep", "argv": []string{node, "src/main.ts", "deep"}},
			},
			"policy": map[string]any{"allow": []any{map[string]any{"name": "tests", "prefix": []string{"test"}}}},
		},
	}
	data, _ := json.Marshal(cfg)
	if err := os.WriteFile(filepath.Join(root, "runlens.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

// A Node test run instrumented with the OpenTelemetry JS SDK, run by the real binary over MCP:
// its answer names the thrown error, where in the project's TypeScript it was thrown, and the
// run to open; the invocation filter returns exactly that run, not a second invocation's.
func TestANodeTestRunSaysWhatItDidAndWhereItFailedOverMCP(t *testing.T) {
	root := nodeProject(t)
	s := serve(t, root)

	var out gen.ExecuteCommandOutput
	s.call("execute_command", map[string]any{"command": "test checkout"}, &out)
	if out.ExitCode != 1 || !strings.Contains(out.OutputTail, "not ok 1 - checkout") {
		t.Fatalf("exit %d, output %q", out.ExitCode, out.OutputTail)
	}
	tel := out.Telemetry
	if tel == nil {
		t.Fatalf("no telemetry part; note %v", out.TelemetryNote)
	}
	if tel.Spans != 1 || len(tel.Errors) != 1 || len(tel.RunIDs) != 1 || len(tel.Services) != 1 || tel.Services[0] != "cart-node-tests" {
		b, _ := json.Marshal(tel)
		t.Fatalf("telemetry %s, want 1 span of cart-node-tests, 1 failure, 1 run", b)
	}
	e := tel.Errors[0]
	if !strings.Contains(e.Message, "discount of 0% leaves nothing to divide by") || e.ExceptionType == nil || *e.ExceptionType != "RangeError" ||
		e.Location == nil || *e.Location != "src/cart/checkout.ts:5 in applyDiscount" || e.RunID == nil || *e.RunID != tel.RunIDs[0] {
		b, _ := json.Marshal(e)
		t.Fatalf("failure %s, want the RangeError at src/cart/checkout.ts:5 in applyDiscount of run %s", b, tel.RunIDs[0])
	}
	if raw, _ := json.Marshal(out); strings.Contains(string(raw), root) {
		t.Fatalf("the answer reveals the project's path on this machine: %s", raw)
	}

	var again gen.ExecuteCommandOutput
	s.call("execute_command", map[string]any{"command": "test checkout"}, &again)
	if again.Telemetry == nil || len(again.Telemetry.RunIDs) != 1 || again.Telemetry.RunIDs[0] == tel.RunIDs[0] {
		t.Fatalf("second run: %+v", again.Telemetry)
	}
	var runs gen.ListRunsOutput
	s.call("list_runs", map[string]any{"invocation": tel.InvocationID}, &runs)
	if len(runs.Runs) != 1 || runs.Runs[0].ID != tel.RunIDs[0] || runs.Runs[0].Status != gen.RunStatusError || runs.Runs[0].Service != "cart-node-tests" {
		t.Fatalf("list_runs of the invocation: %+v, want exactly run %s", runs.Runs, tel.RunIDs[0])
	}
	var all gen.ListRunsOutput
	s.call("list_runs", map[string]any{}, &all)
	if len(all.Runs) != 2 {
		t.Fatalf("list_runs of both invocations: %d runs, want 2", len(all.Runs))
	}
	var errs gen.GetRecentErrorsOutput
	s.call("get_recent_errors", map[string]any{"invocation": tel.InvocationID, "detail": "full"}, &errs)
	if errs.Count != 1 || len(errs.Groups) != 1 || errs.Groups[0].Location == nil || *errs.Groups[0].Location != *e.Location ||
		errs.Groups[0].Snippet == nil || !strings.HasPrefix(*errs.Groups[0].Snippet, "5: ") || !strings.Contains(*errs.Groups[0].Snippet, "throw new RangeError(") {
		b, _ := json.Marshal(errs)
		t.Fatalf("get_recent_errors of the invocation: %s", b)
	}
	var run gen.GetRunOutput
	s.call("get_run", map[string]any{"id": tel.RunIDs[0]}, &run)
	if !strings.Contains(run.Summary, "failed at src/cart/checkout.ts:5 in applyDiscount") {
		t.Fatalf("get_run summary %q does not say where it failed", run.Summary)
	}
}

// A real V8 stack of 10,000 frames (unbounded Error.stackTraceLimit, deep recursion) gives
// bounded answers: execute_command and get_run stay within their byte budgets, frames are
// capped, and the failure is still located at the frame that threw.
func TestATenThousandFrameNodeStackGivesBoundedAnswers(t *testing.T) {
	root := nodeProject(t)
	s := serve(t, root)

	var out gen.ExecuteCommandOutput
	size := s.call("execute_command", map[string]any{"command": "test deep"}, &out)
	if out.Telemetry == nil || len(out.Telemetry.Errors) != 1 {
		t.Fatalf("telemetry %+v, note %v, output %q", out.Telemetry, out.TelemetryNote, out.OutputTail)
	}
	if size > 32<<10 {
		t.Fatalf("execute_command answered %d bytes, over its 32 KiB budget", size)
	}
	if l := out.Telemetry.Errors[0].Location; l == nil || *l != "src/cart/deep.ts:4 in walk" {
		t.Fatalf("location %v, want src/cart/deep.ts:4 in walk", l)
	}
	for _, detail := range []string{"standard", "full"} {
		var run gen.GetRunOutput
		size := s.call("get_run", map[string]any{"id": out.Telemetry.RunIDs[0], "detail": detail}, &run)
		if detail == "standard" && size > 32<<10 {
			t.Fatalf("standard get_run answered %d bytes, over its 32 KiB budget", size)
		}
		var frames int
		for _, sp := range run.Spans {
			frames = max(frames, len(sp.Frames))
			if len(sp.Frames) > 0 && sp.Frames[0] != "src/cart/deep.ts:4 in walk" {
				t.Fatalf("%s get_run: top frame %q", detail, sp.Frames[0])
			}
		}
		if frames == 0 || frames > 20 || (detail == "standard" && frames > 3) {
			t.Fatalf("%s get_run carries %d frames of a 10,000-frame stack", detail, frames)
		}
	}
	var errs gen.GetRecentErrorsOutput
	if size := s.call("get_recent_errors", map[string]any{"invocation": out.Telemetry.InvocationID}, &errs); size > 16<<10 || len(errs.Groups) != 1 {
		t.Fatalf("get_recent_errors: %d bytes, %d groups", size, len(errs.Groups))
	}
}
