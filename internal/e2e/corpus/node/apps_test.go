package node

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/runlens/runlens/internal/testkit"
)

// The Node packages the corpus apps load, all pinned in .ci/tools/package.json.
var nodePackages = []string{
	"@opentelemetry/sdk-node", "@opentelemetry/auto-instrumentations-node", "@opentelemetry/api",
	"express", "pg", "koa", "@koa/router", "mysql2", "ioredis", "pino",
}

// unavailable fails under CI=true, where the project's scripts install what is missing, and
// skips elsewhere with the hint.
func unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s (required under CI=true)", msg)
	}
	t.Skipf("%s; run `make tools` or set RUNLENS_NODE_TOOLS=\"$(.ci/install-tools)\"", msg)
}

// nodeTools is the pinned Node tooling folder: the Node 22 runtime and the apps' packages.
func nodeTools(t testing.TB) string {
	t.Helper()
	dir, err := testkit.NodeTools(nodePackages...)
	if err != nil {
		unavailable(t, "node tooling unavailable: %v", err)
	}
	return dir
}

// project lays the two apps out as one workspace, the way a developer's checkout looks: each
// app in its folder, node_modules (the pinned packages) beside them. runlens's project root
// is this folder, so stack frames in the apps' files are the project's own.
func project(t *testing.T, tools string) string {
	t.Helper()
	root := t.TempDir()
	err := filepath.WalkDir("testdata", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel("testdata", p)
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
	return root
}

// nodeEnv is the environment of a Node process: no OTEL_ variable of the test's own.
func nodeEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OTEL_") && !strings.HasPrefix(kv, "NODE_") {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// seed runs an app's seed.js (no telemetry) to completion.
func seed(t *testing.T, node, dir string, env ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "seed.js")
	cmd.Dir = dir
	cmd.Env = nodeEnv(env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s/seed.js: %v\n%s", filepath.Base(dir), err, out)
	}
}

// nodeApp is one running app: `node --require ./telemetry.js app.js` with the standard OTEL_*
// variables pointing its exporters at runlens's receiver.
type nodeApp struct {
	name string
	base string
	cmd  *exec.Cmd
	out  *lockedBuffer
	done chan struct{}
	err  error
	stop sync.Once
}

// startApp runs dir/app.js as service, exporting over protocol (http/protobuf or grpc) to
// endpoint, and waits until it logs that it listens.
func startApp(t *testing.T, node, dir, service, protocol, endpoint string, env ...string) *nodeApp {
	t.Helper()
	port := freePort(t)
	cmd := exec.Command(node, "--require", "./telemetry.js", "app.js")
	cmd.Dir = dir
	cmd.Env = nodeEnv(append([]string{
		"PORT=" + fmt.Sprint(port),
		"OTEL_SERVICE_NAME=" + service,
		"OTEL_RESOURCE_ATTRIBUTES=service.version=1.4.2,deployment.environment.name=test",
		"OTEL_TRACES_EXPORTER=otlp",
		"OTEL_LOGS_EXPORTER=otlp",
		"OTEL_METRICS_EXPORTER=none",
		"OTEL_EXPORTER_OTLP_PROTOCOL=" + protocol,
		"OTEL_EXPORTER_OTLP_ENDPOINT=" + endpoint,
		"OTEL_BSP_SCHEDULE_DELAY=200",
		"OTEL_BLRP_SCHEDULE_DELAY=200",
		"OTEL_LOG_LEVEL=warn",
	}, env...)...)
	a := &nodeApp{name: filepath.Base(dir), base: fmt.Sprintf("http://127.0.0.1:%d", port), cmd: cmd, out: &lockedBuffer{}, done: make(chan struct{})}
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, a.out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", a.name, err)
	}
	listening := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
		once := sync.Once{}
		for sc.Scan() {
			line := sc.Text()
			a.out.WriteLine(line)
			if strings.Contains(line, `"msg":"listening"`) {
				once.Do(func() { close(listening) })
			}
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	go func() {
		a.err = cmd.Wait()
		_ = pw.Close()
		close(a.done)
	}()
	t.Cleanup(func() { a.shutdown() })
	select {
	case <-listening:
	case <-a.done:
		t.Fatalf("%s exited while starting (%v):\n%s", a.name, a.err, a.out.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not listen within 30 s:\n%s", a.name, a.out.String())
	}
	return a
}

// shutdown sends SIGTERM, on which telemetry.js shuts the SDK down (exporting what is
// pending) and exits, and waits for the exit.
func (a *nodeApp) shutdown() error {
	a.stop.Do(func() {
		_ = a.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-a.done:
		case <-time.After(20 * time.Second):
			_ = a.cmd.Process.Kill()
			<-a.done
			a.err = fmt.Errorf("did not exit within 20 s of SIGTERM")
		}
	})
	return a.err
}

// logLine is one pino record the app wrote to stdout; the pino instrumentation adds the
// trace and span ids of the active span.
type logLine struct {
	Level   int    `json:"level"`
	Msg     string `json:"msg"`
	TraceID string `json:"trace_id"`
	JobID   string `json:"jobId"`
	Err     *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"err"`
}

// logs parses what the app logged.
func (a *nodeApp) logs() []logLine {
	var out []logLine
	for _, line := range strings.Split(a.out.String(), "\n") {
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var l logLine
		if json.Unmarshal([]byte(line), &l) == nil {
			out = append(out, l)
		}
	}
	return out
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// lockedBuffer collects a child's output while it runs.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) WriteLine(s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.WriteString(s)
	b.buf.WriteByte('\n')
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
