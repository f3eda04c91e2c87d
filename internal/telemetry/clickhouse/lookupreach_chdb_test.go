//go:build chdb

package clickhouse_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/runlens/runlens/internal/telemetry/engine"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/clickhouse"
	"github.com/runlens/runlens/internal/telemetry/conventions"
	"github.com/runlens/runlens/internal/telemetry/telemetrytest"
)

// A failing trace's root and error records are found wherever they lie, whether the read of
// its spans is narrowed through the lookup table or not: a trace whose root was exported two
// hours before the window and one whose root was exported two days before both keep their
// run, and the root's record gives each failure its message.
func TestAFailingTracesRootAndRecordsAreFoundWhereverTheyLie(t *testing.T) {
	e := chdbEngine(t)
	addr := front(t, e, nil)
	tb := freshTables(t, e)
	now := telemetrytest.Now
	// Each load is one insert, so each gets a lookup row of its own: the roots' rows start when
	// the roots did, the failures' in the window.
	near, far := "0af7651916cd43dd8448eb211c80319c", "4bf92f3577b34da6a3ce929d0e0e4736"
	root := func(trace, id, svc string, before time.Duration) telemetry.SpanRow {
		s := serverSpan(now, trace, id, "", svc, before, false)
		s.Attributes = conventions.Attributes{"http.request.method": "GET"}
		return s
	}
	failure := func(trace, id, parent, svc string) telemetry.SpanRow {
		s := serverSpan(now, trace, id, parent, svc, 30*time.Minute, true)
		s.Name, s.Kind, s.StatusMessage = "charge", telemetry.KindInternal, "card declined"
		return s
	}
	for _, rows := range [][]telemetry.SpanRow{
		{root(near, "b7ad6b7169203331", "checkout", 2*time.Hour)},
		{root(far, "00f067aa0ba902b7", "billing", 50*time.Hour)},
		{failure(near, "53995c3f42cd8ad8", "b7ad6b7169203331", "checkout"), failure(far, "e457b5a2e4d86bd1", "00f067aa0ba902b7", "billing")},
	} {
		if err := e.LoadSpans(tb, rows); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.LoadLogs(tb, []telemetry.LogRow{
		{TimeNs: now.Add(-2 * time.Hour).UnixNano(), TraceID: near, SpanID: "b7ad6b7169203331", Service: "checkout", SeverityNumber: 17, SeverityText: "ERROR", Body: "retry budget exhausted"},
		{TimeNs: now.Add(-50 * time.Hour).UnixNano(), TraceID: far, SpanID: "00f067aa0ba902b7", Service: "billing", SeverityNumber: 17, SeverityText: "ERROR", Body: "ledger locked"},
	}); err != nil {
		t.Fatal(err)
	}
	hour := telemetry.Window{StartMs: now.Add(-time.Hour).UnixMilli(), EndMs: now.UnixMilli()}
	groups := func() map[string]telemetry.ErrorGroup {
		t.Helper()
		r, err := engine.New(open(t, addr, tb.Database, clickhouse.Options{}), nil).Errors(context.Background(), telemetry.ErrorsQuery{Window: hour})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]telemetry.ErrorGroup{}
		for _, g := range r.Groups {
			out[g.Service] = g
		}
		if r.Events != 2 || len(out) != 2 {
			t.Fatalf("%d occurrences in %d groups, want one of each trace: %+v", r.Events, len(r.Groups), r.Groups)
		}
		return out
	}
	run := func(g telemetry.ErrorGroup, domain, id, msg string) {
		t.Helper()
		if g.Domain != domain || (id == "" && len(g.RunIDs) != 0) || (id != "" && !slices.Equal(g.RunIDs, []string{id})) || g.SampleMessage != msg {
			t.Errorf("%s's failure: domain %q, runs %v, message %q; want %q, %q, %q", g.Service, g.Domain, g.RunIDs, g.SampleMessage, domain, id, msg)
		}
	}
	// Narrowed (the table, four spans, is larger than the bound and does not lie in the hour)
	// or read across the table, a failing trace is read whole: the far root gives its failure
	// its run, and the far root's record its message (docs/semantics.md R9).
	for _, bound := range []uint64{1, 1 << 62} {
		clickhouse.SetNarrowMinSpans(t, bound)
		g := groups()
		run(g["checkout"], "http", near, "retry budget exhausted")
		run(g["billing"], "http", far, "ledger locked")
	}
}

// A failing trace with no lookup row within the reach — its failure exported in one batch with
// its root of two days before, so the batch's row starts then — is read across the table: its
// failure keeps its run and message, narrowed or not.
func TestATraceTheLookupKnowsOnlyOutsideTheReachIsReadAcrossTheTable(t *testing.T) {
	e := chdbEngine(t)
	addr := front(t, e, nil)
	tb := freshTables(t, e)
	now := telemetrytest.Now
	const trace = "5b8efff798038103d269b633813fc60c"
	root := serverSpan(now, trace, "20f067aa0ba902b7", "", "billing", 50*time.Hour, false)
	root.Attributes = conventions.Attributes{"http.request.method": "GET"}
	failure := serverSpan(now, trace, "3b4a5c6d7e8f9012", "20f067aa0ba902b7", "billing", 30*time.Minute, true)
	failure.Name, failure.Kind, failure.StatusMessage = "charge", telemetry.KindInternal, "card declined"
	if err := e.LoadSpans(tb, []telemetry.SpanRow{root, failure}); err != nil {
		t.Fatal(err)
	}
	hour := telemetry.Window{StartMs: now.Add(-time.Hour).UnixMilli(), EndMs: now.UnixMilli()}
	for _, narrowFrom := range []uint64{1, 1 << 62} {
		clickhouse.SetNarrowMinSpans(t, narrowFrom)
		r, err := engine.New(open(t, addr, tb.Database, clickhouse.Options{}), nil).Errors(context.Background(), telemetry.ErrorsQuery{Window: hour})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Groups) != 1 || r.Events != 1 || r.Groups[0].Domain != "http" || !slices.Equal(r.Groups[0].RunIDs, []string{trace}) ||
			r.Groups[0].SampleMessage != "card declined" {
			t.Errorf("narrowing from %d spans: %d occurrences %+v; want one, of the run %s (http), \"card declined\"", narrowFrom, r.Events, r.Groups, trace)
		}
	}
}
