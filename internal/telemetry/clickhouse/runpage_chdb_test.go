//go:build chdb

package clickhouse_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/runlens/runlens/internal/telemetry/engine"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/clickhouse"
	"github.com/runlens/runlens/internal/telemetry/fixture"
	"github.com/runlens/runlens/internal/telemetry/telemetrytest"
)

// A page of runs filtered by nothing but the service is computed from the newest roots alone
// (two queries, the second reading only the page's traces); when copies of the newest roots
// take the places of other runs among those candidates, the page is computed over every run
// of the window instead, and the answer is the same either way.
func TestAnUnfilteredPageOfRunsIsReadFromTheNewestRootsAndSurvivesCopies(t *testing.T) {
	e := chdbEngine(t)
	addr, sent := countingFront(t, e)
	d, err := fixture.New(fixture.Options{Preset: "otel", Now: telemetrytest.Now, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	tb := freshTables(t, e)
	load(t, e, tb, d)
	src := engine.New(open(t, addr, tb.Database, clickhouse.Options{}), d.Conventions)
	ctx := context.Background()
	queries := func() []telemetry.RunsQuery {
		var qs []telemetry.RunsQuery
		for _, w := range []telemetry.Window{telemetrytest.Last(time.Hour), telemetrytest.Last(24 * time.Hour)} {
			qs = append(qs,
				telemetry.RunsQuery{Window: w, Limit: 1}, telemetry.RunsQuery{Window: w, Limit: 3},
				telemetry.RunsQuery{Window: w, Limit: 3, Offset: 2}, telemetry.RunsQuery{Window: w, Limit: 20, Offset: 5},
				telemetry.RunsQuery{Window: w, Limit: 100}, telemetry.RunsQuery{Window: w, Limit: 4, Service: "checkout"},
				telemetry.RunsQuery{Window: w, Limit: 5, Offset: 900})
		}
		return qs
	}
	check := func(stage string, wantQueries func(q telemetry.RunsQuery, n int) bool) {
		t.Helper()
		for _, q := range queries() {
			sent.Store(0)
			got, err := src.Runs(ctx, q)
			if err != nil {
				t.Fatalf("%s: Runs %+v: %v", stage, q, err)
			}
			n := int(sent.Load())
			if !wantQueries(q, n) {
				t.Errorf("%s: Runs %+v sent %d queries", stage, q, n)
			}
			want := d.ExpectRuns(q)
			if diff := cmp.Diff(want, got, cmpopts.EquateEmpty(), cmpopts.IgnoreFields(telemetry.Scan{}, "Scanned")); diff != "" {
				t.Errorf("%s: Runs %+v differs from the fixture's (-want +got):\n%s", stage, q, diff)
			}
		}
	}
	if _, err := src.Runs(ctx, telemetry.RunsQuery{Window: telemetrytest.Last(time.Hour)}); err != nil { // the schema check, once
		t.Fatal(err)
	}
	// Without copies: the candidates and the page, no more (past the end: the candidates only).
	check("no copies", func(q telemetry.RunsQuery, n int) bool {
		if q.Offset >= 900 {
			return n == 1
		}
		return n == 2
	})
	// Every root of the last two hours three more times: the newest candidates are copies of
	// a few runs, and the page falls back to all the window's runs (more queries).
	insert := fmt.Sprintf("INSERT INTO `%[1]s`.`%[2]s` SELECT * EXCEPT (copy) FROM (SELECT *, arrayJoin([1, 2, 3]) AS copy FROM `%[1]s`.`%[2]s` WHERE ParentSpanId = '' AND Timestamp >= fromUnixTimestamp64Milli(toInt64(%[3]d)))",
		tb.Database, tb.Traces, telemetrytest.Now.Add(-2*time.Hour).UnixMilli())
	if err := e.Exec(insert); err != nil {
		t.Fatal(err)
	}
	fellBack := 0
	check("copies", func(q telemetry.RunsQuery, n int) bool {
		if n > 2 {
			fellBack++
		}
		return n >= 1
	})
	if fellBack == 0 {
		t.Error("no page fell back to reading every run although copies of the newest roots filled the candidates")
	}
}

// The runs per domain of get_app_status are counted without dropping copies of roots when a
// check in the same statement finds none, and with them dropped when it finds some: the
// answer is the same either way.
func TestTheStatusCountsEachRunOnceWhenItsRootWasSentAgain(t *testing.T) {
	e := chdbEngine(t)
	addr := front(t, e, nil)
	d, err := fixture.New(fixture.Options{Preset: "otel", Now: telemetrytest.Now, Seed: 6})
	if err != nil {
		t.Fatal(err)
	}
	tb := freshTables(t, e)
	load(t, e, tb, d)
	src := engine.New(open(t, addr, tb.Database, clickhouse.Options{}), d.Conventions)
	ctx := context.Background()
	check := func(stage string) {
		t.Helper()
		for _, w := range []telemetry.Window{telemetrytest.Last(time.Hour), telemetrytest.Last(24 * time.Hour)} {
			for _, svc := range []string{"", "checkout"} {
				q := telemetry.StatusQuery{Window: w, Service: svc}
				got, err := src.Status(ctx, q)
				if err != nil {
					t.Fatalf("%s: Status %+v: %v", stage, q, err)
				}
				want := d.ExpectStatus(q)
				if stage == "copies" {
					// Spans per service are rows of the table, copies included (counting
					// them once would cost a pass over every span id): only the runs and
					// errors are compared.
					want, got = telemetry.Status{Domains: want.Domains, Errors: want.Errors}, telemetry.Status{Domains: got.Domains, Errors: got.Errors}
				}
				if diff := cmp.Diff(want, got, cmpopts.EquateEmpty(), cmpopts.IgnoreFields(telemetry.Scan{}, "Scanned")); diff != "" {
					t.Errorf("%s: Status %+v differs from the fixture's (-want +got):\n%s", stage, q, diff)
				}
			}
		}
	}
	check("no copies")
	insert := fmt.Sprintf("INSERT INTO `%[1]s`.`%[2]s` SELECT * EXCEPT (copy) FROM (SELECT *, arrayJoin([1, 2]) AS copy FROM `%[1]s`.`%[2]s` WHERE ParentSpanId = '' AND Timestamp >= fromUnixTimestamp64Milli(toInt64(%[3]d)))",
		tb.Database, tb.Traces, telemetrytest.Now.Add(-3*time.Hour).UnixMilli())
	if err := e.Exec(insert); err != nil {
		t.Fatal(err)
	}
	check("copies")
}
