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
)

// A question about one service answers as the same question about every service, filtered
// (docs/semantics.md R12): the occurrences that started in the service and those of runs that
// entered there; the records of other services that fold into its occurrences are read with
// them, and a record of the service in a trace that failed through another service is no
// occurrence of its own.
func TestAServiceIsAskedAboutThroughItsOwnFailingTraces(t *testing.T) {
	e := chdbEngine(t)
	addr := front(t, e, nil)
	tb := freshTables(t, e)
	now := time.Now().Truncate(time.Second)
	ns := func(d time.Duration) int64 { return now.Add(-d).UnixNano() }
	span := func(trace, id, parent, svc string, at time.Duration, failed bool) telemetry.SpanRow {
		return serverSpan(now, trace, id, parent, svc, at, failed)
	}
	const (
		// viaPayments fails in payments under checkout's failed root; only checkout's record
		// says what went wrong.
		viaPayments = "0af7651916cd43dd8448eb211c80319c"
		// viaCheckout and viaCheckout2 fail in checkout alone; payments logged an error in
		// each (the second older than the lone record, so it is asked about after it).
		viaCheckout  = "4bf92f3577b34da6a3ce929d0e0e4736"
		viaCheckout2 = "4bf92f3577b34da6a3ce929d0e0e4737"
		// lone holds a payments error record and no error span.
		lone = "5b8efff798038103d269b633813fc60c"
		// inPayments fails in payments alone.
		inPayments = "6c9f00d1b2e3f4a5b6c7d8e9f0a1b2c3"
	)
	rows := []telemetry.SpanRow{
		span(viaPayments, "00f067aa0ba902b7", "", "checkout", 10*time.Minute, true),
		span(viaPayments, "00f067aa0ba902b8", "00f067aa0ba902b7", "payments", 10*time.Minute, true),
		span(viaCheckout, "10f067aa0ba902b7", "", "checkout", 20*time.Minute, true),
		span(viaCheckout, "10f067aa0ba902b8", "10f067aa0ba902b7", "payments", 20*time.Minute, false),
		span(lone, "20f067aa0ba902b7", "", "payments", 30*time.Minute, false),
		span(viaCheckout2, "40f067aa0ba902b7", "", "checkout", 35*time.Minute, true),
		span(viaCheckout2, "40f067aa0ba902b8", "40f067aa0ba902b7", "payments", 35*time.Minute, false),
		span(inPayments, "30f067aa0ba902b7", "", "payments", 40*time.Minute, true),
	}
	// Many granules' worth of other spans around them.
	for i := range 40_000 {
		svc := []string{"checkout", "payments", "catalog"}[i%3]
		rows = append(rows, span(fmt.Sprintf("%032x", i+1), fmt.Sprintf("%016x", i+1), "", svc, time.Duration(i)*80*time.Millisecond, false))
	}
	if err := e.LoadSpans(tb, rows); err != nil {
		t.Fatal(err)
	}
	if err := e.LoadLogs(tb, []telemetry.LogRow{
		{TimeNs: ns(10 * time.Minute), TraceID: viaPayments, SpanID: "00f067aa0ba902b7", Service: "checkout", SeverityNumber: 17, SeverityText: "ERROR", Body: "payment failed for order 7"},
		{TimeNs: ns(20 * time.Minute), TraceID: viaCheckout, SpanID: "10f067aa0ba902b8", Service: "payments", SeverityNumber: 17, SeverityText: "ERROR", Body: "refund refused"},
		{TimeNs: ns(30 * time.Minute), TraceID: lone, SpanID: "20f067aa0ba902b7", Service: "payments", SeverityNumber: 17, SeverityText: "ERROR", Body: "ledger out of sync"},
		{TimeNs: ns(35 * time.Minute), TraceID: viaCheckout2, SpanID: "40f067aa0ba902b8", Service: "payments", SeverityNumber: 17, SeverityText: "ERROR", Body: "chargeback refused"},
	}); err != nil {
		t.Fatal(err)
	}
	eng := engine.New(open(t, addr, tb.Database, clickhouse.Options{}), nil)
	ctx := context.Background()
	w := telemetry.Window{StartMs: now.Add(-time.Hour).UnixMilli(), EndMs: now.Add(time.Second).UnixMilli()}
	errorsOf := func(svc string) telemetry.ErrorReport {
		t.Helper()
		r, err := eng.Errors(ctx, telemetry.ErrorsQuery{Window: w, Service: svc})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	statusOf := func(svc string) telemetry.Status {
		t.Helper()
		st, err := eng.Status(ctx, telemetry.StatusQuery{Window: w, Service: svc})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	for round := range 2 { // the second time from what the first left in ClickHouse's caches
		all := errorsOf("")
		for svc, want := range map[string]struct {
			n        int64
			messages []string
		}{
			// viaPayments' origin (its message from checkout's record), the lone record, and
			// inPayments' origin; not the records in viaCheckout and viaCheckout2, which
			// failed in checkout.
			"payments": {3, []string{"ledger out of sync", "payment failed for order 7", "GET /cart failed"}},
			// viaCheckout's and viaCheckout2's origins, and viaPayments': its origin is in
			// payments, its run entered at checkout (docs/semantics.md R12).
			"checkout": {3, []string{"chargeback refused", "payment failed for order 7", "refund refused"}},
			"catalog":  {0, nil},
		} {
			got := errorsOf(svc)
			var messages []string
			for _, g := range got.Groups {
				messages = append(messages, g.SampleMessage)
			}
			if got.Events != want.n || !cmp.Equal(messages, want.messages, cmpopts.SortSlices(func(a, b string) bool { return a < b }), cmpopts.EquateEmpty()) {
				t.Errorf("round %d: errors of %s: %d occurrences %q, want %d %q", round, svc, got.Events, messages, want.n, want.messages)
			}
			// The same as the question about every service, filtered: the groups that started
			// in the service or whose runs entered there.
			var filtered []telemetry.ErrorGroup
			var n int64
			for _, g := range all.Groups {
				if g.Service == svc || slices.Contains(g.EntryServices, svc) {
					filtered = append(filtered, g)
					n += g.Count
				}
			}
			if diff := cmp.Diff(filtered, got.Groups, cmpopts.EquateEmpty()); diff != "" || n != got.Events {
				t.Errorf("round %d: errors of %s differ from every service's filtered (%d against %d occurrences; -all +%s):\n%s", round, svc, n, got.Events, svc, diff)
			}
			if st := statusOf(svc); st.Errors != want.n {
				t.Errorf("round %d: the status of %s counts %d error occurrences, want %d", round, svc, st.Errors, want.n)
			}
		}
	}
}
