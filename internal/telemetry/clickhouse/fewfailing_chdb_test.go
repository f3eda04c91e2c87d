//go:build chdb

package clickhouse_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/clickhouse"
	"github.com/runlens/runlens/internal/telemetry/clickhouse/chfront"
	"github.com/runlens/runlens/internal/telemetry/telemetrytest"
)

// A window with few failing traces has their spans found through the traces table's
// trace-id bloom filter, without asking the lookup table for the time they span, and a window
// with none sends no origin query: the answers are the same as through the lookup, and the
// read stays within a row limit that a read of the table's older days would pass.
func TestFewFailingTracesAreFoundWithoutTheLookupAndNoneSendNoOriginQuery(t *testing.T) {
	e := engine(t)
	var mu sync.Mutex
	var sent []string
	addr := front(t, e, &chfront.Front{Queries: func(sql string) {
		mu.Lock()
		sent = append(sent, sql)
		mu.Unlock()
	}})
	tb := freshTables(t, e)
	now := telemetrytest.Now
	// Three days earlier: 1,200,000 spans in other partitions; narrowing from a million spans,
	// so that the window's failing traces would be narrowed through the lookup table.
	clickhouse.SetNarrowMinSpans(t, 1_000_000)
	if err := e.Exec(b10Spans(tb, 1_200_000, now.Add(-72*time.Hour))); err != nil {
		t.Fatal(err)
	}
	const failing = 20
	var rows []telemetry.SpanRow
	for i := range failing {
		trace, root := fmt.Sprintf("%032x", i+1), fmt.Sprintf("%016x", 2*i+1)
		before := 50*time.Minute - time.Duration(i)*time.Minute
		rows = append(rows, serverSpan(now, trace, root, "", "checkout", before, true),
			serverSpan(now, trace, fmt.Sprintf("%016x", 2*i+2), root, "payments", before-time.Millisecond, true))
	}
	if err := e.LoadSpans(tb, rows); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ask := func(o clickhouse.Options, w telemetry.Window) (telemetry.ErrorReport, telemetry.Status, []string) {
		t.Helper()
		mu.Lock()
		sent = nil
		mu.Unlock()
		eng := telemetry.NewEngine(open(t, addr, tb.Database, o), nil)
		r, err := eng.Errors(ctx, telemetry.ErrorsQuery{Window: w})
		if err != nil {
			t.Fatal(err)
		}
		st, err := eng.Status(ctx, telemetry.StatusQuery{Window: w})
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		return r, st, sent
	}
	count := func(statements []string, parts ...string) (n int) {
		for _, s := range statements {
			all := true
			for _, p := range parts {
				all = all && strings.Contains(s, p)
			}
			if all {
				n++
			}
		}
		return n
	}
	// The lookup table asked about the failing traces (not about the runs' roots, which the
	// status asks separately).
	lookup, origins := []string{tb.Traces + "_trace_id_ts", "StatusCode = 'Error'"}, []string{"WITH rows AS"}
	hour := telemetry.Window{StartMs: now.Add(-time.Hour).UnixMilli(), EndMs: now.UnixMilli()}
	// Under the 1,200,000 spans of the older days.
	tight := clickhouse.Options{MaxRowsToRead: 1_000_000}
	few, fewStatus, statements := ask(tight, hour)
	if few.Scan.Limited || fewStatus.Scan.Limited {
		t.Fatalf("the few failing traces' reads went past the window's time: limited at %d rows", tight.MaxRowsToRead)
	}
	if few.Events != failing || fewStatus.Errors != failing {
		t.Fatalf("errors of the hour: %d occurrences, the status %d; want %d", few.Events, fewStatus.Errors, failing)
	}
	if n := count(statements, lookup...); n != 0 {
		t.Errorf("the lookup table was asked %d times about %d failing traces, want none", n, failing)
	}
	if n := count(statements, origins...); n != 2 {
		t.Errorf("%d origin queries for the errors and the status, want 2", n)
	}
	// Through the lookup table, as for many failing traces: the same answers.
	clickhouse.SetFewTracesMax(t, 0)
	narrowed, narrowedStatus, statements := ask(clickhouse.Options{}, hour)
	if n := count(statements, lookup...); n == 0 {
		t.Error("the lookup table was not asked with the few-traces bound at 0: the comparison proves nothing")
	}
	if diff := cmp.Diff(narrowed, few); diff != "" {
		t.Errorf("errors found through the bloom filter differ from those through the lookup (-lookup +bloom):\n%s", diff)
	}
	if diff := cmp.Diff(narrowedStatus, fewStatus); diff != "" {
		t.Errorf("the status through the bloom filter differs from that through the lookup (-lookup +bloom):\n%s", diff)
	}
	// A window with no failing trace sends no origin query.
	clickhouse.SetFewTracesMax(t, 100)
	quiet := telemetry.Window{StartMs: now.Add(-5 * time.Minute).UnixMilli(), EndMs: now.UnixMilli()}
	none, noneStatus, statements := ask(clickhouse.Options{}, quiet)
	if none.Events != 0 || noneStatus.Errors != 0 {
		t.Errorf("the quiet five minutes: %d occurrences, the status %d; want none", none.Events, noneStatus.Errors)
	}
	if n := count(statements, origins...); n != 0 {
		t.Errorf("%d origin queries for a window with no failing trace, want none", n)
	}
}
