package flows

import (
	"context"
	"fmt"
	"testing"

	"github.com/runlens/runlens/gen"
	"github.com/runlens/runlens/internal/telemetry"
)

func TestOperationChangesRankWhatMovedAndInventNothing(t *testing.T) {
	op := func(name string, count, errs int64, p50, p95 float64) telemetry.OperationStats {
		return telemetry.OperationStats{Name: name, Count: count, ErrorCount: errs, P50Ms: p50, P95Ms: p95}
	}
	before := []telemetry.OperationStats{
		op("GET /slow", 100, 0, 40, 100),   // p95 +50%, +50 ms: slower
		op("GET /fast", 100, 0, 40, 100),   // p95 -40%: faster
		op("GET /noisy", 100, 0, 0.2, 0.5), // +100% but +0.5 ms: stable
		op("GET /flaky", 100, 1, 40, 100),  // error rate 1% → 11%: slower, p95 unchanged
		op("GET /rare", 3, 0, 40, 100),     // 3 calls before: too few
		op("GET /steady", 100, 0, 40, 100), // +10%: stable
		op("GET /retired", 50, 0, 40, 100), // gone
	}
	after := []telemetry.OperationStats{
		op("GET /slow", 100, 0, 60, 150),
		op("GET /fast", 100, 0, 30, 60),
		op("GET /noisy", 100, 0, 0.4, 1),
		op("GET /flaky", 100, 11, 40, 100),
		op("GET /rare", 100, 0, 400, 1000),
		op("GET /steady", 100, 0, 40, 110),
		op("POST /new", 7, 0, 10, 20), // new
	}
	got := operationChanges(before, after)
	want := []struct {
		name    string
		outcome gen.AnalyzeServicePerformanceOutputComparisonOperationOutcome
	}{
		{"GET /slow", "slower"}, {"GET /flaky", "slower"}, {"POST /new", "new"}, {"GET /fast", "faster"},
		{"GET /retired", "gone"}, {"GET /rare", "few_samples"}, {"GET /steady", "stable"}, {"GET /noisy", "stable"},
	}
	if len(got) != len(want) {
		t.Fatalf("%d operations, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		if got[i].Name != w.name || got[i].Outcome != w.outcome {
			t.Errorf("operation %d: %s %s, want %s %s", i, got[i].Name, got[i].Outcome, w.name, w.outcome)
		}
	}
	slow := got[0]
	if slow.BeforeCount != 100 || slow.AfterCount != 100 || slow.P95 == nil || slow.P95.Before != 100 || slow.P95.After != 150 ||
		slow.P95.RelativeChange == nil || *slow.P95.RelativeChange != 0.5 || slow.P50 == nil || slow.P50.After != 60 {
		t.Errorf("GET /slow: %+v, want its counts and p50/p95 before and after", slow)
	}
	if f := got[1]; f.ErrorRate == nil || f.ErrorRate.Before != 0.01 || f.ErrorRate.After != 0.11 {
		t.Errorf("GET /flaky's error rate: %+v", f.ErrorRate)
	}
	if n := got[2]; n.BeforeCount != 0 || n.AfterCount != 7 || n.P95 != nil {
		t.Errorf("a new operation carries its calls and no made-up before: %+v", n)
	}
}

// An operation missing from a side that listed only its slowest operations may have had calls
// there: it is left out rather than called new or gone.
func TestOperationChangesLeaveOutWhatATruncatedSideCannotTell(t *testing.T) {
	var full []telemetry.OperationStats
	for i := range telemetry.MaxTopOperations {
		full = append(full, telemetry.OperationStats{Name: fmt.Sprintf("op%02d", i), Count: 10, P50Ms: 1, P95Ms: 2})
	}
	after := []telemetry.OperationStats{{Name: "op00", Count: 10, P50Ms: 1, P95Ms: 2}, {Name: "elsewhere", Count: 10, P50Ms: 1, P95Ms: 2}}
	got := operationChanges(full, after)
	for _, o := range got {
		if o.Name == "elsewhere" {
			t.Fatalf("an operation absent from a truncated compareTo side was reported: %+v", o)
		}
	}
	gone := 0
	for _, o := range got {
		if o.Outcome == gen.AnalyzeServicePerformanceOutputComparisonOperationOutcomeGone {
			gone++
		}
	}
	// 19 gone (the window listed all its operations) rank before op00, stable: the first 10.
	if len(got) != maxOperationDiffs || gone != maxOperationDiffs {
		t.Fatalf("%d operations (%d gone), want %d gone: the window listed all its operations, so the rest are gone", len(got), gone, maxOperationDiffs)
	}
}

// Through the flow, each compared operation's calls are what the source counts in each window.
func TestCompareToListsEachOperationsCallsInBothWindows(t *testing.T) {
	f, d, _ := telemetryFlows(t)
	out, err := f.AnalyzeServicePerformance(context.Background(), defaults(gen.AnalyzeServicePerformanceInput{Service: "checkout",
		CompareTo: &gen.AnalyzeServicePerformanceInputCompareTo{Window: "15m", EndAgo: "30m"}}))
	if err != nil {
		t.Fatal(err)
	}
	c := out.Comparison
	if c == nil || len(c.Operations) == 0 {
		t.Fatalf("comparison %+v, want its operations", c)
	}
	end := fixtureNow.Add(-30 * 60e9).UnixMilli()
	counts := func(w telemetry.Window) map[string]int64 {
		m := map[string]int64{}
		for _, o := range d.ExpectPerformance(telemetry.PerformanceQuery{Service: "checkout", Window: w, TopN: telemetry.MaxTopOperations}).TopOperations {
			m[o.Name] = o.Count
		}
		return m
	}
	before, after := counts(telemetry.Window{StartMs: end - 15*60000, EndMs: end}), counts(lastHour())
	for _, o := range c.Operations {
		if o.BeforeCount != before[o.Name] || o.AfterCount != after[o.Name] {
			t.Errorf("%s: %d calls before, %d after; the source counts %d and %d", o.Name, o.BeforeCount, o.AfterCount, before[o.Name], after[o.Name])
		}
	}
}

// Throughput is a rate over the span that had traffic (docs/semantics.md R17), counted as a
// minute at least or the whole window when shorter, and the answer states that span.
func TestThroughputIsARateOverTheTrafficSpan(t *testing.T) {
	f := New(Deps{})
	const at = int64(1_800_000_000_000)
	hour := telemetry.Window{StartMs: at - 3_600_000, EndMs: at}
	for _, c := range []struct {
		name        string
		w           telemetry.Window
		n           int64
		first, last int64
		want        float64
	}{
		{"a 30 s burst in an hour counts a minute", hour, 305, at - 600_000, at - 570_000, 305},
		{"ten minutes of traffic in an hour", hour, 600, at - 1_200_000, at - 600_000, 60},
		{"one sample is one a minute", hour, 1, at - 5_000, at - 5_000, 1},
		{"a window shorter than a minute is the floor", telemetry.Window{StartMs: at - 30_000, EndMs: at}, 10, at - 25_000, at - 5_000, 20},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := f.perfOut(telemetry.Performance{Service: "api", SampleCount: c.n, FirstMs: c.first, LastMs: c.last}, c.w)
			if out.ThroughputPerMinute != c.want {
				t.Errorf("throughput %v/min, want %v", out.ThroughputPerMinute, c.want)
			}
			if out.TrafficFromUnixMs == nil || *out.TrafficFromUnixMs != c.first || out.TrafficToUnixMs == nil || *out.TrafficToUnixMs != c.last {
				t.Errorf("traffic span %v..%v, want %d..%d", out.TrafficFromUnixMs, out.TrafficToUnixMs, c.first, c.last)
			}
		})
	}
	none := f.perfOut(telemetry.Performance{Service: "api"}, hour)
	if none.ThroughputPerMinute != 0 || none.TrafficFromUnixMs != nil || none.TrafficToUnixMs != nil {
		t.Errorf("no samples: %+v, want no throughput and no traffic span", none)
	}
}
