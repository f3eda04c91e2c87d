package agentloop

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/runlens/runlens/gen"
	"github.com/runlens/runlens/internal/app"
)

// senderProject lays out a workspace running testdata/sender/sender.py (OTLP/JSON from Python,
// honouring the OTEL_* variables) under the catalog entries named in modes (path → sender
// arguments), with extra files and the given commands/telemetry settings, and starts runlens on
// it with its receiver hosted.
func senderProject(t *testing.T, modes map[string][]string, files map[string]string, commands, tel map[string]any) (string, *app.App) {
	t.Helper()
	py := need(t, "python3")
	root := t.TempDir()
	src, err := os.ReadFile(filepath.Join("testdata", "sender", "sender.py"))
	if err != nil {
		t.Fatal(err)
	}
	files = mapsWith(files, "scripts/sender.py", string(src))
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var catalog, allow []any
	for path, args := range modes {
		catalog = append(catalog, map[string]any{"path": path, "argv": append([]string{py, "scripts/sender.py"}, args...)})
		allow = append(allow, map[string]any{"name": strings.ReplaceAll(path, " ", "-"), "prefix": strings.Fields(path)})
	}
	cmds := map[string]any{"catalog": catalog, "policy": map[string]any{"allow": allow}}
	for k, v := range commands {
		cmds[k] = v
	}
	cfg := map[string]any{"receiver": map[string]any{"address": freeAddr(t)}, "commands": cmds}
	if tel != nil {
		cfg["telemetry"] = tel
	}
	data, _ := json.Marshal(cfg)
	if err := os.WriteFile(filepath.Join(root, "runlens.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return root, start(t, root)
}

func mapsWith(m map[string]string, k, v string) map[string]string {
	out := map[string]string{k: v}
	for k, v := range m {
		out[k] = v
	}
	return out
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 20s", what)
		}
		time.Sleep(20 * time.Millisecond) // polling a condition with a deadline
	}
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

// release creates the file a detached child waits for before it sends its last span.
func release(t *testing.T, dir string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// killLeftover stops the detached child of dir for good when the test ends, whatever happened.
func killLeftover(t *testing.T, dir string) {
	t.Cleanup(func() {
		_ = os.WriteFile(filepath.Join(dir, "go"), nil, 0o644)
		if b, err := os.ReadFile(filepath.Join(dir, "pid")); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 1 {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
}

func runNames(t *testing.T, a *app.App, invocation string) []string {
	t.Helper()
	runs, err := a.Flows.ListRuns(context.Background(), defaults(gen.ListRunsInput{Invocation: &invocation, Limit: 100}))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range runs.Runs {
		names = append(names, r.Name)
	}
	return names
}

// The flush grace: telemetry a process sends shortly after the command ended, within the grace,
// is in the answer; telemetry sent after the answer is not in it, and the invocation filter
// finds it later. A grace of zero answers at once, without the late span.
func TestTheFlushGraceHoldsWhatArrivesJustAfterTheCommandAndNoMore(t *testing.T) {
	tests := []struct {
		name      string
		graceMs   int
		wantSpans int
	}{
		{"a span sent 200 ms after exit is in the answer of a 2 s grace", 2000, 1},
		{"with no grace the answer is made before that span arrives", 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			_, a := senderProject(t, map[string][]string{"late": {"late", dir, "200"}}, nil,
				map[string]any{"telemetryGraceMs": tt.graceMs}, nil)
			killLeftover(t, dir)
			started := time.Now()
			out, err := a.Flows.ExecuteCommand(context.Background(), defaults(gen.ExecuteCommandInput{Command: "late"}))
			if err != nil {
				t.Fatal(err)
			}
			if took := time.Since(started); took > time.Duration(tt.graceMs)*time.Millisecond+5*time.Second {
				t.Fatalf("the answer took %s, beyond its grace of %d ms", took, tt.graceMs)
			}
			tel := out.Telemetry
			if tel == nil || tel.Spans != int64(tt.wantSpans) || len(tel.RunIDs) != tt.wantSpans {
				b, _ := json.Marshal(out)
				t.Fatalf("answer %s, want %d span(s) in its telemetry", b, tt.wantSpans)
			}
			if tt.wantSpans == 1 {
				if names := runNames(t, a, tel.InvocationID); len(names) != 1 || names[0] != "within-grace" {
					t.Fatalf("runs of the invocation after the answer: %v", names)
				}
			}
			release(t, dir)
			eventually(t, "the child's last span", func() bool { return exists(filepath.Join(dir, "done")) })
			eventually(t, "the filter finding what came after the answer", func() bool {
				names := runNames(t, a, tel.InvocationID)
				return len(names) == 2 && strings.Contains(strings.Join(names, ","), "after-grace")
			})
		})
	}
}

// A command that forks a child which keeps sending after the command exits gets a bounded
// answer that says telemetry was still arriving; what the child sends later is found by the
// invocation filter.
func TestACommandWhoseChildKeepsSendingGetsABoundedAnswer(t *testing.T) {
	dir := t.TempDir()
	_, a := senderProject(t, map[string][]string{"chatty": {"chatty", dir}}, nil, map[string]any{"telemetryGraceMs": 800}, nil)
	killLeftover(t, dir)
	eventuallyRunning := func() bool { return exists(filepath.Join(dir, "pid")) }
	started := time.Now()
	out, err := a.Flows.ExecuteCommand(context.Background(), defaults(gen.ExecuteCommandInput{Command: "chatty"}))
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(started); took > 800*time.Millisecond+5*time.Second {
		t.Fatalf("the answer took %s with a child still sending", took)
	}
	eventually(t, "the detached child", eventuallyRunning)
	if exists(filepath.Join(dir, "done")) {
		t.Fatal("the child finished before the answer: the test proves nothing")
	}
	tel := out.Telemetry
	if tel == nil || tel.Spans == 0 || len(tel.RunIDs) > 10 || out.TelemetryNote == nil || !strings.Contains(*out.TelemetryNote, "still arriving") {
		b, _ := json.Marshal(out)
		t.Fatalf("answer %s, want some spans, bounded run ids and a note that telemetry was still arriving", b)
	}
	if raw, _ := json.Marshal(out); len(raw) > 32<<10 {
		t.Fatalf("answer of %d bytes", len(raw))
	}
	release(t, dir)
	eventually(t, "the child's last span", func() bool { return exists(filepath.Join(dir, "done")) })
	eventually(t, "the filter finding the span sent after the answer", func() bool {
		return strings.Contains(","+strings.Join(runNames(t, a, tel.InvocationID), ",")+",", ",last,")
	})
}

// Two commands at once: each answer's telemetry holds only its own invocation's spans, though
// both run the same program under the same service name at the same time.
func TestTwoCommandsAtOnceEachReportOnlyTheirOwnTelemetry(t *testing.T) {
	dir := t.TempDir()
	_, a := senderProject(t, map[string][]string{"pair a": {"pair", dir, "2"}, "pair b": {"pair", dir, "3"}}, nil, nil, nil)
	var wg sync.WaitGroup
	outs := make([]gen.ExecuteCommandOutput, 2)
	errs := make([]error, 2)
	for i, c := range []string{"pair a", "pair b"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i], errs[i] = a.Flows.ExecuteCommand(context.Background(), defaults(gen.ExecuteCommandInput{Command: c}))
		}()
	}
	wg.Wait()
	for i, want := range []int64{2, 3} {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		tel := outs[i].Telemetry
		if outs[i].ExitCode != 0 || tel == nil || tel.Spans != want || len(tel.RunIDs) != 1 {
			b, _ := json.Marshal(outs[i])
			t.Fatalf("command %d: %s, want %d spans of one run (exit 0: both ran at once)", i, b, want)
		}
	}
	if outs[0].Telemetry.InvocationID == outs[1].Telemetry.InvocationID || outs[0].Telemetry.RunIDs[0] == outs[1].Telemetry.RunIDs[0] {
		t.Fatal("the two commands share an invocation or a run")
	}
	for i := range outs {
		tel := outs[i].Telemetry
		runs, err := a.Flows.ListRuns(context.Background(), defaults(gen.ListRunsInput{Invocation: &tel.InvocationID}))
		if err != nil || len(runs.Runs) != 1 || runs.Runs[0].ID != tel.RunIDs[0] {
			t.Fatalf("list_runs of invocation %d: %+v, %v", i, runs.Runs, err)
		}
	}
}

// runlens.invocation.id is runlens's to set: an inherited one is replaced and the answer says
// so; a process that names another invocation's id itself is counted under that invocation, as
// documented, and its own answer says nothing arrived.
func TestATraceThatClaimsAnotherInvocationsId(t *testing.T) {
	_, a := senderProject(t, map[string][]string{"once": {"once", "first", "1"}, "claim": {"claim"}}, nil, map[string]any{"telemetryGraceMs": 1000}, nil)
	ctx := context.Background()
	first, err := a.Flows.ExecuteCommand(ctx, defaults(gen.ExecuteCommandInput{Command: "once"}))
	if err != nil || first.Telemetry == nil || first.Telemetry.Spans != 1 {
		t.Fatalf("first: %+v, %v", first.Telemetry, err)
	}
	id := first.Telemetry.InvocationID

	t.Run("an inherited invocation id is replaced, and the answer says so", func(t *testing.T) {
		t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment.name=test,runlens.invocation.id="+id)
		out, err := a.Flows.ExecuteCommand(ctx, defaults(gen.ExecuteCommandInput{Command: "once"}))
		if err != nil {
			t.Fatal(err)
		}
		if out.Telemetry == nil || out.Telemetry.InvocationID == id || out.Telemetry.Spans != 1 ||
			out.TelemetryNote == nil || !strings.Contains(*out.TelemetryNote, "replaced") {
			b, _ := json.Marshal(out)
			t.Fatalf("answer %s, want its own invocation's span and a note that the inherited id was replaced", b)
		}
		if names := runNames(t, a, id); len(names) != 1 {
			t.Fatalf("the first invocation now has runs %v; the inherited id leaked into it", names)
		}
	})
	t.Run("a process naming another invocation's id itself is counted under that id", func(t *testing.T) {
		out, err := a.Flows.ExecuteCommand(ctx, defaults(gen.ExecuteCommandInput{Command: "claim", Args: []string{id}}))
		if err != nil {
			t.Fatal(err)
		}
		if out.Telemetry == nil || out.Telemetry.Spans != 0 || out.TelemetryNote == nil || !strings.Contains(*out.TelemetryNote, "nothing arrived") {
			b, _ := json.Marshal(out)
			t.Fatalf("answer %s, want no spans of its own and a note saying nothing arrived", b)
		}
		eventually(t, "the claimed span under the first invocation", func() bool {
			return strings.Contains(strings.Join(runNames(t, a, id), ","), "claimed")
		})
	})
}

// A user's own exporter settings are never overridden silently: the command sees them as they
// were, is not tagged, and the answer says which variable kept its telemetry elsewhere. An
// OTLP/HTTP protocol choice is kept and the telemetry still reported.
func TestAUsersOwnExporterSettingsAreNeverOverridden(t *testing.T) {
	_, a := senderProject(t, map[string][]string{"env": {"env"}}, nil, nil, nil)
	tests := []struct {
		name, key, value string
		reported         bool
	}{
		{"an endpoint for every signal keeps the command's telemetry there", "OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9", false},
		{"an endpoint for traces alone keeps them there", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://127.0.0.1:9/v1/traces", false},
		{"a gRPC protocol is not switched to OTLP/HTTP", "OTEL_EXPORTER_OTLP_PROTOCOL", "grpc", false},
		{"an OTLP/JSON protocol is kept and the telemetry reported", "OTEL_EXPORTER_OTLP_PROTOCOL", "http/json", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(tt.key, tt.value)
			out, err := a.Flows.ExecuteCommand(context.Background(), defaults(gen.ExecuteCommandInput{Command: "env"}))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out.OutputTail, tt.key+"="+tt.value+"\n") {
				t.Fatalf("the command saw %q, want %s=%s", out.OutputTail, tt.key, tt.value)
			}
			if got := strings.Contains(out.OutputTail, "tagged=True"); got != tt.reported {
				t.Fatalf("tagged with an invocation: %v, want %v (output %q)", got, tt.reported, out.OutputTail)
			}
			if tt.reported {
				if out.Telemetry == nil {
					t.Fatalf("no telemetry part; note %v", out.TelemetryNote)
				}
				return
			}
			if out.Telemetry != nil || out.TelemetryNote == nil || !strings.Contains(*out.TelemetryNote, tt.key) {
				b, _ := json.Marshal(out)
				t.Fatalf("answer %s, want no telemetry and a note naming %s", b, tt.key)
			}
		})
	}
}

// A failure's source line is shown at full detail only from a readable project file: a file on
// the configured deny list, a gitignored file, .env, a file reached through a symbolic link out
// of the project and a frame climbing to ../../etc/passwd are refused, and nothing of them
// shows in the answer. Their tracebacks are Python's own.
func TestSnippetsAreRefusedOutsideWhatTheProjectAllows(t *testing.T) {
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "tax.py"), []byte("def handler():\n    raise ValueError('x')  # outside-marker\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	line := func(marker string) string {
		return "def handler():\n    raise ValueError('pricing rule failed')  # " + marker + "\nhandler()\n"
	}
	cases := []struct {
		name, file, marker string
		wantLocation       string // "" when the frame must not be located at file
		wantSnippet        bool
	}{
		{"a project file shows its line", "app/rules.py", "shown-marker", "app/rules.py:2 in handler", true},
		{"a file on the deny list is located but not shown", "secret_rules/pricing.py", "denied-marker", "secret_rules/pricing.py:2 in handler", false},
		{"a gitignored file is located but not shown", "generated/rates.py", "ignored-marker", "generated/rates.py:2 in handler", false},
		{"a .env file is never read", ".env", "env-marker", "", false},
		{"a file linked from outside the project is not read", "linked/tax.py", "outside-marker", "", false},
		{"a frame climbing out of the project is not read", "../../etc/passwd", "root:", "", false},
	}
	modes := map[string][]string{}
	files := map[string]string{".gitignore": "generated/\n"}
	for i, c := range cases {
		modes["fail "+strconv.Itoa(i)] = []string{"fail", c.file}
		if !strings.HasPrefix(c.file, "../") && c.file != "linked/tax.py" {
			files[c.file] = line(c.marker)
		}
	}
	files[".env"] = "A=1\nAPI_TOKEN=env-marker-0123456789\n"
	root, a := senderProject(t, modes, files, nil, map[string]any{"stackSnippetDeny": []string{"secret_rules/**"}})
	if err := os.MkdirAll(filepath.Join(root, "linked"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "tax.py"), filepath.Join(root, "linked", "tax.py")); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := a.Flows.ExecuteCommand(ctx, defaults(gen.ExecuteCommandInput{Command: "fail " + strconv.Itoa(i), Detail: gen.DetailFull}))
			if err != nil || out.Telemetry == nil || len(out.Telemetry.Errors) != 1 {
				t.Fatalf("run: %+v, %v; output %q", out.Telemetry, err, out.OutputTail)
			}
			id := out.Telemetry.InvocationID
			errs, err := a.Flows.GetRecentErrors(ctx, defaults(gen.GetRecentErrorsInput{Invocation: &id, Detail: gen.DetailFull}))
			if err != nil || len(errs.Groups) != 1 {
				t.Fatalf("get_recent_errors: %+v, %v", errs, err)
			}
			g := errs.Groups[0]
			raw, _ := json.Marshal(errs)
			if c.wantLocation != "" && (g.Location == nil || *g.Location != c.wantLocation) {
				t.Fatalf("location %v, want %s", g.Location, c.wantLocation)
			}
			if c.wantLocation == "" && g.Location != nil && strings.Contains(*g.Location, strings.TrimPrefix(c.file, "../../")) {
				t.Fatalf("location %s points into a file that is not the project's to read", *g.Location)
			}
			if got := g.Snippet != nil && strings.Contains(*g.Snippet, c.marker); got != c.wantSnippet {
				t.Fatalf("snippet %v: shown %v, want %v", g.Snippet, got, c.wantSnippet)
			}
			if !c.wantSnippet && strings.Contains(string(raw), c.marker) {
				t.Fatalf("the answer shows the refused file's text: %s", raw)
			}
			if strings.Contains(string(raw), outside) || strings.Contains(string(raw), root) {
				t.Fatalf("the answer reveals a path on this machine: %s", raw)
			}
		})
	}
}
