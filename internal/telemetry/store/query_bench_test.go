package store

import (
	"context"
	"fmt"
	"os"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/runlens/runlens/internal/telemetry/engine"

	"github.com/runlens/runlens/gen"
	"github.com/runlens/runlens/internal/flows"
	"github.com/runlens/runlens/internal/telemetry"
)

// B6: each telemetry tool through the flows — as a coding agent's call reaches them, minus the
// MCP framing — through the telemetry engine over the store, over the cached 1,000,000-span
// dataset (benchdata_test.go), with a 1-hour and a 24-hour window. BenchmarkQueries reports
// p50-ms and p95-ms per case;
// TestQueryLatencyReport (RUNLENS_BENCH=1) prints the same as a table for BENCH.md.

// benchWindows are the windows B6 measures.
var benchWindows = []string{"1h", "24h"}

// benchBusiestService is the service with the most spans (the generator skews traffic towards
// the first services), the worst case for analyze_service_performance.
var benchBusiestService = benchServiceName(0)

// latencyCase is one tool call measured in one window.
type latencyCase struct {
	tool, variant, window string
	call                  func(ctx context.Context) error
}

func (c latencyCase) name() string {
	if c.variant != "" {
		return c.tool + "(" + c.variant + ")/" + c.window
	}
	return c.tool + "/" + c.window
}

// latencyCases builds the calls over q, with the clock pinned to the dataset's anchor.
func latencyCases(tb testing.TB, q telemetry.Source) []latencyCase {
	tb.Helper()
	f := flows.New(flows.Deps{Telemetry: q, Now: func() time.Time { return benchAnchor }})
	ctx := context.Background()
	str := func(v string) *string { return &v }
	var cases []latencyCase
	for _, w := range benchWindows {
		// get_run reads one run of the window: the newest failed one, as an agent following
		// list_runs(status=error) would.
		page, err := f.ListRuns(ctx, defaults(gen.ListRunsInput{Window: w, Status: new(gen.RunStatusError), Limit: 1}))
		if err != nil || len(page.Runs) == 0 {
			tb.Fatalf("pick a run for get_run in %s: %v (%d runs)", w, err, len(page.Runs))
		}
		runID := page.Runs[0].ID
		// service-19's roots carry a CI pipeline run id: get_run finds a run by it.
		keyed, err := f.ListRuns(ctx, defaults(gen.ListRunsInput{Window: w, Service: str(benchServiceName(benchServiceN - 1)), Limit: 1}))
		if err != nil || len(keyed.Runs) == 0 {
			tb.Fatalf("pick a keyed run in %s: %v", w, err)
		}
		keyedID := keyed.Runs[0].ID
		add := func(tool, variant string, call func(ctx context.Context) error) {
			cases = append(cases, latencyCase{tool: tool, variant: variant, window: w, call: call})
		}
		add("get_app_status", "", func(ctx context.Context) error {
			_, err := f.GetAppStatus(ctx, defaults(gen.GetAppStatusInput{Window: w}))
			return err
		})
		add("list_runs", "", func(ctx context.Context) error {
			_, err := f.ListRuns(ctx, defaults(gen.ListRunsInput{Window: w}))
			return err
		})
		add("list_runs", "status=error", func(ctx context.Context) error {
			_, err := f.ListRuns(ctx, defaults(gen.ListRunsInput{Window: w, Status: new(gen.RunStatusError)}))
			return err
		})
		add("get_run", "", func(ctx context.Context) error {
			_, err := f.GetRun(ctx, defaults(gen.GetRunInput{ID: runID}))
			return err
		})
		add("get_run", "by run id", func(ctx context.Context) error {
			_, err := f.GetRun(ctx, defaults(gen.GetRunInput{ID: keyedID}))
			return err
		})
		add("get_recent_errors", "", func(ctx context.Context) error {
			_, err := f.GetRecentErrors(ctx, defaults(gen.GetRecentErrorsInput{Window: w}))
			return err
		})
		add("get_last_job_result", "", func(ctx context.Context) error {
			_, err := f.GetLastJobResult(ctx, defaults(gen.GetLastJobResultInput{Window: w}))
			return err
		})
		add("get_last_job_result", "jobName=rotate-keys", func(ctx context.Context) error {
			_, err := f.GetLastJobResult(ctx, defaults(gen.GetLastJobResultInput{Window: w, JobName: str("rotate-keys")}))
			return err
		})
		add("analyze_service_performance", "", func(ctx context.Context) error {
			_, err := f.AnalyzeServicePerformance(ctx, defaults(gen.AnalyzeServicePerformanceInput{Window: w, Service: benchBusiestService}))
			return err
		})
		add("analyze_db_bottlenecks", "", func(ctx context.Context) error {
			_, err := f.AnalyzeDBBottlenecks(ctx, defaults(gen.AnalyzeDBBottlenecksInput{Window: w}))
			return err
		})
	}
	return cases
}

// measure runs call once to warm up, then n times, and returns the sorted latencies.
func measure(ctx context.Context, n int, call func(context.Context) error) ([]time.Duration, error) {
	if err := call(ctx); err != nil {
		return nil, err
	}
	out := make([]time.Duration, 0, n)
	for range n {
		t0 := time.Now()
		if err := call(ctx); err != nil {
			return nil, err
		}
		out = append(out, time.Since(t0))
	}
	slices.Sort(out)
	return out, nil
}

// percentile is the nearest-rank p-th percentile of sorted.
func percentile(sorted []time.Duration, p float64) time.Duration {
	i := max(0, int(float64(len(sorted))*p+0.999999)-1)
	return sorted[min(i, len(sorted)-1)]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func BenchmarkQueries(b *testing.B) {
	s := benchDataset(b)
	for _, c := range latencyCases(b, engine.New(NewBackend(s), nil)) {
		b.Run(c.name(), func(b *testing.B) {
			var lat []time.Duration
			ctx := context.Background()
			for b.Loop() {
				t0 := time.Now()
				if err := c.call(ctx); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
			}
			slices.Sort(lat)
			b.ReportMetric(ms(percentile(lat, 0.5)), "p50-ms")
			b.ReportMetric(ms(percentile(lat, 0.95)), "p95-ms")
		})
	}
}

// TestQueryLatencyReport prints B6 as a Markdown table: RUNLENS_BENCH=1 go test -run
// TestQueryLatencyReport -v ./internal/telemetry/store (RUNLENS_BENCH_ITERS sets the calls per
// case, default 30). RUNLENS_BENCH_SCANS=1 measures instead the engine scanning only, without
// the store's capabilities — the path of a store whose derived columns do not answer.
func TestQueryLatencyReport(t *testing.T) {
	if os.Getenv("RUNLENS_BENCH") == "" {
		t.Skip("set RUNLENS_BENCH=1 to measure B6 (generates a 1M-span store on first use)")
	}
	n := 30
	if v, err := strconv.Atoi(os.Getenv("RUNLENS_BENCH_ITERS")); err == nil && v > 0 {
		n = v
	}
	s := benchDataset(t)
	var q telemetry.Source = engine.New(NewBackend(s), nil)
	if os.Getenv("RUNLENS_BENCH_SCANS") != "" {
		q = engine.New(NewBackend(s), nil).ScansOnly()
	}
	ctx := context.Background()
	var b strings.Builder
	fmt.Fprintf(&b, "| tool | window | p50 ms | p95 ms |\n|---|---|---:|---:|\n")
	worst := time.Duration(0)
	for _, c := range latencyCases(t, q) {
		lat, err := measure(ctx, n, c.call)
		if err != nil {
			t.Fatalf("%s: %v", c.name(), err)
		}
		tool := c.tool
		if c.variant != "" {
			tool += " (" + c.variant + ")"
		}
		fmt.Fprintf(&b, "| %s | %s | %.1f | %.1f |\n", tool, c.window, ms(percentile(lat, 0.5)), ms(percentile(lat, 0.95)))
		worst = max(worst, percentile(lat, 0.95))
	}
	t.Logf("B6, %d calls per case after one warm-up:\n%sworst p95: %.1f ms", n, b.String(), ms(worst))
	t.Logf("dataset: %s", datasetSize(t, s))
	t.Logf("memory of this process after the calls: %s", processMemory())
}

// datasetSize describes the store's size: rows, file bytes and bytes per million spans.
func datasetSize(tb testing.TB, s *Store) string {
	var spans, logs int64
	if err := s.DB().QueryRow(`SELECT (SELECT COUNT(*) FROM `+TracesTable+`), (SELECT COUNT(*) FROM `+LogsTable+`)`).Scan(&spans, &logs); err != nil {
		tb.Fatal(err)
	}
	fi, err := os.Stat(s.Path())
	if err != nil {
		tb.Fatal(err)
	}
	return fmt.Sprintf("%d spans, %d log records, %.0f MB file, %.0f MB per million spans", spans, logs,
		float64(fi.Size())/1e6, float64(fi.Size())/1e6/(float64(spans)/1e6))
}

// processMemory is the process's peak and current RSS (/proc/self/status) beside what the Go
// runtime holds (runtime/metrics): the difference is SQLite's C memory (page caches, statements)
// and the binary.
func processMemory() string {
	var hwm, rss string
	if raw, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, line := range strings.Split(string(raw), "\n") {
			if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
				hwm = strings.TrimSpace(v)
			}
			if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				rss = strings.TrimSpace(v)
			}
		}
	}
	samples := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/gc/heap/goal:bytes"}}
	metrics.Read(samples)
	mb := func(i int) float64 { return float64(samples[i].Value.Uint64()) / (1 << 20) }
	return fmt.Sprintf("VmHWM %s, VmRSS %s; Go runtime total %.1f MiB (heap objects %.1f MiB, heap goal %.1f MiB)",
		hwm, rss, mb(0), mb(1), mb(2))
}
