package compat

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
)

// seededTraceID is the trace get_run's valid example asks for (schemas/examples/get_run).
const seededTraceID = "4bf92f3577b34da6a3ce929d0e0e4736"

var (
	seededOnce sync.Once
	seededRoot string
	seededErr  error
)

// seededWorkspace is one fixture workspace per test run whose embedded telemetry store holds a
// few minutes of an instrumented app: a failed checkout request with its database query and
// error log (the trace get_run's example names), and two runs of the nightly-invoices job. It
// is filled the way an app fills it — OTLP/JSON posted to `runlens collect` — and the clients
// only read it. Stopping collect cleanly commits every batch before any client starts.
func seededWorkspace(t testing.TB) string {
	t.Helper()
	bin := runlensBinary(t)
	seededOnce.Do(func() {
		root := filepath.Join(buildDir, "seeded-workspace")
		if seededErr = writeWorkspace(root); seededErr != nil {
			return
		}
		seededErr = seedTelemetry(bin, root, time.Now())
		seededRoot = root
	})
	if seededErr != nil {
		t.Fatalf("seed the fixture telemetry: %v", seededErr)
	}
	return seededRoot
}

// seedTelemetry runs `runlens collect` (with extra flags, such as --store) on a free loopback
// port, posts the traces and logs, and stops it with SIGTERM, waiting for a clean exit.
func seedTelemetry(bin, root string, now time.Time, extra ...string) error {
	port, err := pickPort()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	args := append([]string{"collect", "--project-root", root, "--listen", fmt.Sprintf("127.0.0.1:%d", port)}, extra...)
	cmd := command(ctx, runOpts{dir: root}, bin, args...)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start runlens collect: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := func() error {
		_ = terminateProcessGroup(cmd)
		select {
		case err := <-exited:
			if err != nil {
				return fmt.Errorf("runlens collect did not stop cleanly: %w\n%s", err, stderr.Bytes())
			}
			return nil
		case <-ctx.Done():
			return fmt.Errorf("runlens collect did not stop within the deadline\n%s", stderr.Bytes())
		}
	}

	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	traces, logs := fixtureTelemetry(now)
	for _, post := range []struct {
		path string
		body any
	}{{"/v1/traces", traces}, {"/v1/logs", logs}} {
		if err := postOTLP(ctx, base+post.path, post.body); err != nil {
			_ = stop()
			return fmt.Errorf("%w\ncollect stderr:\n%s", err, stderr.Bytes())
		}
	}
	return stop()
}

// postOTLP posts one OTLP/JSON export request, retrying only while the receiver is not yet
// listening, and requires a 200 without partial rejection.
func postOTLP(ctx context.Context, url string, body any) error {
	raw, err := json.Marshal(body)
	if err != nil {
		return err
	}
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(raw))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			select {
			case <-ctx.Done():
				return fmt.Errorf("post %s: %w", url, err)
			case <-time.After(50 * time.Millisecond): // polling the receiver's port with a deadline
				continue
			}
		}
		answer, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("post %s: HTTP %d: %s", url, resp.StatusCode, answer)
		}
		if rejected(answer) {
			return fmt.Errorf("post %s: records rejected: %s", url, answer)
		}
		return nil
	}
}

// rejected reports whether an OTLP export response says some records were refused.
func rejected(answer []byte) bool {
	var r struct {
		PartialSuccess struct {
			RejectedSpans      json.Number `json:"rejectedSpans"`
			RejectedLogRecords json.Number `json:"rejectedLogRecords"`
		} `json:"partialSuccess"`
	}
	if len(bytes.TrimSpace(answer)) == 0 || json.Unmarshal(answer, &r) != nil {
		return false // an empty or protobuf-free answer carries no partial success
	}
	nonzero := func(n json.Number) bool { return n != "" && n != "0" }
	return nonzero(r.PartialSuccess.RejectedSpans) || nonzero(r.PartialSuccess.RejectedLogRecords)
}

// writeWorkspace writes the fixture project files into root.
func writeWorkspace(root string) error {
	for name, content := range workspaceFiles {
		path := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// OTLP/JSON building blocks (the protobuf JSON mapping: hex ids, nanoseconds as strings).
type (
	kv    map[string]any
	attrs []kv
)

func str(key, value string) kv {
	return kv{"key": key, "value": kv{"stringValue": value}}
}

func nanos(t time.Time) string { return strconv.FormatInt(t.UnixNano(), 10) }

// span renders one span; status 2 is Error, kind 2 Server, 3 Client, 1 Internal.
func span(traceID, spanID, parent, name string, kind int, start time.Time, d time.Duration, status int, msg string, a attrs) kv {
	s := kv{
		"traceId": traceID, "spanId": spanID, "name": name, "kind": kind,
		"startTimeUnixNano": nanos(start), "endTimeUnixNano": nanos(start.Add(d)),
		"attributes": a, "status": kv{"code": status, "message": msg},
	}
	if parent != "" {
		s["parentSpanId"] = parent
	}
	return s
}

func resourceSpans(service string, spans ...kv) kv {
	return kv{
		"resource":   kv{"attributes": attrs{str("service.name", service)}},
		"scopeSpans": []kv{{"scope": kv{"name": "compat-fixture"}, "spans": spans}},
	}
}

// fixtureTelemetry is the seeded app's last few minutes, relative to now.
func fixtureTelemetry(now time.Time) (traces, logs kv) {
	const (
		jobTrace    = "a1b2c3d4e5f60718293a4b5c6d7e8f90"
		oldJobTrace = "0f1e2d3c4b5a69788796a5b4c3d2e1f0"
		okTrace     = "5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a"
	)
	checkout := now.Add(-4 * time.Minute)
	ok := now.Add(-3 * time.Minute)
	job := now.Add(-2 * time.Minute)
	oldJob := now.Add(-9 * time.Minute)
	traces = kv{"resourceSpans": []kv{
		resourceSpans("checkout-api",
			span(seededTraceID, "00f067aa0ba902b7", "", "POST /api/orders", 2, checkout, 180*time.Millisecond, 2, "payment declined",
				attrs{str("http.request.method", "POST"), str("http.route", "/api/orders"), str("http.request.header.authorization", "Bearer abc.def.ghi")}),
			span(seededTraceID, "1a2b3c4d5e6f7081", "00f067aa0ba902b7", "SELECT orders", 3, checkout.Add(10*time.Millisecond), 40*time.Millisecond, 0, "",
				attrs{str("db.system.name", "postgresql"), str("db.operation.name", "SELECT"), str("db.collection.name", "orders"), str("db.query.text", "SELECT * FROM orders WHERE id = 42")}),
			span(seededTraceID, "2b3c4d5e6f708192", "00f067aa0ba902b7", "charge card", 3, checkout.Add(60*time.Millisecond), 100*time.Millisecond, 2, "card declined",
				attrs{str("rpc.system", "grpc")}),
			span(okTrace, "3c4d5e6f708192a3", "", "GET /api/orders", 2, ok, 25*time.Millisecond, 1, "",
				attrs{str("http.request.method", "GET"), str("http.route", "/api/orders")}),
		),
		resourceSpans("billing-worker",
			span(jobTrace, "4d5e6f708192a3b4", "", "nightly-invoices", 1, job, 900*time.Millisecond, 1, "",
				attrs{str("job.id", "job-7f3a9c"), str("job.name", "nightly-invoices"), str("job.status", "success"), str("job.exit_code", "0")}),
			span(jobTrace, "5e6f708192a3b4c5", "4d5e6f708192a3b4", "INSERT invoices", 3, job.Add(100*time.Millisecond), 300*time.Millisecond, 0, "",
				attrs{str("db.system", "postgresql"), str("db.statement", "INSERT INTO invoices (customer, amount) VALUES ('acme', 12.5)")}),
			span(oldJobTrace, "6f708192a3b4c5d6", "", "nightly-invoices", 1, oldJob, 700*time.Millisecond, 2, "smtp timeout",
				attrs{str("job.id", "job-6e2b8a"), str("job.name", "nightly-invoices"), str("job.status", "failed"), str("job.exit_code", "1")}),
		),
	}}
	logs = kv{"resourceLogs": []kv{{
		"resource": kv{"attributes": attrs{str("service.name", "checkout-api")}},
		"scopeLogs": []kv{{"scope": kv{"name": "compat-fixture"}, "logRecords": []kv{
			{"timeUnixNano": nanos(checkout.Add(5 * time.Millisecond)), "severityNumber": 9, "severityText": "INFO",
				"body": kv{"stringValue": "placing order 42"}, "traceId": seededTraceID, "spanId": "00f067aa0ba902b7"},
			{"timeUnixNano": nanos(checkout.Add(170 * time.Millisecond)), "severityNumber": 17, "severityText": "ERROR",
				"body": kv{"stringValue": "payment declined for order 42"}, "traceId": seededTraceID, "spanId": "2b3c4d5e6f708192"},
		}}},
	}}}
	return traces, logs
}
