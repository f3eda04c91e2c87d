package telemetry

import (
	"reflect"
	"slices"
	"testing"
)

// jsSpan builds a span the way the OpenTelemetry JS SDK records it: the start is the wall clock
// in whole milliseconds (Date.now()), the end is that start plus the duration measured with
// the sub-millisecond performance clock. Times are in ms.
func jsSpan(id, parent string, realStartMs, durationMs float64) Span {
	start := int64(realStartMs) * 1e6 // floor to the millisecond
	return Span{SpanID: id, ParentSpanID: parent, StartNs: start, DurationNs: int64(durationMs * 1e6)}
}

// A failed request from a Node service: its query ran from 2.3 ms to 50.8 ms and failed, the
// error handler ran from 50.9 ms to 51.5 ms, the request ended at 52 ms. Recorded with starts
// rounded down to the millisecond, the query appears to end at 50.5 ms and the handler to
// start at 50 ms: the query ends within the clock's resolution of the handler's start, which
// does not make it overlap the handler. The query is what the request waited for and stays on
// the path; the cache lookup that ended long before the query did is not on it.
func TestCriticalPathKeepsTheQueryWithMillisecondStarts(t *testing.T) {
	spans := []Span{
		jsSpan("req", "", 0, 52),
		jsSpan("auth", "req", 0.2, 1.1),
		jsSpan("query", "req", 2.3, 48.5),
		jsSpan("cache", "req", 3.4, 5),
		jsSpan("handler", "req", 50.9, 0.6),
	}
	if got, want := CriticalPath(spans), []string{"req", "auth", "query", "handler"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("CriticalPath = %v, want %v", got, want)
	}
}

// A span that genuinely overlaps the next one by more than the clock's resolution is not on
// the path: the millisecond allowance does not merge concurrent work.
func TestCriticalPathMillisecondStartsStillExcludeOverlap(t *testing.T) {
	spans := []Span{
		jsSpan("req", "", 0, 60),
		jsSpan("fetch", "req", 10, 45),  // ends 55
		jsSpan("render", "req", 20, 39), // ends 59
	}
	if got := CriticalPath(spans); slices.Contains(got, "fetch") || !slices.Contains(got, "render") {
		t.Fatalf("CriticalPath = %v, want render and not fetch, which ran alongside it", got)
	}
}

// With nanosecond start times (the Go SDK) there is no allowance: a child that ended 50 µs after
// its sibling started ran alongside it, as Jaeger defines the path.
func TestCriticalPathNanosecondStartsAreExact(t *testing.T) {
	spans := []Span{
		{SpanID: "req", StartNs: 1, DurationNs: 60_000_000},
		{SpanID: "query", ParentSpanID: "req", StartNs: 2_300_017, DurationNs: 48_650_000}, // ends 50.950017 ms
		{SpanID: "handler", ParentSpanID: "req", StartNs: 50_900_003, DurationNs: 600_000},
	}
	if got, want := CriticalPath(spans), []string{"req", "handler"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("CriticalPath = %v, want %v", got, want)
	}
}
