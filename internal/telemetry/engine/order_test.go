package engine_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/runlens/runlens/internal/telemetry/engine"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/conventions"
	"github.com/runlens/runlens/internal/telemetry/memory"
)

// Answers must not depend on the order in which a backend returns rows that tie: duplicate span
// ids (a retried export, or corrupt instrumentation) and self-parented spans are where they
// could.

const trace = "0af7651916cd43dd8448eb211c80319c"

func span(id, parent, service string, startNs int64) telemetry.SpanRow {
	return telemetry.SpanRow{TraceID: trace, SpanID: id, ParentSpanID: parent, Name: "op-" + id, Kind: telemetry.KindInternal,
		Service: service, StartNs: startNs, DurationNs: 1e6, StatusCode: telemetry.CodeUnset, Attributes: conventions.Attributes{}}
}

func entries(spans []telemetry.SpanRow) map[string]bool {
	out := map[string]bool{}
	for i, sh := range telemetry.ShapeTrace(spans) {
		out[spans[i].SpanID+"/"+spans[i].Service] = sh.Entry
	}
	return out
}

func TestWhetherASpanIsAnEntryDoesNotDependOnTheOrderOfDuplicateParents(t *testing.T) {
	// p is sent twice, once by api and once by db; c (api) is below it.
	spans := []telemetry.SpanRow{span("p", "", "db", 10), span("p", "", "api", 20), span("c", "p", "api", 30), span("d", "p", "db", 40)}
	want := map[string]bool{"p/db": true, "p/api": true, "c/api": false, "d/db": false}
	for _, order := range [][]int{{0, 1, 2, 3}, {1, 0, 2, 3}, {3, 2, 1, 0}, {2, 1, 3, 0}} {
		var in []telemetry.SpanRow
		for _, i := range order {
			in = append(in, spans[i])
		}
		if got := entries(in); !equalMaps(got, want) {
			t.Errorf("order %v: entries %v, want %v", order, got, want)
		}
	}
}

func TestASelfParentedSpanIsAnEntry(t *testing.T) {
	spans := []telemetry.SpanRow{span("a", "a", "api", 10), span("b", "a", "api", 20)}
	if got := entries(spans); !got["a/api"] || got["b/api"] {
		t.Fatalf("entries %v: the self-parented span must be an entry, its child not", got)
	}
}

func equalMaps(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func TestServicePerformanceCountsTheEntrySpansShapeTraceFinds(t *testing.T) {
	spans := []telemetry.SpanRow{
		span("p", "", "db", 10), span("p", "", "api", 20), span("c", "p", "api", 30), span("d", "p", "db", 40),
		span("s", "s", "api", 50), span("o", "gone", "api", 60), span("x", "d", "api", 70),
	}
	w := telemetry.Window{StartMs: 0, EndMs: 1}
	for _, order := range [][]int{{0, 1, 2, 3, 4, 5, 6}, {6, 5, 4, 3, 2, 1, 0}} {
		b := &memory.Backend{}
		for _, i := range order {
			b.AddSpans(spans[i])
		}
		want := 0
		for k, entry := range entries(spans) {
			if entry && k[len(k)-4:] == "/api" {
				want++
			}
		}
		p, err := engine.New(b, nil).ServicePerformance(context.Background(), telemetry.PerformanceQuery{Window: w, Service: "api"})
		if err != nil {
			t.Fatal(err)
		}
		// p/api, s (self-parented), o (parent missing), x (parent only in db).
		if p.SampleCount != int64(want) || want != 4 {
			t.Errorf("order %v: %d samples, ShapeTrace finds %d entry spans of api (want 4)", order, p.SampleCount, want)
		}
	}
}

func TestSortRunsKeepsTheScanOrderOfTies(t *testing.T) {
	// Many interleaved ties, so the sort neither falls back to insertion sort nor meets them in
	// order by chance.
	var runs []telemetry.RunSummary
	for i := range 300 {
		runs = append(runs, telemetry.RunSummary{ID: "r", TraceID: "t", StartMs: int64(i*7919) % 5, Name: fmt.Sprintf("copy %03d", i)})
	}
	got := slices.Clone(runs)
	telemetry.SortRuns(got)
	for i := 1; i < len(got); i++ {
		a, b := got[i-1], got[i]
		if a.StartMs < b.StartMs || (a.StartMs == b.StartMs && a.Name > b.Name) {
			t.Fatalf("runs %q (start %d) then %q (start %d): newest first, ties in their order", a.Name, a.StartMs, b.Name, b.StartMs)
		}
	}
}

func TestARunIDIsFoundBehindANewerRootThatCarriesItUnderAnotherKey(t *testing.T) {
	conv, err := conventions.Preset("netscript")
	if err != nil {
		t.Fatal(err)
	}
	older := span("r1", "", "worker", 10)
	older.TraceID = "11111111111111111111111111111111"
	older.Attributes = conventions.Attributes{"netscript.execution.id": "exec-7"}
	newer := span("r2", "", "worker", 20)
	newer.TraceID = "22222222222222222222222222222222"
	newer.Attributes = conventions.Attributes{"netscript.execution.id": "exec-8", "netscript.job.id": "exec-7"}
	b := &memory.Backend{}
	b.AddSpans(older, newer)
	run, err := engine.New(b, conv).Run(context.Background(), telemetry.RunQuery{ID: "exec-7"})
	if err != nil {
		t.Fatalf("Run(exec-7): %v", err)
	}
	if run.TraceID != older.TraceID {
		t.Fatalf("Run(exec-7) read trace %s, want the older root's %s", run.TraceID, older.TraceID)
	}
}

func TestDBOperationOfCountsTheSpansDBOperationsScansFor(t *testing.T) {
	conv, err := conventions.Load([]byte(`{"db": {"keyPrefixes": ["db"], "operationKeys": ["op"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	emptyDB := span("e", "", "api", 10)
	emptyDB.Attributes = conventions.Attributes{"db.system": "", "op": "GET"} // no non-empty db. value
	undotted := span("u", "", "api", 20)
	undotted.Attributes = conventions.Attributes{"dbx": "1", "op": "GET"} // the prefix is db., not db
	real := span("r", "", "api", 30)
	real.Attributes = conventions.Attributes{"db.system": "redis", "op": "GET"}
	for _, s := range []telemetry.SpanRow{emptyDB, undotted} {
		if _, ok := conv.DBOperation(s.Name, s.Attributes); !ok {
			t.Fatalf("the conventions alone should read %s as an operation (the case under test)", s.SpanID)
		}
		if _, ok := telemetry.DBOperationOf(conv, &s); ok {
			t.Errorf("DBOperationOf(%s) = true; DBOperations does not scan it", s.SpanID)
		}
	}
	b := &memory.Backend{}
	b.AddSpans(emptyDB, undotted, real)
	rep, err := engine.New(b, conv).DBOperations(context.Background(), telemetry.DBQuery{Window: telemetry.Window{EndMs: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := telemetry.DBOperationOf(conv, &real); !ok || rep.SampleCount != 1 {
		t.Fatalf("DBOperations counted %d samples, DBOperationOf(real) %v; want 1 and true", rep.SampleCount, ok)
	}
}
