package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// BenchmarkStartupWithReceivers is what hosting the OTLP receivers costs B1: spawn `runlens
// serve`, initialize, initialized, tools/list, on a project with no store yet, with the
// receivers off, with OTLP/HTTP only, and with OTLP/HTTP and OTLP/gRPC (each on a free port).
// The receivers start in the background, so initialize and tools/list do not wait for them;
// what remains is the CPU they take from the start-up. b.N start-ups of each, interleaved run
// by run (MeasureStartups) so that a change in the machine's load falls on all three alike;
// the metrics are the discovery median and p95 of each.
//
// go test ./internal/bench -run '^$' -bench StartupWithReceivers -benchtime 50x, 2026-12-01 on
// the shared 2-core machine (load average about 4), discovery p50 / p95:
//
//	receivers off          23.95 / 29.18 ms
//	OTLP/HTTP              25.53 / 33.92 ms
//	OTLP/HTTP and gRPC     24.77 / 31.73 ms
//
// gRPC adds nothing measurable: its packages were already linked (through pdata and the
// OTLP exporters of the demo) and initialized at every start, except errdetails (0.05 ms of
// package init, GODEBUG=inittrace=1), and creating, listening and serving a gRPC server takes
// about 50 µs, in the background after OTLP/HTTP has listened.
func BenchmarkStartupWithReceivers(b *testing.B) {
	bin, err := buildServe(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	kinds := []struct{ label, http, grpc string }{
		{"off", "off", "off"},
		{"http", "127.0.0.1:0", "off"},
		{"http+grpc", "127.0.0.1:0", "127.0.0.1:0"},
	}
	var targets []Target
	for _, k := range kinds {
		project := filepath.Join(b.TempDir(), "project")
		if err := WriteProject(project); err != nil {
			b.Fatal(err)
		}
		targets = append(targets, Target{Name: k.label, Path: bin, Dir: project,
			Args: []string{"serve", "--project-root", project, "--receiver", k.http, "--receiver-grpc", k.grpc}})
	}
	b.ResetTimer()
	series, err := MeasureStartups(targets, b.N, 1)
	if err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	for _, s := range series {
		if s.Index != 0 {
			continue // the pooled statistics of each target follow its series
		}
		b.ReportMetric(millis(s.Discovery.Median), s.Target+"-p50-ms")
		b.ReportMetric(millis(s.Discovery.P95), s.Target+"-p95-ms")
	}
}

func millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// buildServe builds the release runlens binary into dir.
func buildServe(dir string) (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	bin := filepath.Join(dir, "runlens")
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", bin, "./cmd/runlens")
	cmd.Dir = filepath.Dir(strings.TrimSpace(string(out)))
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/runlens: %w\n%s", err, out)
	}
	return bin, nil
}
