package jaeger_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/runlens/runlens/internal/telemetry/engine"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/runlens/runlens/gen"
	"github.com/runlens/runlens/internal/flows"
	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/jaeger"
	"github.com/runlens/runlens/internal/telemetry/jaeger/jaegertest"
)

// countingTransport counts the HTTP requests the backend makes.
type countingTransport struct {
	n    atomic.Int64
	next http.RoundTripper
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.next.RoundTrip(r)
}

// benchTraces is B12's dataset: n traces over the last 55 minutes, five services, each trace a
// server span with a database query and an internal step; one in twenty fails, one in a
// hundred is a job execution.
func benchTraces(n int, now time.Time) (ptrace.Traces, []string) {
	td := ptrace.NewTraces()
	var ids []string
	byService := map[string]ptrace.SpanSlice{}
	for i := range 5 {
		rs := td.ResourceSpans().AppendEmpty()
		svc := fmt.Sprintf("svc-%d", i)
		rs.Resource().Attributes().PutStr("service.name", svc)
		byService[svc] = rs.ScopeSpans().AppendEmpty().Spans()
	}
	for i := range n {
		spans := byService[fmt.Sprintf("svc-%d", i%5)]
		var tid pcommon.TraceID
		copy(tid[:], fmt.Sprintf("%016x", uint64(i)+1)+"benchmrk")
		ids = append(ids, fmt.Sprintf("%x", tid[:]))
		start := now.Add(-55 * time.Minute).Add(time.Duration(i) * (55 * time.Minute) / time.Duration(n))
		root := spans.AppendEmpty()
		root.SetTraceID(tid)
		root.SetSpanID(pcommon.SpanID{1, 0, 0, 0, byte(i >> 24), byte(i >> 16), byte(i >> 8), byte(i)})
		root.SetKind(ptrace.SpanKindServer)
		root.SetName(fmt.Sprintf("GET /items/%d", i%7))
		root.Attributes().PutStr("http.request.method", "GET")
		if i%100 == 0 {
			root.Attributes().PutStr("job.id", fmt.Sprintf("job-%d", i%3))
			root.Attributes().PutStr("job.name", fmt.Sprintf("job-%d", i%3))
		}
		dur := time.Duration(5+i%50) * time.Millisecond
		root.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
		root.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(dur)))
		if i%20 == 0 {
			root.Status().SetCode(ptrace.StatusCodeError)
			root.Status().SetMessage(fmt.Sprintf("item %d not found", i))
		}
		db := spans.AppendEmpty()
		db.SetTraceID(tid)
		db.SetSpanID(pcommon.SpanID{2, 0, 0, 0, byte(i >> 24), byte(i >> 16), byte(i >> 8), byte(i)})
		db.SetParentSpanID(root.SpanID())
		db.SetKind(ptrace.SpanKindClient)
		db.SetName("SELECT items")
		db.Attributes().PutStr("db.system.name", "postgresql")
		db.Attributes().PutStr("db.query.text", fmt.Sprintf("SELECT * FROM items WHERE id = %d", i))
		db.SetStartTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Millisecond)))
		db.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Millisecond + dur/2)))
		step := spans.AppendEmpty()
		step.SetTraceID(tid)
		step.SetSpanID(pcommon.SpanID{3, 0, 0, 0, byte(i >> 24), byte(i >> 16), byte(i >> 8), byte(i)})
		step.SetParentSpanID(root.SpanID())
		step.SetName("render")
		step.SetStartTimestamp(pcommon.NewTimestampFromTime(start.Add(dur / 2)))
		step.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(dur - time.Millisecond)))
	}
	return td, ids
}

// TestJaegerReport is B12 for the Jaeger source: every telemetry tool against a real Jaeger
// holding 10,000 traces, p50/p95 of the call and the HTTP requests it made. A benchmark, not
// a test (`make bench`): it asserts only that every call answered.
func TestJaegerReport(t *testing.T) {
	if os.Getenv("RUNLENS_BENCH") != "1" {
		t.Skip("set RUNLENS_BENCH=1 to run the benchmarks (make bench)")
	}
	const traces, runs = 10_000, 10
	now := time.Now()
	// Jaeger's self-tracing would add a trace of service jaeger per request, inside the
	// measured window, and so grow the data with every call measured.
	srv := jaegertest.Start(t, jaegertest.Options{NoSelfTracing: true})
	td, ids := benchTraces(traces, now)
	ctx := context.Background()
	if err := srv.Send(ctx, td); err != nil {
		t.Fatal(err)
	}
	counter := &countingTransport{next: http.DefaultTransport}
	poll, err := jaeger.New(srv.QueryURL, jaeger.Options{CacheTTL: -1, MaxRequests: 10_000})
	if err != nil {
		t.Fatal(err)
	}
	jaegertest.WaitFor(t, "Jaeger holds the 10,000 traces", 2*time.Minute, func() (bool, error) {
		batch, err := poll.ScanSpans(ctx, telemetry.SpanScan{Window: telemetry.Window{StartMs: now.Add(-time.Hour).UnixMilli(), EndMs: now.Add(time.Minute).UnixMilli()}, RootsOnly: true})
		return err == nil && !batch.Limited && len(batch.Spans) == traces, err
	})
	// Every call gets a fresh backend, so its trace cache holds only what the call itself read:
	// the counts are those of a call made after the cache expired.
	var f *flows.Flows
	fresh := func() {
		b, err := jaeger.New(srv.QueryURL, jaeger.Options{Transport: counter})
		if err != nil {
			t.Fatal(err)
		}
		f = flows.New(flows.Deps{Telemetry: engine.New(b, nil)})
	}
	calls := []struct {
		name string
		do   func() error
	}{
		{"get_app_status 1h", func() error { _, err := f.GetAppStatus(ctx, gen.GetAppStatusInput{Window: "1h"}); return err }},
		{"list_runs 1h", func() error { _, err := f.ListRuns(ctx, gen.ListRunsInput{Window: "1h"}); return err }},
		{"get_run", func() error { _, err := f.GetRun(ctx, gen.GetRunInput{ID: ids[traces/2]}); return err }},
		{"get_recent_errors 1h", func() error { _, err := f.GetRecentErrors(ctx, gen.GetRecentErrorsInput{Window: "1h"}); return err }},
		{"get_last_job_result 24h", func() error {
			_, err := f.GetLastJobResult(ctx, gen.GetLastJobResultInput{JobName: ptr("job-1")})
			return err
		}},
		{"analyze_service_performance 1h", func() error {
			_, err := f.AnalyzeServicePerformance(ctx, gen.AnalyzeServicePerformanceInput{Service: "svc-1", Window: "1h"})
			return err
		}},
		{"analyze_db_bottlenecks 1h", func() error {
			_, err := f.AnalyzeDBBottlenecks(ctx, gen.AnalyzeDBBottlenecksInput{Window: "1h"})
			return err
		}},
	}
	var report strings.Builder
	fmt.Fprintf(&report, "B12 Jaeger %s (in-memory storage, self-tracing off), %d traces (%d spans) over 55 min, 5 services, %d calls per tool, each with an empty trace cache\n",
		jaegertest.Version, traces, td.SpanCount(), runs)
	fmt.Fprintf(&report, "| tool | p50 ms | p95 ms | HTTP requests per call (min / max) |\n|---|---|---|---|\n")
	for _, c := range calls {
		var took []time.Duration
		var reqs []int64
		for range runs {
			fresh()
			before := counter.n.Load()
			start := time.Now()
			if err := c.do(); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			took = append(took, time.Since(start))
			reqs = append(reqs, counter.n.Load()-before)
		}
		slices.Sort(reqs)
		slices.Sort(took)
		fmt.Fprintf(&report, "| %s | %.1f | %.1f | %d / %d |\n", c.name, ms(nearest(took, 50)), ms(nearest(took, 95)), reqs[0], reqs[len(reqs)-1])
	}
	t.Log("\n" + report.String())
}

func nearest(sorted []time.Duration, pct int) time.Duration {
	i := (pct*len(sorted)+99)/100 - 1
	return sorted[max(i, 0)]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func ptr[T any](v T) *T { return &v }
