package aspire_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/runlens/runlens/internal/telemetry/engine"

	"github.com/runlens/runlens/gen"
	"github.com/runlens/runlens/internal/telemetry/aspire"
	"github.com/runlens/runlens/internal/telemetry/aspire/aspiretest"
	"github.com/runlens/runlens/internal/telemetry/fixture"
)

// TestAspireLatencyReport prints B12 for the Aspire source: per tool, p50/p95 of a call that
// pulls afresh (the previous pull is stale) against the test dashboard holding about 10,000
// spans, and the HTTP requests the call made. RUNLENS_BENCH=1 go test -run
// TestAspireLatencyReport -v ./internal/telemetry/aspire (make bench runs it).
func TestAspireLatencyReport(t *testing.T) {
	if os.Getenv("RUNLENS_BENCH") == "" {
		t.Skip("set RUNLENS_BENCH=1 to measure B12 for the Aspire source")
	}
	srv := aspiretest.New(aspiretest.Options{APIKey: testKey})
	defer srv.Close()
	var last *fixture.Dataset
	spans := 0
	for seed := uint64(1); spans < 10_000; seed++ {
		d, err := fixture.New(fixture.Options{Now: now, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		srv.Load(d.Traces, d.Logs)
		spans += d.Traces.SpanCount()
		last = d
	}
	clock := now
	src := engine.New(aspire.New(aspire.Options{Endpoint: srv.URL, APIKey: testKey, Now: func() time.Time { return clock }}), last.Conventions)
	f := toolsOver(src)
	ctx := context.Background()
	calls := []struct {
		tool string
		call func() error
	}{
		{"get_app_status", func() error { _, err := f.GetAppStatus(ctx, defaults(gen.GetAppStatusInput{Window: "1d"})); return err }},
		{"list_runs", func() error { _, err := f.ListRuns(ctx, defaults(gen.ListRunsInput{Window: "1d"})); return err }},
		{"get_run", func() error { _, err := f.GetRun(ctx, defaults(gen.GetRunInput{ID: last.Runs[0].ID})); return err }},
		{"get_recent_errors", func() error {
			_, err := f.GetRecentErrors(ctx, defaults(gen.GetRecentErrorsInput{Window: "1d"}))
			return err
		}},
		{"get_last_job_result", func() error { _, err := f.GetLastJobResult(ctx, defaults(gen.GetLastJobResultInput{})); return err }},
		{"analyze_service_performance", func() error {
			_, err := f.AnalyzeServicePerformance(ctx, defaults(gen.AnalyzeServicePerformanceInput{Service: "checkout", Window: "1d"}))
			return err
		}},
		{"analyze_db_bottlenecks", func() error {
			_, err := f.AnalyzeDBBottlenecks(ctx, defaults(gen.AnalyzeDBBottlenecksInput{Window: "1d"}))
			return err
		}},
	}
	const n = 20
	var b strings.Builder
	fmt.Fprintf(&b, "| tool | p50 ms | p95 ms | HTTP requests per call |\n|---|---:|---:|---|\n")
	for _, c := range calls {
		var lat []time.Duration
		var reqs map[string]int
		for i := 0; i <= n; i++ {
			clock = clock.Add(time.Minute)
			srv.Reset()
			start := time.Now()
			if err := c.call(); err != nil {
				t.Fatalf("%s: %v", c.tool, err)
			}
			if i > 0 { // the first call warms up
				lat = append(lat, time.Since(start))
			}
			reqs = srv.Requests()
		}
		slices.Sort(lat)
		fmt.Fprintf(&b, "| %s | %.1f | %.1f | %d (%s) |\n", c.tool, ms(lat[len(lat)/2]), ms(lat[(len(lat)*95+99)/100-1]), total(reqs), paths(reqs))
	}
	t.Logf("B12, Aspire test dashboard with %d spans, %d calls per tool, each pulling afresh:\n%s", spans, n, b.String())
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func paths(m map[string]int) string {
	var out []string
	for p, n := range m {
		out = append(out, fmt.Sprintf("%s×%d", strings.TrimPrefix(p, "/api/telemetry"), n))
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}
