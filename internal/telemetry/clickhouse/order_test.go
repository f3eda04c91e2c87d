package clickhouse

import (
	"strconv"
	"testing"

	"github.com/runlens/runlens/internal/telemetry"
)

// The failing traces' spans are ordered and deduplicated in Go as ClickHouse's ORDER BY
// Timestamp, SpanId … LIMIT 1 BY TraceId, SpanId does for every other scan.
func TestOnceNewestFirstOrdersAndDropsCopiesAsTheScanDoes(t *testing.T) {
	row := func(trace, span string, start int64, name string) telemetry.SpanRow {
		return telemetry.SpanRow{TraceID: trace, SpanID: span, StartNs: start, Name: name}
	}
	in := []telemetry.SpanRow{
		row("t1", "a", 10, "first copy"),
		row("t2", "b", 30, ""),
		row("t1", "a", 10, "second copy"),
		row("t1", "c", 30, ""),
		row("t2", "a", 20, ""), // the same span id in another trace is another span
	}
	got := onceNewestFirst(append([]telemetry.SpanRow(nil), in...), false)
	want := []string{"t1/c@30", "t2/b@30", "t2/a@20", "t1/a@10"}
	if len(got) != len(want) {
		t.Fatalf("%d spans, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		if s := got[i].TraceID + "/" + got[i].SpanID + "@" + strconv.FormatInt(got[i].StartNs, 10); s != w {
			t.Errorf("span %d = %s, want %s", i, s, w)
		}
	}
	if got[3].Name != "first copy" {
		t.Errorf("kept %q of the copies, want the first as read", got[3].Name)
	}
	oldest := onceNewestFirst(append([]telemetry.SpanRow(nil), in...), true)
	if len(oldest) != 4 || oldest[0].StartNs != 10 || oldest[3].SpanID != "c" {
		t.Errorf("oldest first: %+v", oldest)
	}
}
