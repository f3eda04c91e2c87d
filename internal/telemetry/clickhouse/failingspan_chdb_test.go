//go:build chdb

package clickhouse_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/runlens/runlens/internal/telemetry/engine"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/clickhouse"
	"github.com/runlens/runlens/internal/telemetry/conventions"
	"github.com/runlens/runlens/internal/telemetry/telemetrytest"
)

// The spans of the window's failing traces are read within the time those traces span (the
// exporter's trace-id lookup table says it), not across the table: an hour of a table that
// holds days reads about that hour. A failing trace whose spans lie partly before the window
// keeps them (the lookup table knows its whole time), and without the lookup table the same
// answer comes from the whole table.
func TestAFailingTracesSpansAreReadWithinTheTimeTheyLieIn(t *testing.T) {
	e := chdbEngine(t)
	addr := front(t, e, nil)
	tb := freshTables(t, e)
	now := telemetrytest.Now
	w := telemetry.Window{StartMs: now.Add(-time.Hour).UnixMilli(), EndMs: now.UnixMilli()}
	// Three days earlier: 1,200,000 spans (their own failing traces among them), in other
	// partitions of the table; the narrowing, which starts at five million spans, is lowered
	// to a million so that a table this size shows it.
	clickhouse.SetNarrowMinSpans(t, 1_000_000)
	if err := e.Exec(b10Spans(tb, 1_200_000, now.Add(-72*time.Hour))); err != nil {
		t.Fatal(err)
	}
	span := func(trace, id, parent, name string, at time.Time, failed bool, exc string) telemetry.SpanRow {
		s := telemetry.SpanRow{TraceID: trace, SpanID: id, ParentSpanID: parent, Name: name, Service: "checkout",
			Kind: telemetry.KindServer, StartNs: at.UnixNano(), DurationNs: int64(time.Millisecond),
			StatusCode: telemetry.CodeUnset, Attributes: conventions.Attributes{}}
		if failed {
			s.StatusCode = telemetry.CodeError
		}
		if exc != "" {
			s.Events = []telemetry.SpanEvent{{Name: "exception", TimeNs: s.StartNs,
				Attributes: conventions.Attributes{"exception.type": "CardError", "exception.message": exc}}}
		}
		return s
	}
	// The window's failing traces: enough of them that the TraceId bloom filter of nearly
	// every granule of the older days answers "maybe" (a read across the table then reads
	// those days), each failing in its child.
	const failing = 2000
	at := func(d time.Duration) time.Time { return now.Add(-d) }
	var rows []telemetry.SpanRow
	for i := range failing {
		trace, root := fmt.Sprintf("%032x", i+1), fmt.Sprintf("%016x", 2*i+1)
		start := at(55*time.Minute - time.Duration(i)*time.Second)
		rows = append(rows, span(trace, root, "", "POST /pay", start, true, ""),
			span(trace, fmt.Sprintf("%016x", 2*i+2), root, "charge", start.Add(time.Millisecond), true, "card declined"))
	}
	// skewed's root failed a minute ago, in the window; the failure started in its child,
	// whose clock put it before the window: the root is not an origin, and the child's
	// occurrence is not the window's. Read only within the window, the root would be an
	// origin, and the newest occurrence.
	const skewed, late = "4bf92f3577b34da6a3ce929d0e0e4736", "7c9d5a25c7afd746f6a12ce07ffc84a1"
	rows = append(rows, span(skewed, "10f067aa0ba902b7", "", "POST /pay", at(time.Minute), true, ""),
		span(skewed, "10f067aa0ba902b8", "10f067aa0ba902b7", "charge", at(62*time.Minute), true, "card expired"),
		span("5b8efff798038103d269b633813fc60c", "20f067aa0ba902b7", "", "GET /cart", at(10*time.Minute), false, ""),
		// late's root is fine and in the window; its child failed before the window: the run
		// is ok (its entry span's own verdict, docs/semantics.md R5), its trace's error span
		// counted wherever it lies.
		span(late, "30f067aa0ba902b7", "", "GET /orders", at(30*time.Second), false, ""),
		span(late, "30f067aa0ba902b8", "30f067aa0ba902b7", "load", at(65*time.Minute), true, ""))
	if err := e.LoadSpans(tb, rows); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	errorsOf := func(o clickhouse.Options) telemetry.ErrorReport {
		t.Helper()
		r, err := engine.New(open(t, addr, tb.Database, o), nil).Errors(ctx, telemetry.ErrorsQuery{Window: w})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	// Under the 1,200,000 spans of the older days, above what the window's partition (4,003
	// spans) and the lookup table (242,001 rows) hold.
	tight := clickhouse.Options{MaxRowsToRead: 1_000_000}
	narrowed := errorsOf(tight)
	if narrowed.Scan.Limited {
		t.Fatalf("the failing traces' reads went past the window's time: limited at %d rows", tight.MaxRowsToRead)
	}
	if narrowed.Events != failing || len(narrowed.Groups) != 1 || slices.Contains(narrowed.Groups[0].TraceIDs, skewed) ||
		narrowed.Groups[0].SampleMessage != "card declined" || narrowed.Groups[0].Count != failing {
		t.Fatalf("errors of the hour: %d occurrences in %d groups (%+v); want %d, all card declined, none in the skewed trace (its origin lies before the window)",
			narrowed.Events, len(narrowed.Groups), narrowed.Groups, failing)
	}
	// The runs of the hour: their error spans are counted within the time their traces span.
	failedRuns := func(o clickhouse.Options) telemetry.RunPage {
		t.Helper()
		r, err := engine.New(open(t, addr, tb.Database, o), nil).Runs(ctx, telemetry.RunsQuery{Window: w, Status: telemetry.StatusError, Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := failedRuns(tight); r.Scan.Limited || r.Total != failing+1 || len(r.Runs) != 1 || r.Runs[0].TraceID != skewed || r.Runs[0].ErrorCount != 2 {
		t.Fatalf("failed runs of the hour under the row limit: total %d, limited %v, newest %+v; want %d, the newest %s with both its error spans",
			r.Total, r.Scan.Limited, r.Runs, failing+1, skewed)
	}
	fullRuns := failedRuns(clickhouse.Options{})
	full := errorsOf(clickhouse.Options{})
	// The rows examined differ: unlimited, the failing traces are read in one pass; under the
	// limit, that pass is refused and they are read by lists of ids within their time.
	if diff := cmp.Diff(full, narrowed, cmpopts.IgnoreFields(telemetry.Scan{}, "Scanned")); diff != "" {
		t.Errorf("the answer under the row limit differs from the unlimited one (-unlimited +limited):\n%s", diff)
	}
	// Without the lookup table the runs' error spans are read across the table: the same
	// answer, and the tight limit is reached.
	if err := e.Exec("TRUNCATE TABLE `" + tb.Database + "`.`" + tb.Traces + "_trace_id_ts`"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(fullRuns, failedRuns(clickhouse.Options{})); diff != "" {
		t.Errorf("the runs read across the whole table differ (-narrowed +whole):\n%s", diff)
	}
	if !failedRuns(tight).Scan.Limited {
		t.Errorf("without the lookup table the runs' error spans stayed under %d rows read", tight.MaxRowsToRead)
	}
}

// The error records of a window's failing traces are read wherever they lie: a record written
// before the window under a failing trace's origin still gives the occurrence its message,
// alone in the records table or beside records of the window (the table then spans both).
func TestAFailingTracesRecordsAreFoldedWhereverTheyLie(t *testing.T) {
	e := chdbEngine(t)
	addr := front(t, e, nil)
	tb := freshTables(t, e)
	now := telemetrytest.Now
	w := telemetry.Window{StartMs: now.Add(-time.Hour).UnixMilli(), EndMs: now.UnixMilli()}
	const trace, root, child = "6e0c63257de34c92bf9efcd03927272e", "30f067aa0ba902b7", "30f067aa0ba902b8"
	at := now.Add(-30 * time.Minute)
	if err := e.LoadSpans(tb, []telemetry.SpanRow{
		{TraceID: trace, SpanID: root, Name: "POST /pay", Service: "checkout", Kind: telemetry.KindServer,
			StartNs: at.UnixNano(), DurationNs: int64(time.Second), StatusCode: telemetry.CodeError, Attributes: conventions.Attributes{}},
		{TraceID: trace, SpanID: child, ParentSpanID: root, Name: "charge", Service: "checkout", Kind: telemetry.KindClient,
			StartNs: at.Add(time.Millisecond).UnixNano(), DurationNs: int64(time.Millisecond), StatusCode: telemetry.CodeError, Attributes: conventions.Attributes{}},
	}); err != nil {
		t.Fatal(err)
	}
	errorsOf := func() telemetry.ErrorReport {
		t.Helper()
		r, err := engine.New(open(t, addr, tb.Database, clickhouse.Options{}), nil).Errors(context.Background(), telemetry.ErrorsQuery{Window: w})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	message := func(r telemetry.ErrorReport) string {
		if r.Events != 1 || len(r.Groups) != 1 {
			t.Fatalf("%d occurrences in %d groups, want the trace's one: %+v", r.Events, len(r.Groups), r.Groups)
		}
		return r.Groups[0].SampleMessage
	}
	if got := message(errorsOf()); got != "charge failed" {
		t.Fatalf("without records the occurrence says %q, want the origin's name (charge failed)", got)
	}
	// The origin's record, stamped by a clock two minutes behind: before the window.
	if err := e.LoadLogs(tb, []telemetry.LogRow{{TimeNs: w.StartMs*1e6 - int64(2*time.Minute), TraceID: trace, SpanID: child,
		Service: "checkout", SeverityNumber: 17, SeverityText: "ERROR", Body: "card declined by issuer", Attributes: conventions.Attributes{}}}); err != nil {
		t.Fatal(err)
	}
	if got := message(errorsOf()); got != "card declined by issuer" {
		t.Errorf("with the origin's record before the window the occurrence says %q, want the record's body", got)
	}
	// A record in the window of another trace: the window's part alone would not find the
	// failing trace's record, so the answer still needs the part outside.
	if err := e.LoadLogs(tb, []telemetry.LogRow{{TimeNs: now.Add(-10 * time.Minute).UnixNano(), Service: "billing",
		SeverityNumber: 9, SeverityText: "INFO", Body: "ok", Attributes: conventions.Attributes{}}}); err != nil {
		t.Fatal(err)
	}
	if got := message(errorsOf()); got != "card declined by issuer" {
		t.Errorf("beside a record in the window the occurrence says %q, want the record's body", got)
	}
}
