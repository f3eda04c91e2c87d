//go:build chdb

package clickhouse_test

import (
	"context"
	"testing"

	"github.com/runlens/runlens/internal/telemetry/engine"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/clickhouse"
	"github.com/runlens/runlens/internal/telemetry/fixture"
	"github.com/runlens/runlens/internal/telemetry/telemetrytest"
)

// get_run narrows its trace scans with the exporter's trace-id lookup table, and still finds
// every span of a trace the lookup table has lost (a shorter TTL, a table created later).
func TestARunIsFoundWithAndWithoutTheLookupTable(t *testing.T) {
	e := chdbEngine(t)
	addr := front(t, e, nil)
	d, err := fixture.New(fixture.Options{Preset: "otel", Now: telemetrytest.Now, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	tb := freshTables(t, e)
	load(t, e, tb, d)
	ctx := context.Background()
	ids := []string{d.Runs[0].TraceID, d.Runs[len(d.Runs)/2].TraceID, d.Runs[len(d.Runs)-1].TraceID}
	read := func() []telemetry.Run {
		src := engine.New(open(t, addr, tb.Database, clickhouse.Options{}), d.Conventions)
		var out []telemetry.Run
		for _, id := range ids {
			r, err := src.Run(ctx, telemetry.RunQuery{ID: id})
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, r)
		}
		return out
	}
	withLookup := read()
	for i, id := range ids {
		want, _ := d.ExpectRun(id)
		if diff := cmp.Diff(want, withLookup[i], cmpopts.EquateEmpty(), cmpopts.IgnoreFields(telemetry.Span{}, "Failure")); diff != "" {
			t.Errorf("run %s with the lookup table differs from the fixture's (-want +got):\n%s", id, diff)
		}
	}
	if err := e.Exec("TRUNCATE TABLE `" + tb.Database + "`.`" + tb.Traces + "_trace_id_ts`"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(withLookup, read()); diff != "" {
		t.Errorf("runs read after the lookup table lost its rows differ (-before +after):\n%s", diff)
	}
}
