//go:build chdb

package clickhouse_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/clickhouse"
	"github.com/runlens/runlens/internal/telemetry/telemetrytest"
)

// The status reads the trace-id lookup table once for both sets of traces it narrows — the
// window's runs' traces (where their error spans are counted) and its failing traces (where
// their origins are found) — and answers as it does with no narrowing at all.
func TestTheStatusAsksTheLookupTableOnce(t *testing.T) {
	e := engine(t)
	addr, take := recordingFront(t, e)
	tb := freshTables(t, e)
	now := telemetrytest.Now
	// A day of 1.2 M spans, 1 trace in 50 failing; the narrowing starts at a million.
	clickhouse.SetNarrowMinSpans(t, 1_000_000)
	if err := e.Exec(b10Spans(tb, 1_200_000, now), b10Logs(tb, 1_200_000, 240_000, now)); err != nil {
		t.Fatal(err)
	}
	hour := telemetry.Window{StartMs: now.Add(-time.Hour).UnixMilli(), EndMs: now.UnixMilli()}
	lookup := tb.Traces + "_trace_id_ts"
	status := func() (telemetry.Status, int) {
		t.Helper()
		take()
		st, err := telemetry.NewEngine(open(t, addr, tb.Database, clickhouse.Options{}), nil).Status(context.Background(), telemetry.StatusQuery{Window: hour})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, s := range take() {
			if strings.Contains(s, lookup) {
				n++
			}
		}
		return st, n
	}
	narrowed, asked := status()
	if asked != 1 {
		t.Errorf("the status asked the lookup table %d times, want once", asked)
	}
	// The hour holds 2,500 traces of which about 50 fail (each through its root and its first
	// query: one occurrence each).
	var failedRuns int64
	for _, d := range narrowed.Domains {
		failedRuns += d.ErrorCount
	}
	if narrowed.Errors < 30 || failedRuns < 30 {
		t.Fatalf("the hour's status: %d errors, %d failed runs; want the hour's failing traces", narrowed.Errors, failedRuns)
	}
	clickhouse.SetNarrowMinSpans(t, 1<<62)
	whole, asked := status()
	if asked != 0 {
		t.Errorf("with no narrowing the status asked the lookup table %d times, want none", asked)
	}
	if diff := cmp.Diff(whole, narrowed); diff != "" {
		t.Errorf("the narrowed status differs from the one read across the table (-whole +narrowed):\n%s", diff)
	}
}
