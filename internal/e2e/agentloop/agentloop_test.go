// Package agentloop tests the agent's loop end to end: execute_command runs real programs
// instrumented with real SDKs, points their telemetry at runlens's receiver under an
// invocation id, and answers what the run did and where in the project it failed.
package agentloop

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runlens/runlens/gen"
	"github.com/runlens/runlens/internal/app"
	"github.com/runlens/runlens/internal/config"
)

// reportPy fails in charge() and sends its real traceback as the exception of an OTLP/JSON
// span, the way an instrumented Python service would, honouring the OTEL_* variables.
const reportPy = `import json, os, sys, time, traceback, urllib.request

def charge(amount):
    return amount / 0

def main():
    try:
        charge(5)
    except Exception as e:
        tb, msg, typ = traceback.format_exc(), str(e), type(e).__name__
    attrs = [{"key": "service.name", "value": {"stringValue": "billing-script"}}]
    for kv in os.environ.get("OTEL_RESOURCE_ATTRIBUTES", "").split(","):
        if "=" in kv:
            k, v = kv.split("=", 1)
            attrs.append({"key": k, "value": {"stringValue": v}})
    now = time.time_ns()
    ex = [{"key": "exception.type", "value": {"stringValue": typ}},
          {"key": "exception.message", "value": {"stringValue": msg}},
          {"key": "exception.stacktrace", "value": {"stringValue": tb}}]
    span = {"traceId": os.urandom(16).hex(), "spanId": os.urandom(8).hex(), "name": "charge card", "kind": 2,
            "startTimeUnixNano": str(now - 2000000), "endTimeUnixNano": str(now),
            "status": {"code": 2, "message": msg},
            "events": [{"name": "exception", "timeUnixNano": str(now), "attributes": ex}]}
    body = {"resourceSpans": [{"resource": {"attributes": attrs},
            "scopeSpans": [{"scope": {"name": "report.py"}, "spans": [span]}]}]}
    url = os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"].rstrip("/") + "/v1/traces"
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    urllib.request.urlopen(req, timeout=10).read()
    print("charge failed:", msg)
    sys.exit(1)

main()
`

// need finds a program, failing under CI (where the project's scripts install it) and
// skipping elsewhere.
func need(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is required for the agent-loop tests: %v", name, err)
		}
		t.Skipf("%s not found: %v", name, err)
	}
	return p
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// project lays out a workspace holding the failing program's source (at its path in this
// module, so a stack from this build maps onto it by suffix), its binary, the Python script,
// and a runlens.json that allows them.
func project(t *testing.T) (root, addr string) {
	t.Helper()
	gobin := need(t, "go")
	need(t, "python3")
	root = t.TempDir()
	src, err := os.ReadFile(filepath.Join("failprog", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	rel := filepath.Join(root, "internal", "e2e", "agentloop", "failprog")
	if err := os.MkdirAll(rel, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(rel, "main.go"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	build := exec.Command(gobin, "build", "-o", filepath.Join(root, "bin", "failprog"), "./failprog")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build failprog: %v\n%s", err, out)
	}
	if err := os.MkdirAll(filepath.Join(root, "scripts"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "scripts", "report.py"), []byte(reportPy), 0o644); err != nil {
		t.Fatal(err)
	}
	addr = freeAddr(t)
	cfg := map[string]any{
		"receiver": map[string]any{"address": addr},
		"commands": map[string]any{
			"catalog": []any{
				map[string]any{"path": "test", "argv": []string{"./bin/failprog"}},
				map[string]any{"path": "quiet", "argv": []string{"./bin/failprog"}, "telemetry": false},
				map[string]any{"path": "report", "argv": []string{"python3", "scripts/report.py"}},
			},
			"policy": map[string]any{"allow": []any{
				map[string]any{"name": "tests", "prefix": []string{"test"}},
				map[string]any{"name": "quiet", "prefix": []string{"quiet"}},
				map[string]any{"name": "report", "prefix": []string{"report"}},
			}},
		},
	}
	data, _ := json.Marshal(cfg)
	if err := os.WriteFile(filepath.Join(root, "runlens.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return root, addr
}

func start(t *testing.T, root string) *app.App {
	t.Helper()
	cfg, err := app.LoadConfig(root, func(string) string { return "" }, config.Overrides{ProjectRoot: root})
	if err != nil {
		t.Fatal(err)
	}
	a, err := app.New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	a.HostReceiver(ctx)
	t.Cleanup(func() { cancel(); _ = a.Close() })
	deadline := time.Now().Add(10 * time.Second)
	for a.ReceiverStatus(ctx).State != app.ReceiverHosted {
		if time.Now().After(deadline) {
			t.Fatalf("the receiver did not start: %+v", a.ReceiverStatus(ctx))
		}
		time.Sleep(20 * time.Millisecond)
	}
	return a
}

func TestAFailingCommandSaysWhatItDidAndWhereItFailed(t *testing.T) {
	root, _ := project(t)
	a := start(t, root)
	ctx := context.Background()

	out, err := a.Flows.ExecuteCommand(ctx, defaults(gen.ExecuteCommandInput{Command: "test"}))
	if err != nil {
		t.Fatal(err)
	}
	if out.ExitCode != 1 || !strings.Contains(out.OutputTail, "FAIL: TestCheckout") {
		t.Fatalf("exit %d, output %q", out.ExitCode, out.OutputTail)
	}
	tel := out.Telemetry
	if tel == nil {
		t.Fatalf("no telemetry part; note %q", *out.TelemetryNote)
	}
	if tel.Spans != 2 || len(tel.Errors) != 1 || len(tel.RunIDs) != 1 {
		b, _ := json.Marshal(tel)
		t.Fatalf("telemetry %s, want 2 spans, 1 failure, 1 run", b)
	}
	e := tel.Errors[0]
	if !strings.Contains(e.Message, "integer divide by zero") || e.Location == nil ||
		!strings.HasPrefix(*e.Location, "internal/e2e/agentloop/failprog/main.go:") || !strings.HasSuffix(*e.Location, "applyDiscount") {
		b, _ := json.Marshal(e)
		t.Fatalf("failure %s, want the divide by zero located in applyDiscount", b)
	}
	if strings.Contains(*e.Location, root) {
		t.Fatalf("the location %q reveals a path outside the project", *e.Location)
	}
	// The invocation filter returns exactly this run's telemetry, not a second run's.
	again, err := a.Flows.ExecuteCommand(ctx, defaults(gen.ExecuteCommandInput{Command: "test"}))
	if err != nil || again.Telemetry == nil || again.Telemetry.InvocationID == tel.InvocationID {
		t.Fatalf("second run: %+v, %v", again.Telemetry, err)
	}
	runs, err := a.Flows.ListRuns(ctx, defaults(gen.ListRunsInput{Invocation: &tel.InvocationID}))
	if err != nil {
		t.Fatal(err)
	}
	if len(runs.Runs) != 1 || runs.Runs[0].ID != tel.RunIDs[0] || runs.Runs[0].Status != gen.RunStatusError {
		t.Fatalf("list_runs of the invocation: %+v", runs.Runs)
	}
	all, err := a.Flows.ListRuns(ctx, defaults(gen.ListRunsInput{}))
	if err != nil || len(all.Runs) != 2 {
		t.Fatalf("list_runs of both: %d runs, %v", len(all.Runs), err)
	}
	errs, err := a.Flows.GetRecentErrors(ctx, defaults(gen.GetRecentErrorsInput{Invocation: &again.Telemetry.InvocationID}))
	if err != nil || errs.Count != 1 || errs.Groups[0].Location == nil {
		t.Fatalf("get_recent_errors of the second invocation: %+v, %v", errs, err)
	}
	perf, err := a.Flows.AnalyzeServicePerformance(ctx, defaults(gen.AnalyzeServicePerformanceInput{Service: "cart-tests", Invocation: &tel.InvocationID}))
	if err != nil || perf.SampleCount != 1 || perf.ErrorCount != 1 {
		t.Fatalf("performance of the invocation: %+v, %v", perf, err)
	}
	run, err := a.Flows.GetRun(ctx, defaults(gen.GetRunInput{ID: tel.RunIDs[0]}))
	if err != nil || !strings.Contains(run.Summary, "failed at internal/e2e/agentloop/failprog/main.go:") {
		t.Fatalf("get_run summary %q, %v", run.Summary, err)
	}
}

func TestAPythonTracebackIsLocatedInTheProject(t *testing.T) {
	root, _ := project(t)
	a := start(t, root)
	out, err := a.Flows.ExecuteCommand(context.Background(), defaults(gen.ExecuteCommandInput{Command: "report"}))
	if err != nil {
		t.Fatal(err)
	}
	if out.Telemetry == nil || len(out.Telemetry.Errors) != 1 {
		t.Fatalf("telemetry %+v, note %v, output %q", out.Telemetry, out.TelemetryNote, out.OutputTail)
	}
	e := out.Telemetry.Errors[0]
	if e.Location == nil || *e.Location != "scripts/report.py:4 in charge" || *e.ExceptionType != "ZeroDivisionError" {
		b, _ := json.Marshal(e)
		t.Fatalf("failure %s, want scripts/report.py:4 in charge", b)
	}
}

func TestTelemetryIsNotRedirectedWhenTheEntryOptsOutOrTheUserPointsItElsewhere(t *testing.T) {
	root, _ := project(t)
	a := start(t, root)
	ctx := context.Background()
	quiet, err := a.Flows.ExecuteCommand(ctx, defaults(gen.ExecuteCommandInput{Command: "quiet"}))
	if err != nil {
		t.Fatal(err)
	}
	if quiet.Telemetry != nil || quiet.TelemetryNote == nil || !strings.Contains(*quiet.TelemetryNote, "opts out") {
		t.Fatalf("an opted-out entry: telemetry %+v, note %v", quiet.Telemetry, quiet.TelemetryNote)
	}
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+freeAddr(t))
	mine, err := a.Flows.ExecuteCommand(ctx, defaults(gen.ExecuteCommandInput{Command: "test"}))
	if err != nil {
		t.Fatal(err)
	}
	if mine.Telemetry != nil || mine.TelemetryNote == nil || !strings.Contains(*mine.TelemetryNote, "OTEL_EXPORTER_OTLP_ENDPOINT") {
		t.Fatalf("a user's own endpoint: telemetry %+v, note %v", mine.Telemetry, mine.TelemetryNote)
	}
}
