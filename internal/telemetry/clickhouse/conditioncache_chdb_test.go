//go:build chdb

package clickhouse_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/runlens/runlens/internal/telemetry/engine"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/clickhouse"
)

// An answer does not depend on the queries before it: the error records of no failing trace
// are counted by asking, per call, whether their traces failed anywhere, and a call whose
// question is empty (no record in five minutes) or answered "nowhere" (the half hour's
// record) must not change the next call's answer (the hour's second record, whose trace
// failed three hours ago, is no occurrence of the hour). ClickHouse 26.5's query condition
// cache, which remembers per part the granules where a filter matched nothing, answers a
// filter of the form "StatusCode = 'Error' AND TraceId GLOBAL IN (…)" wrongly after the same
// filter ran over an empty set; the adapter's queries nest that filter in others, and this
// sequence, among many granules, holds them to the right answers.
func TestAnAnswerDoesNotDependOnTheQueriesBeforeIt(t *testing.T) {
	e := chdbEngine(t)
	addr := front(t, e, nil)
	tb := freshTables(t, e)
	now := time.Now().Truncate(time.Second)
	ns := func(d time.Duration) int64 { return now.Add(-d).UnixNano() }
	span := func(trace, id, parent string, at time.Duration, failed bool) telemetry.SpanRow {
		return serverSpan(now, trace, id, parent, "cart", at, failed)
	}
	const lone, failedBefore, other = "0af7651916cd43dd8448eb211c80319c", "4bf92f3577b34da6a3ce929d0e0e4736", "5b8efff798038103d269b633813fc60c"
	rows := []telemetry.SpanRow{
		span(lone, "00f067aa0ba902b7", "", 10*time.Minute, false),
		span(failedBefore, "10f067aa0ba902b7", "", 3*time.Hour, true),
		span(failedBefore, "10f067aa0ba902b8", "10f067aa0ba902b7", 40*time.Minute, false),
		span(other, "20f067aa0ba902b7", "", 2*time.Hour, true),
	}
	// Many granules' worth of other spans around them.
	for i := range 40_000 {
		rows = append(rows, span(fmt.Sprintf("%032x", i+1), fmt.Sprintf("%016x", i+1), "", time.Duration(i)*200*time.Millisecond, false))
	}
	if err := e.LoadSpans(tb, rows); err != nil {
		t.Fatal(err)
	}
	if err := e.LoadLogs(tb, []telemetry.LogRow{
		{TimeNs: ns(10 * time.Minute), TraceID: lone, SpanID: "00f067aa0ba902b7", Service: "cart", SeverityNumber: 17, SeverityText: "ERROR", Body: "cart lookup failed"},
		{TimeNs: ns(40 * time.Minute), TraceID: failedBefore, SpanID: "10f067aa0ba902b8", Service: "cart", SeverityNumber: 17, SeverityText: "ERROR", Body: "retrying the payment"},
	}); err != nil {
		t.Fatal(err)
	}
	eng := engine.New(open(t, addr, tb.Database, clickhouse.Options{}), nil)
	ctx := context.Background()
	status := func(d time.Duration) telemetry.Status {
		t.Helper()
		st, err := eng.Status(ctx, telemetry.StatusQuery{Window: telemetry.Window{StartMs: now.Add(-d).UnixMilli(), EndMs: now.Add(time.Second).UnixMilli()}})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	for i := range 4 {
		// Five minutes: no error record, no occurrence.
		if st := status(5 * time.Minute); st.Errors != 0 {
			t.Errorf("call %d: the last five minutes have %d error occurrences, want none", i, st.Errors)
		}
		// The half hour: the lone record is one occurrence.
		if st := status(30 * time.Minute); st.Errors != 1 {
			t.Errorf("call %d: the last half hour has %d error occurrences, want 1 (the record of a trace that failed nowhere)", i, st.Errors)
		}
		// The hour: the lone record, and not the record of the trace that failed three hours ago.
		if st := status(time.Hour); st.Errors != 1 {
			t.Errorf("call %d: the last hour has %d error occurrences, want 1 (the record of a trace that failed before the hour is none)", i, st.Errors)
		}
	}
}
