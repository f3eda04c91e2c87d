//go:build chdb

package clickhouse_test

import (
	"context"
	"testing"
	"time"

	"github.com/runlens/runlens/internal/telemetry/engine"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/clickhouse"
)

// TestFailingTracesAreReadInOnePass holds the adapter's one-pass read of the failing traces
// (telemetry.FailingTraceScanner) to the engine's reads by lists of trace ids: the same errors
// and status on a day with more failing traces than one list holds, in a few statements where
// the lists take one per 500 traces; and, when the one pass is cut by the row limit, the same
// answer as the lists give under that limit.
func TestFailingTracesAreReadInOnePass(t *testing.T) {
	e := chdbEngine(t)
	addr, sent := countingFront(t, e)
	tb := freshTables(t, e)
	end := time.Now().Truncate(time.Minute)
	const spans = 300_000 // 60,000 traces, about 1,200 of them failing
	if err := e.Exec(b10Spans(tb, spans, end), b10Logs(tb, spans, spans/5, end)); err != nil {
		t.Fatal(err)
	}
	b := open(t, addr, tb.Database, clickhouse.Options{MaxExecutionTime: 120 * time.Second})
	ctx := context.Background()
	w := telemetry.Window{StartMs: end.Add(-25 * time.Hour).UnixMilli(), EndMs: end.Add(time.Minute).UnixMilli()}
	same := []cmp.Option{cmpopts.EquateEmpty(), cmpopts.IgnoreFields(telemetry.Scan{}, "Scanned")}

	errorsOf := func(t *testing.T, eng *engine.Engine) (telemetry.ErrorReport, int64) {
		t.Helper()
		sent.Store(0)
		rep, err := eng.Errors(ctx, telemetry.ErrorsQuery{Window: w})
		if err != nil {
			t.Fatal(err)
		}
		return rep, sent.Load()
	}
	eng := engine.New(b, nil)
	got, onePass := errorsOf(t, eng)
	want, lists := errorsOf(t, eng.ScansOnly())
	if diff := cmp.Diff(want, got, same...); diff != "" {
		t.Fatalf("errors through the one pass differ from the lists' (-lists +one pass):\n%s", diff)
	}
	failing := int64(got.Events)
	if failing < 900 || len(got.Groups) == 0 || got.Scan.Limited {
		t.Fatalf("%d occurrences in %d groups (limited %v); want the day's 1,200 failing traces", failing, len(got.Groups), got.Scan.Limited)
	}
	// The one pass: the tables' check, the failing traces' spans and records, the window's error
	// records (the window's error spans are among the failing traces' spans); the lists: the
	// error spans, the error records, and two statements per 500 traces.
	if chunks := (failing + 499) / 500; onePass > 4 || lists < 2+2*chunks {
		t.Fatalf("the answer took %d statements through the one pass and %d through the lists; want at most 4, and at least %d",
			onePass, lists, 2+2*chunks)
	}
	st, err := eng.Status(ctx, telemetry.StatusQuery{Window: w})
	if err != nil {
		t.Fatal(err)
	}
	stLists, err := eng.ScansOnly().Status(ctx, telemetry.StatusQuery{Window: w})
	if err != nil {
		t.Fatal(err)
	}
	if st.Errors != stLists.Errors || st.HandledErrors != stLists.HandledErrors || st.Errors != failing {
		t.Fatalf("status errors %d (handled %d), through the lists %d (handled %d), groups' sum %d",
			st.Errors, st.HandledErrors, stLists.Errors, stLists.HandledErrors, failing)
	}

	// A row limit that holds the error spans (two a failing trace) but not the failing traces'
	// spans (five each): the one pass is cut, and the answer is the lists' under that limit.
	cut := eng.WithLimits(telemetry.Limits{MaxScanRows: int(3 * failing)})
	got, _ = errorsOf(t, cut)
	want, _ = errorsOf(t, cut.ScansOnly())
	if diff := cmp.Diff(want, got, same...); diff != "" {
		t.Fatalf("cut: errors through the one pass differ from the lists' (-lists +one pass):\n%s", diff)
	}
	if !got.Scan.Limited {
		t.Fatal("cut: the answer does not say it was limited")
	}
}
