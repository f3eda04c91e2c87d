//go:build chdb

package clickhouse_test

import (
	"testing"

	"github.com/runlens/runlens/internal/telemetry/engine"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/clickhouse"
	"github.com/runlens/runlens/internal/telemetry/fixture"
	"github.com/runlens/runlens/internal/telemetry/telemetrytest"
)

// The engine over ClickHouse — the exporter's own tables on the ClickHouse engine, read
// through clickhouse-go over HTTP — gives the fixture's answers, with its capabilities and
// from scans alone.
func TestTheEngineOverClickHouseConforms(t *testing.T) {
	e := chdbEngine(t)
	addr := front(t, e, nil)
	for _, mode := range []struct {
		name  string
		scans bool
	}{{"with its capabilities", false}, {"from scans alone", true}} {
		t.Run(mode.name, func(t *testing.T) {
			telemetrytest.Run(t, func(t *testing.T, d *fixture.Dataset) telemetry.Source {
				tb := freshTables(t, e)
				load(t, e, tb, d)
				eng := engine.New(open(t, addr, tb.Database, clickhouse.Options{}), d.Conventions)
				if mode.scans {
					return eng.ScansOnly()
				}
				return eng
			}, opts(mode.scans))
		})
	}
}

// opts runs every preset and seed with the capabilities, and one seed per preset from scans
// alone (the engine's own scans are what the memory backend's suite covers; here they prove
// the adapter's push-down filters, at a fraction of the queries).
func opts(scans bool) telemetrytest.Options {
	if scans {
		return telemetrytest.Options{Seeds: []uint64{42}}
	}
	return telemetrytest.Options{}
}
