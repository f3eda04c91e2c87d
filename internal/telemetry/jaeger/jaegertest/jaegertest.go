// Package jaegertest runs a real Jaeger (the v2 binary, built by .ci/install-jaeger) for the
// tests of the Jaeger source: in-memory storage, every listener on 127.0.0.1 on a free port,
// configured by a file the test writes. Data goes in through Jaeger's own OTLP/HTTP receiver,
// as an instrumented app would send it.
//
// Jaeger traces its own query service (service "jaeger") unless Options.NoSelfTracing, and
// exports those spans to its own OTLP receiver here, so they are stored like any other data;
// they carry the present time, so they stay outside the fixture's windows (March 2026) and
// show where a source lists every service.
package jaegertest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// EnvBinary names the Jaeger binary (set by `make test` from .ci/install-jaeger).
const EnvBinary = "RUNLENS_JAEGER"

// Version is the Jaeger release .ci/install-jaeger builds.
const Version = "v1.76.0"

// MaxTraces is the in-memory storage's capacity, and so the most traces one search may ask for.
const MaxTraces = 200_000

// Server is one running Jaeger.
type Server struct {
	// QueryURL is the query service's base URL (what a jaeger+http:// source names).
	QueryURL string
	// OTLPURL is the OTLP/HTTP receiver's base URL.
	OTLPURL string
	// OTLPGRPC is the OTLP/gRPC receiver's address (host:port).
	OTLPGRPC string
	// MetricsURL is the URL of Jaeger's own metrics in the Prometheus text format, when
	// Options.Metrics asked for them.
	MetricsURL string
	cmd        *exec.Cmd
	logs       *lockedBuffer
}

// Binary returns the Jaeger binary: RUNLENS_JAEGER, else the one .ci/install-jaeger leaves in
// the cache. It stops the test when there is none: a failure under CI, a skip elsewhere.
func Binary(t testing.TB) string {
	t.Helper()
	path := os.Getenv(EnvBinary)
	if path == "" {
		cache := os.Getenv("XDG_CACHE_HOME")
		if cache == "" {
			home, _ := os.UserHomeDir()
			cache = filepath.Join(home, ".cache")
		}
		path = filepath.Join(cache, "runlens", "jaeger", Version, "jaeger")
	}
	if _, err := os.Stat(path); err != nil {
		msg := fmt.Sprintf("no Jaeger binary at %s (%v)", path, err)
		if os.Getenv("CI") != "" {
			t.Fatalf("%s; CI is set, so this fails instead of skipping: run .ci/install-jaeger", msg)
		}
		t.Skipf("%s; run .ci/install-jaeger or `make test`", msg)
	}
	return path
}

// Options adjust the Jaeger a test runs.
type Options struct {
	// NoSelfTracing turns off the tracing of Jaeger's own query service (on by default in
	// Jaeger v2). With it on, every query the test makes adds a trace of service jaeger, and
	// scans over all time read them all: a suite of thousands of queries then spends most of
	// its time reading Jaeger's own traces.
	NoSelfTracing bool
	// Badger stores the traces in Badger files in a folder of the test's (not ephemeral, and
	// without an fsync per write, Badger's default) instead of in memory.
	Badger bool
	// Unbatched leaves out the batch processor, so that the receiver answers an export once
	// the storage has written it rather than once the batch is queued.
	Unbatched bool
	// Metrics serves Jaeger's own metrics (the collector's "basic" level: spans accepted,
	// sent to storage, failed) at Server.MetricsURL.
	Metrics bool
}

// Start runs a fresh Jaeger for t and stops it when t ends; it returns once the query API
// answers.
func Start(t testing.TB, opts ...Options) *Server {
	t.Helper()
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	bin := Binary(t)
	ports := freePorts(t, 5)
	query, grpcQuery, otlpGRPC, otlpHTTP, metrics := ports[0], ports[1], ports[2], ports[3], ports[4]
	dir := t.TempDir()
	config := filepath.Join(dir, "jaeger.yaml")
	c := configYAML(query, grpcQuery, otlpGRPC, otlpHTTP, !o.NoSelfTracing)
	if o.Badger {
		c = replaceOnce(t, c, fmt.Sprintf("memory:\n          max_traces: %d\n", MaxTraces), fmt.Sprintf(
			"badger:\n          directories:\n            keys: %s\n            values: %s\n          ephemeral: false\n          ttl:\n            spans: 48h\n",
			filepath.Join(dir, "keys"), filepath.Join(dir, "values")))
	}
	if o.Unbatched {
		c = replaceOnce(t, c, "      processors: [batch]\n", "")
	}
	if o.Metrics {
		c = replaceOnce(t, c, "    metrics:\n      level: none\n", fmt.Sprintf(
			"    metrics:\n      level: basic\n      readers:\n        - pull:\n            exporter:\n              prometheus:\n                host: 127.0.0.1\n                port: %d\n", metrics))
	}
	if err := os.WriteFile(config, []byte(c), 0o600); err != nil {
		t.Fatal(err)
	}
	s := &Server{
		QueryURL: "http://127.0.0.1:" + strconv.Itoa(query),
		OTLPURL:  "http://127.0.0.1:" + strconv.Itoa(otlpHTTP),
		OTLPGRPC: "127.0.0.1:" + strconv.Itoa(otlpGRPC),
		logs:     &lockedBuffer{},
	}
	if o.Metrics {
		s.MetricsURL = "http://127.0.0.1:" + strconv.Itoa(metrics) + "/metrics"
	}
	s.cmd = exec.Command(bin, "--config", "file:"+config)
	s.cmd.Dir = dir
	// Jaeger's own spans go to its own OTLP/gRPC receiver, never to whatever else listens on
	// the default port.
	s.cmd.Env = append(os.Environ(),
		"OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:"+strconv.Itoa(otlpGRPC),
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=http://127.0.0.1:"+strconv.Itoa(otlpGRPC),
		"OTEL_EXPORTER_OTLP_INSECURE=true",
		"OTEL_EXPORTER_OTLP_PROTOCOL=grpc",
	)
	s.cmd.Stdout, s.cmd.Stderr = s.logs, s.logs
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("start jaeger: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- s.cmd.Wait() }()
	t.Cleanup(func() {
		_ = s.cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("jaeger output:\n%s", s.logs.tail(4000))
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("jaeger exited before answering: %v\n%s", err, s.logs.tail(4000))
		default:
		}
		if s.ready() {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("jaeger did not answer within 60s\n%s", s.logs.tail(4000))
		}
		time.Sleep(50 * time.Millisecond) // polling with a deadline
	}
}

// replaceOnce replaces old in config with new, and stops the test when config has no old.
func replaceOnce(t testing.TB, config, old, new string) string {
	t.Helper()
	if !strings.Contains(config, old) {
		t.Fatalf("the Jaeger configuration has no %q to adjust", old)
	}
	return strings.Replace(config, old, new, 1)
}

// Pid is the Jaeger process's id.
func (s *Server) Pid() int { return s.cmd.Process.Pid }

func (s *Server) ready() bool {
	c := http.Client{Timeout: time.Second}
	resp, err := c.Get(s.QueryURL + "/api/v3/services")
	if err != nil {
		return false
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return false
	}
	// The receiver must be up too: an empty export answers 200 once it listens.
	resp, err = c.Post(s.OTLPURL+"/v1/traces", "application/json", strings.NewReader(`{"resourceSpans":[]}`))
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// Send exports td to Jaeger's OTLP/HTTP receiver in one protobuf request.
func (s *Server) Send(ctx context.Context, td ptrace.Traces) error {
	var m ptrace.ProtoMarshaler
	body, err := m.MarshalTraces(td)
	if err != nil {
		return fmt.Errorf("marshal traces: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.OTLPURL+"/v1/traces", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	resp, err := (&http.Client{Timeout: 60 * time.Second}).Do(req)
	if err != nil {
		return fmt.Errorf("export traces: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("export traces: jaeger answered %s", resp.Status)
	}
	return nil
}

// WaitFor polls done until it reports true or the deadline passes.
func WaitFor(t testing.TB, what string, within time.Duration, done func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(within)
	var last error
	for {
		ok, err := done()
		if ok {
			return
		}
		last = err
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s (last error: %v)", what, within, last)
		}
		time.Sleep(100 * time.Millisecond) // polling with a deadline
	}
}

// configYAML is a Jaeger v2 configuration: OTLP in, in-memory storage, the query API, every
// listener on loopback, no metrics endpoint.
func configYAML(query, grpcQuery, otlpGRPC, otlpHTTP int, selfTracing bool) string {
	return fmt.Sprintf(`service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
  telemetry:
    resource:
      service.name: jaeger
    metrics:
      level: none
    logs:
      level: warn
extensions:
  jaeger_query:
    storage:
      traces: mem
    max_clock_skew_adjust: 0s
    enable_tracing: %t
    http:
      endpoint: 127.0.0.1:%d
    grpc:
      endpoint: 127.0.0.1:%d
  jaeger_storage:
    backends:
      mem:
        memory:
          max_traces: %d
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:%d
      http:
        endpoint: 127.0.0.1:%d
processors:
  batch:
    timeout: 50ms
exporters:
  jaeger_storage_exporter:
    trace_storage: mem
`, selfTracing, query, grpcQuery, MaxTraces, otlpGRPC, otlpHTTP)
}

// freePorts reserves n distinct loopback ports and releases them for Jaeger to take.
func freePorts(t testing.TB, n int) []int {
	t.Helper()
	var ls []net.Listener
	var out []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		out = append(out, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	return out
}

// lockedBuffer collects Jaeger's output for a failing test's log.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.b.Len() > 1<<20 {
		l.b.Reset()
	}
	return l.b.Write(p)
}

func (l *lockedBuffer) tail(n int) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.b.String()
	if len(s) > n {
		s = s[len(s)-n:]
	}
	return s
}
