//go:build chdb

package clickhouse_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/clickhouse"
	"github.com/runlens/runlens/internal/telemetry/telemetrytest"
)

// A window with no failing trace sends no origin query and asks for no record of a failing
// trace, and its error records are still occurrences of their own; a window with failing traces
// sends both, through the lookup table's narrowing as before.
func TestAWindowWithNoFailingTraceSendsNoOriginQuery(t *testing.T) {
	e := engine(t)
	addr, take := recordingFront(t, e)
	tb := freshTables(t, e)
	now := telemetrytest.Now
	// A million spans three days earlier, so that the window's failing traces are narrowed
	// through the lookup table.
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
	// Fine spans in the last five minutes, one with an error record.
	const quiet = "5b8efff798038103d269b633813fc60c"
	rows = append(rows, serverSpan(now, quiet, "20f067aa0ba902b7", "", "checkout", 2*time.Minute, false))
	if err := e.LoadSpans(tb, rows); err != nil {
		t.Fatal(err)
	}
	// And, before the quiet minutes, a record in a failing trace: the records table spans more
	// than them.
	if err := e.LoadLogs(tb, []telemetry.LogRow{{TimeNs: now.Add(-2 * time.Minute).UnixNano(), TraceID: quiet, SpanID: "20f067aa0ba902b7",
		Service: "checkout", SeverityNumber: 17, SeverityText: "ERROR", Body: "cache miss storm"},
		{TimeNs: now.Add(-40 * time.Minute).UnixNano(), TraceID: fmt.Sprintf("%032x", 11), SpanID: fmt.Sprintf("%016x", 22),
			Service: "payments", SeverityNumber: 17, SeverityText: "ERROR", Body: "card declined"}}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ask := func(w telemetry.Window) (telemetry.ErrorReport, telemetry.Status, []string) {
		t.Helper()
		take()
		eng := telemetry.NewEngine(open(t, addr, tb.Database, clickhouse.Options{}), nil)
		r, err := eng.Errors(ctx, telemetry.ErrorsQuery{Window: w})
		if err != nil {
			t.Fatal(err)
		}
		st, err := eng.Status(ctx, telemetry.StatusQuery{Window: w})
		if err != nil {
			t.Fatal(err)
		}
		return r, st, take()
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
	// A statement on the records that asks about failing traces.
	records := []string{"`" + tb.Logs + "`", "StatusCode = 'Error'"}
	hour := telemetry.Window{StartMs: now.Add(-time.Hour).UnixMilli(), EndMs: now.UnixMilli()}
	r, st, statements := ask(hour)
	if r.Events != failing+1 || st.Errors != failing+1 {
		t.Errorf("errors of the hour: %d occurrences, the status %d; want %d (the failures and the record)", r.Events, st.Errors, failing+1)
	}
	if n := count(statements, origins...); n != 2 {
		t.Errorf("%d origin queries for the errors and the status of the hour, want 2", n)
	}
	if n := count(statements, lookup...); n != 2 {
		t.Errorf("the lookup table was asked %d times about the hour's failing traces, want 2", n)
	}
	// The status's (its records of no failing trace); the errors read the hour's records,
	// which are all the table holds, without asking.
	if n := count(statements, records...); n != 1 {
		t.Errorf("%d statements on the records asked about the hour's failing traces, want 1", n)
	}
	five := telemetry.Window{StartMs: now.Add(-5 * time.Minute).UnixMilli(), EndMs: now.UnixMilli()}
	r, st, statements = ask(five)
	if r.Events != 1 || len(r.Groups) != 1 || r.Groups[0].SampleMessage != "cache miss storm" || st.Errors != 1 {
		t.Errorf("the last five minutes: %d occurrences %+v, the status %d; want the record alone", r.Events, r.Groups, st.Errors)
	}
	if n := count(statements, origins...); n != 0 {
		t.Errorf("%d origin queries for a window with no failing trace, want none", n)
	}
	if n := count(statements, lookup...); n != 0 {
		t.Errorf("the lookup table was asked %d times about a window with no failing trace, want none", n)
	}
	if n := count(statements, records...); n != 0 {
		t.Errorf("%d statements on the records asked about failing traces in a window with none, want none", n)
	}
}
