package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/runlens/runlens/internal/app"
	"github.com/runlens/runlens/internal/config"
	"github.com/runlens/runlens/internal/testkit"
)

// The commands this package's tests run in-process never start a detached receiver: its
// program would be the test binary. The tests of the detached receiver run the real binary.
func TestMain(m *testing.M) {
	os.Setenv(config.EnvDetached, "false")
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

var (
	binOnce sync.Once
	binDir  string
	binErr  error
)

// runlensBinary builds the real binary once (testkit.Binary) for the tests that start it.
func runlensBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() { binDir, binErr = os.MkdirTemp("", "runlens-bin-") })
	if binErr != nil {
		t.Fatal(binErr)
	}
	bin, err := testkit.Binary(binDir)
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// freeAddr is a loopback address nothing listens on, chosen by the kernel.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// detachedProject is a project whose runlens.json gives its receivers free ports, and whose
// detached receivers are killed when the test ends.
type detachedProject struct {
	t          *testing.T
	bin, root  string
	http, grpc string
	env        []string
	// stderr is what the last session wrote to its standard error, for failure messages
	// (sessions may run at once: mu guards it).
	mu     sync.Mutex
	stderr string
}

func newDetachedProject(t *testing.T, env ...string) *detachedProject {
	t.Helper()
	p := &detachedProject{t: t, bin: runlensBinary(t), root: t.TempDir(), http: freeAddr(t), grpc: freeAddr(t)}
	cfg := fmt.Sprintf(`{"receiver": {"address": %q, "grpcAddress": %q}}`, p.http, p.grpc)
	if err := os.WriteFile(filepath.Join(p.root, "runlens.json"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "RUNLENS_") && !strings.HasPrefix(kv, "OTEL_") {
			p.env = append(p.env, kv)
		}
	}
	p.env = append(p.env, env...)
	t.Cleanup(p.killReceivers)
	return p
}

// killReceivers kills every runlens collect of this project still running.
func (p *detachedProject) killReceivers() {
	for _, pid := range p.receivers() {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(p.receivers()) > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond) // polling for the processes to go, with a deadline
	}
}

// receivers are the pids of the processes running `collect` for this project, found by their
// arguments.
func (p *detachedProject) receivers() []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		raw, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(string(raw), "\x00")
		if len(args) > 2 && args[1] == "collect" && strings.Contains(string(raw), "\x00"+p.root+"\x00") && !zombie(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// zombie reports whether pid has exited and waits only to be reaped.
func zombie(pid int) bool {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(raw)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] == 'Z'
}

// pid is the pid the project's pid file names, 0 when there is none.
func (p *detachedProject) pid() int {
	raw, err := os.ReadFile(filepath.Join(app.ReceiverDir(filepath.Join(p.root, config.DefaultStorePath)), "pid"))
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(raw)))
	return n
}

// run runs a runlens command of the project and returns its exit code and output.
func (p *detachedProject) run(args ...string) (int, string) {
	p.t.Helper()
	cmd := exec.Command(p.bin, append(args, "--project-root", p.root)...)
	cmd.Env = p.env
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), string(out)
	} else if err != nil {
		p.t.Fatal(err)
	}
	return 0, string(out)
}

// session runs `runlens serve` over stdio: initialize, then each tool call in turn, then EOF.
// It returns the structured answers of the calls.
func (p *detachedProject) session(calls ...toolCall) []json.RawMessage {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, p.bin, "serve", "--project-root", p.root)
	cmd.Env = p.env
	stdin, err := cmd.StdinPipe()
	if err != nil {
		p.t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		p.t.Fatal(err)
	}
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		p.t.Fatal(err)
	}
	lines := bufio.NewScanner(stdout)
	lines.Buffer(make([]byte, 1<<20), 4<<20)
	send := func(msg string) {
		if _, err := io.WriteString(stdin, msg+"\n"); err != nil {
			p.t.Fatalf("write to serve: %v\nstderr:\n%s", err, stderr.String())
		}
	}
	answer := func(id int) json.RawMessage {
		for lines.Scan() {
			var m struct {
				ID     *int `json:"id"`
				Result struct {
					Structured json.RawMessage `json:"structuredContent"`
				} `json:"result"`
				Error json.RawMessage `json:"error"`
			}
			if json.Unmarshal(lines.Bytes(), &m) != nil || m.ID == nil || *m.ID != id {
				continue
			}
			if m.Error != nil {
				p.t.Fatalf("call %d: %s", id, m.Error)
			}
			return m.Result.Structured
		}
		p.t.Fatalf("serve ended before answering %d\nstderr:\n%s", id, stderr.String())
		return nil
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"detached-test","version":"1"}}}`)
	answer(1)
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	var out []json.RawMessage
	for i, c := range calls {
		args, _ := json.Marshal(c.args)
		send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, i+2, c.tool, args))
		out = append(out, answer(i+2))
	}
	stdin.Close()
	for lines.Scan() {
	}
	if err := cmd.Wait(); err != nil {
		p.t.Fatalf("serve: %v\nstderr:\n%s", err, stderr.String())
	}
	p.mu.Lock()
	p.stderr = stderr.String()
	p.mu.Unlock()
	return out
}

type toolCall struct {
	tool string
	args map[string]any
}

// sendSpans exports a failing request and a healthy one with the OpenTelemetry Go SDK's
// OTLP/HTTP exporter, and returns once the receiver has acknowledged them.
func sendSpans(t *testing.T, addr, service string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL("http://"+addr+"/v1/traces"),
		otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false}))
	if err != nil {
		t.Fatal(err)
	}
	res := resource.NewSchemaless(attribute.String("service.name", service))
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithResource(res), sdktrace.WithSpanProcessor(rec))
	tr := tp.Tracer("detached-test")
	_, bad := tr.Start(ctx, "GET /checkout", trace.WithSpanKind(trace.SpanKindServer))
	bad.SetAttributes(attribute.String("http.request.method", "GET"), attribute.Int("http.response.status_code", 500))
	bad.SetStatus(codes.Error, "payment declined for order 42")
	bad.End()
	_, good := tr.Start(ctx, "GET /products", trace.WithSpanKind(trace.SpanKindServer))
	good.End()
	// The exporter's own answer: nil only once the receiver acknowledged the batch.
	if err := exp.ExportSpans(ctx, rec.Ended()); err != nil {
		t.Fatalf("export to %s: %v", addr, err)
	}
	_ = exp.Shutdown(ctx)
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, within)
		}
		time.Sleep(20 * time.Millisecond) // polling a condition with a deadline
	}
}

// lastStderr is what the last session wrote to its standard error.
func (p *detachedProject) lastStderr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr
}
