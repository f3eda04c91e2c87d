//go:build chdb

package clickhouse_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/runlens/runlens/internal/telemetry/engine"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/clickhouse"
	"github.com/runlens/runlens/internal/telemetry/fixture"
	"github.com/runlens/runlens/internal/telemetry/store"
	"github.com/runlens/runlens/internal/telemetry/telemetrytest"
)

// The embedded store and ClickHouse (through clickhouse-go over HTTP) hold the same data and
// give the same answer to every telemetry question, field by field — each with its own
// server-side capabilities, so this is where a percentile, a count or a grouping computed by
// SQLite and by ClickHouse must agree: the differential test of docs/semantics.md R17 as the
// adapter's SQL restates it (the traffic span).
func TestTheStoreAndClickHouseGiveTheSameAnswers(t *testing.T) {
	e := chdbEngine(t)
	addr := front(t, e, nil)
	ctx := context.Background()
	for _, c := range []struct {
		preset string
		seed   uint64
	}{{"otel", 7}, {"netscript", 11}} {
		t.Run(fmt.Sprintf("%s conventions, seed %d", c.preset, c.seed), func(t *testing.T) {
			d, err := fixture.New(fixture.Options{Preset: c.preset, Now: telemetrytest.Now, Seed: c.seed})
			if err != nil {
				t.Fatal(err)
			}
			st, err := store.Open(ctx, store.Options{Path: filepath.Join(t.TempDir(), "telemetry.db"), Retention: 48 * time.Hour, Conventions: d.Conventions})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = st.Close() })
			if _, rejected, err := st.IngestTraces(ctx, d.Traces); err != nil || rejected != 0 {
				t.Fatalf("ingest traces: %d rejected, %v", rejected, err)
			}
			if _, rejected, err := st.IngestLogs(ctx, d.Logs); err != nil || rejected != 0 {
				t.Fatalf("ingest logs: %d rejected, %v", rejected, err)
			}
			tb := freshTables(t, e)
			load(t, e, tb, d)
			sources := [2]telemetry.Source{engine.New(store.NewBackend(st), d.Conventions), engine.New(open(t, addr, tb.Database, clickhouse.Options{}), d.Conventions)}
			same := func(what string, ask func(s telemetry.Source) (any, error)) {
				t.Helper()
				want, err := ask(sources[0])
				if err != nil {
					t.Fatalf("%s on the store: %v", what, err)
				}
				got, err := ask(sources[1])
				if err != nil {
					t.Fatalf("%s on ClickHouse: %v", what, err)
				}
				if diff := cmp.Diff(want, got, cmpopts.EquateEmpty(), cmpopts.IgnoreFields(telemetry.Scan{}, "Scanned")); diff != "" {
					t.Errorf("%s: ClickHouse differs from the store (-store +clickhouse):\n%s", what, diff)
				}
			}
			for _, w := range []telemetry.Window{telemetrytest.Last(time.Hour), telemetrytest.Last(24 * time.Hour), telemetrytest.Last(7 * time.Minute)} {
				for _, svc := range []string{"", "checkout", "billing", "worker"} {
					same(fmt.Sprintf("Status %v %q", w, svc), func(s telemetry.Source) (any, error) {
						return s.Status(ctx, telemetry.StatusQuery{Window: w, Service: svc})
					})
					same(fmt.Sprintf("Runs %v %q", w, svc), func(s telemetry.Source) (any, error) {
						return s.Runs(ctx, telemetry.RunsQuery{Window: w, Service: svc, Limit: 50})
					})
					same(fmt.Sprintf("Errors %v %q", w, svc), func(s telemetry.Source) (any, error) {
						return s.Errors(ctx, telemetry.ErrorsQuery{Window: w, Service: svc})
					})
					same(fmt.Sprintf("LastJob %v %q", w, svc), func(s telemetry.Source) (any, error) {
						return s.LastJob(ctx, telemetry.JobQuery{Window: w, Service: svc})
					})
					same(fmt.Sprintf("DBOperations %v %q", w, svc), func(s telemetry.Source) (any, error) {
						return s.DBOperations(ctx, telemetry.DBQuery{Window: w, Service: svc, TopN: 20})
					})
					if svc != "" {
						same(fmt.Sprintf("ServicePerformance %v %q", w, svc), func(s telemetry.Source) (any, error) {
							return s.ServicePerformance(ctx, telemetry.PerformanceQuery{Window: w, Service: svc, TopN: 20})
						})
					}
				}
			}
			for i, r := range d.Runs {
				if i%3 != 0 {
					continue
				}
				for _, q := range []telemetry.RunQuery{{ID: r.ID}, {ID: r.TraceID, MaxSpans: 2, MaxLogs: 1, WithAttributes: true}} {
					same(fmt.Sprintf("Run %+v", q), func(s telemetry.Source) (any, error) { return s.Run(ctx, q) })
				}
			}
			same("Services", func(s telemetry.Source) (any, error) { return s.Services(ctx, 10) })
			same("Describe's newest data", func(s telemetry.Source) (any, error) {
				info := s.Describe(ctx)
				return []any{info.Reachable, info.NewestDataMs}, nil
			})
		})
	}
}
