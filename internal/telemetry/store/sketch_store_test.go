package store

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/runlens/runlens/internal/telemetry"
)

// withinSketchError reports whether got is within the sketches' relative error of want, both
// in ms rounded to the microsecond.
func withinSketchError(got, want float64) bool {
	return math.Abs(got-want) <= SketchRelativeError*want+0.0015
}

func TestSketchedPercentilesAreWithinTheirStatedErrorOfTheExactOnes(t *testing.T) {
	sketchExactMax = 0 // every window with whole buckets answers from the sketches
	t.Cleanup(func() { sketchExactMax = 5_000 })
	ctx := context.Background()
	now := time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)
	conv := mustPreset(t, "otel")
	src := loadSources(t, conv, newRandomTelemetry(11, scaled(400), now, 3*time.Hour))
	sketched := 0
	// The last window ends past every row, inside a bucket: that bucket is read whole (liveSplit).
	windows := append(windowsAround(now, 3*time.Hour), telemetry.Window{
		StartMs: now.Add(-20*time.Minute + 7*time.Second).UnixMilli(), EndMs: now.Add(90 * time.Second).UnixMilli()})
	for wi, w := range windows {
		whole := splitWindow(w).lo < splitWindow(w).hi
		for _, svc := range []string{"", "checkout", "gateway", "unknown"} {
			name := fmt.Sprintf("window %d, service %q", wi, svc)
			if svc != "" {
				q := telemetry.PerformanceQuery{Window: w, Service: svc, TopN: 20}
				want, err1 := src.mem.ServicePerformance(ctx, q)
				got, err2 := src.caps.ServicePerformance(ctx, q)
				if err1 != nil || err2 != nil {
					t.Fatal(err1, err2)
				}
				if wantErr := map[bool]float64{true: SketchRelativeError}[whole && got.SampleCount > 0]; got.PercentileError != wantErr {
					t.Errorf("%s: performance states a relative error of %v, want %v", name, got.PercentileError, wantErr)
				}
				if got.PercentileError > 0 {
					sketched++
				}
				for _, p := range [][2]float64{{got.P50Ms, want.P50Ms}, {got.P95Ms, want.P95Ms}, {got.P99Ms, want.P99Ms}} {
					if !withinSketchError(p[0], p[1]) {
						t.Errorf("%s: percentile %v ms, exact %v ms", name, p[0], p[1])
					}
				}
				exact := map[string]telemetry.OperationStats{}
				for _, o := range want.TopOperations {
					exact[o.Name] = o
				}
				for _, o := range got.TopOperations {
					e, ok := exact[o.Name]
					if !ok {
						continue // a near tie in p95 may rank another operation fifth
					}
					if o.Count != e.Count || o.ErrorCount != e.ErrorCount || !withinSketchError(o.P50Ms, e.P50Ms) || !withinSketchError(o.P95Ms, e.P95Ms) {
						t.Errorf("%s: operation %+v, exact %+v", name, o, e)
					}
				}
				ignore := cmpopts.IgnoreFields(telemetry.Performance{}, "P50Ms", "P95Ms", "P99Ms", "PercentileError", "TopOperations")
				if diff := cmp.Diff(want, got, cmpopts.EquateEmpty(), ignore, cmpopts.IgnoreFields(telemetry.Scan{}, "Scanned")); diff != "" {
					t.Errorf("%s: performance differs beyond its percentiles (-exact +sketched):\n%s", name, diff)
				}
			}
			q := telemetry.DBQuery{Window: w, Service: svc, TopN: 20}
			want, err1 := src.mem.DBOperations(ctx, q)
			got, err2 := src.caps.DBOperations(ctx, q)
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			if wantErr := map[bool]float64{true: SketchRelativeError}[whole && len(got.Operations) > 0]; got.PercentileError != wantErr {
				t.Errorf("%s: database operations state a relative error of %v, want %v", name, got.PercentileError, wantErr)
			}
			exact := map[string]telemetry.DBOperationStats{}
			for _, o := range want.Operations {
				exact[o.Key] = o
			}
			for _, o := range got.Operations {
				e := exact[o.Key]
				if !withinSketchError(o.P95Ms, e.P95Ms) {
					t.Errorf("%s: operation %s p95 %v ms, exact %v ms", name, o.Key, o.P95Ms, e.P95Ms)
				}
				o.P95Ms = e.P95Ms
				if diff := cmp.Diff(e, o); diff != "" {
					t.Errorf("%s: operation differs beyond its p95 (-exact +sketched):\n%s", name, diff)
				}
			}
			if len(got.Operations) != len(want.Operations) || got.SampleCount != want.SampleCount || got.Total != want.Total {
				t.Errorf("%s: %d operations of %d spans (total %d), exact %d of %d (%d)", name, len(got.Operations), got.SampleCount,
					got.Total, len(want.Operations), want.SampleCount, want.Total)
			}
		}
	}
	if sketched == 0 {
		t.Fatal("no answer came from the sketches")
	}
}

func TestErrorGroupsReadAPageAtATimeAnswerLikeTheEngine(t *testing.T) {
	for _, page := range []int{1, 2, 3} {
		t.Run(fmt.Sprintf("pages of %d occurrences", page), func(t *testing.T) {
			groupPage = page
			t.Cleanup(func() { groupPage = 16 })
			ctx := context.Background()
			now := time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)
			conv := mustPreset(t, "netscript")
			src := loadSources(t, conv, newRandomTelemetry(5, scaled(300), now, 3*time.Hour))
			for wi, w := range windowsAround(now, 3*time.Hour) {
				for _, svc := range []string{"", "checkout", "unknown"} {
					for _, dom := range []string{"", conv.DefaultDomain} {
						q := telemetry.ErrorsQuery{Window: w, Service: svc, Domain: dom}
						src.sameAnswers(t, fmt.Sprintf("Errors window %d %+v", wi, q), func(s telemetry.Source) (any, error) { return s.Errors(ctx, q) })
					}
				}
			}
		})
	}
}
