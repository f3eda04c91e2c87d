package telemetry

import (
	"reflect"
	"slices"
	"testing"
)

func TestNearestRank(t *testing.T) {
	twenty := make([]int64, 20)
	for i := range twenty {
		twenty[i] = int64(i + 1)
	}
	tests := []struct {
		name   string
		sorted []int64
		p      float64
		want   int64
	}{
		{"p95 of twenty values is the nineteenth", twenty, 0.95, 19},
		{"p50 of twenty values is the tenth", twenty, 0.50, 10},
		{"p99 of twenty values is the last", twenty, 0.99, 20},
		{"any percentile of one value is that value", []int64{7}, 0.5, 7},
		{"an empty set is zero", nil, 0.95, 0},
		{"p50 of four values is the second", []int64{1, 2, 3, 4}, 0.5, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := NearestRank(tt.sorted, tt.p); got != tt.want {
				t.Fatalf("NearestRank = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestSummarizeAndShare(t *testing.T) {
	s := Summarize([]int64{30e6, 10e6, 20e6})
	if s.Count != 3 || s.SumNs != 60e6 || s.P50 != 20e6 || s.P99 != 30e6 || s.MinNs != 10e6 {
		t.Fatalf("Summarize = %+v", s)
	}
	if Ms(1_234_567) != 1.235 {
		t.Fatalf("Ms(1234567ns) = %v, want 1.235", Ms(1_234_567))
	}
	if Share(1, 3) != 0.3333 || Share(1, 0) != 0 {
		t.Fatalf("Share = %v, %v", Share(1, 3), Share(1, 0))
	}
}

// spans builds a run: root a (0–100) with children b (10–40) and c (20–90); c has child d
// (30–80); e's parent is missing, so it is a second root.
func sampleSpans() []Span {
	return []Span{
		{SpanID: "d", ParentSpanID: "c", StartNs: 30, DurationNs: 50},
		{SpanID: "a", StartNs: 0, DurationNs: 100},
		{SpanID: "c", ParentSpanID: "a", StartNs: 20, DurationNs: 70},
		{SpanID: "b", ParentSpanID: "a", StartNs: 10, DurationNs: 30},
		{SpanID: "e", ParentSpanID: "gone", StartNs: 5, DurationNs: 1},
	}
}

func ids(ts []TreeSpan) (out []string) {
	for _, s := range ts {
		out = append(out, s.SpanID)
	}
	return out
}

func TestTree(t *testing.T) {
	tests := []struct {
		name        string
		maxSpans    int
		maxDepth    int
		want        []string
		wantDepths  []int
		wantOmitted int
	}{
		{"every span depth first, children by start", 50, 8, []string{"a", "b", "c", "d", "e"}, []int{0, 1, 1, 2, 0}, 0},
		{"max depth 2 drops grandchildren", 50, 2, []string{"a", "b", "c", "e"}, []int{0, 1, 1, 0}, 1},
		{"max spans keeps the first in tree order", 2, 8, []string{"a", "b"}, []int{0, 1}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, omitted := Tree(sampleSpans(), tt.maxSpans, tt.maxDepth)
			var depths []int
			for _, s := range got {
				depths = append(depths, s.Depth)
			}
			if !reflect.DeepEqual(ids(got), tt.want) || !reflect.DeepEqual(depths, tt.wantDepths) || omitted != tt.wantOmitted {
				t.Fatalf("Tree = %v %v omitted %d", ids(got), depths, omitted)
			}
		})
	}
}

func TestTreeSurvivesACycle(t *testing.T) {
	spans := []Span{{SpanID: "x", ParentSpanID: "y"}, {SpanID: "y", ParentSpanID: "x"}}
	got, omitted := Tree(spans, 10, 10)
	if len(got) != 2 || omitted != 0 {
		t.Fatalf("Tree of a cycle = %v, omitted %d", ids(got), omitted)
	}
}

func TestCriticalPathFollowsTheChildThatEndedLast(t *testing.T) {
	if got, want := CriticalPath(sampleSpans()), []string{"a", "c", "d"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("CriticalPath = %v, want %v", got, want)
	}
	if CriticalPath(nil) != nil {
		t.Fatal("critical path of nothing is not empty")
	}
}

// A failed request: its query took 27.7 ms, then a 0.4 ms error handler ran and the request
// ended. The handler ended last, but the query is what the request waited for: both are on
// the path, the fast sibling that ended long before is not.
func TestCriticalPathKeepsTheQueryAnErrorHandlerFollowed(t *testing.T) {
	ms := func(f float64) int64 { return int64(f * 1e6) }
	spans := []Span{
		{SpanID: "req", StartNs: 0, DurationNs: ms(29)},
		{SpanID: "auth", ParentSpanID: "req", StartNs: ms(0.1), DurationNs: ms(0.5)},
		{SpanID: "query", ParentSpanID: "req", StartNs: ms(0.7), DurationNs: ms(27.7)},
		{SpanID: "rows", ParentSpanID: "query", StartNs: ms(20), DurationNs: ms(8.3)},
		{SpanID: "handler", ParentSpanID: "req", StartNs: ms(28.5), DurationNs: ms(0.4)},
	}
	if got, want := CriticalPath(spans), []string{"req", "auth", "query", "rows", "handler"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("CriticalPath = %v, want %v", got, want)
	}
	// A sibling that overlaps the query and ends before it is not on the path.
	spans = append(spans, Span{SpanID: "cache", ParentSpanID: "req", StartNs: ms(1), DurationNs: ms(2)})
	if got := CriticalPath(spans); slices.Contains(got, "cache") {
		t.Fatalf("CriticalPath = %v contains a span the request never waited for", got)
	}
}

func TestVerdict(t *testing.T) {
	tests := []struct {
		name string
		s    Status
		want string
	}{
		{"an error in the window fails", Status{Spans: 10, Errors: 1}, VerdictFail},
		{"no span in the window warns", Status{Logs: 3}, VerdictWarn},
		{"spans without errors pass", Status{Spans: 3}, VerdictPass},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Verdict(tt.s); got != tt.want {
				t.Fatalf("Verdict = %s, want %s", got, tt.want)
			}
		})
	}
}
