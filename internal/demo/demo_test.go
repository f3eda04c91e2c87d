package demo

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDemoEndToEnd builds the real binary and runs the whole demo: SDK → receiver → store →
// `runlens serve` → MCP calls, asserting on what an agent would read.
func TestDemoEndToEnd(t *testing.T) {
	exe := filepath.Join(t.TempDir(), "runlens")
	build := exec.Command("go", "build", "-o", exe, "../../cmd/runlens")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	tmpBefore := demoDirs(t)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out, progress bytes.Buffer
	if err := Run(ctx, Options{Exe: exe, Out: &out, Progress: &progress, Requests: 30}); err != nil {
		t.Fatalf("demo: %v\n%s", err, out.String())
	}
	text := out.String()
	for _, want := range []string{
		"get_app_status → FAIL: 2 services",
		"list_runs (newest 5 of 34)",
		"payment declined for order",
		"get_run ",
		"INSERT orders",
		"get_last_job_result nightly-invoices → ok (succeeded), exit code 0, previous run error",
		"analyze_service_performance shop-api → 30 spans",
		"SELECT orders GROUP BY day",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("demo output lacks %q:\n%s", want, text)
		}
	}
	if !strings.Contains(progress.String(), "34/34") {
		t.Errorf("progress never reached 34/34: %q", progress.String())
	}
	if after := demoDirs(t); len(after) > len(tmpBefore) {
		t.Errorf("the demo left its temporary project behind: %v", after)
	}
}

func demoDirs(t *testing.T) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(os.TempDir(), "runlens-demo-*"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}
