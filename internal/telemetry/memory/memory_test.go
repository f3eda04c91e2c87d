package memory_test

import (
	"testing"

	"github.com/runlens/runlens/internal/telemetry/engine"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/fixture"
	"github.com/runlens/runlens/internal/telemetry/memory"
	"github.com/runlens/runlens/internal/telemetry/telemetrytest"
)

// The engine over the in-memory backend computes every answer from scans; it must give the
// fixture's answers.
func TestTheEngineOverMemoryConforms(t *testing.T) {
	telemetrytest.Run(t, func(t *testing.T, d *fixture.Dataset) telemetry.Source {
		b := &memory.Backend{}
		if rejected := b.AddTraces(d.Traces); rejected != 0 {
			t.Fatalf("%d spans rejected", rejected)
		}
		b.AddLogs(d.Logs)
		return engine.New(b, d.Conventions)
	}, telemetrytest.Options{})
}

// A source that stores no logs is held to the dataset without its records: the engine over
// the in-memory backend given the traces alone must give exactly those answers.
func TestTheEngineOverMemoryWithTracesOnlyGivesTheNoLogsAnswers(t *testing.T) {
	telemetrytest.Run(t, func(t *testing.T, d *fixture.Dataset) telemetry.Source {
		b := &memory.Backend{}
		if rejected := b.AddTraces(d.Traces); rejected != 0 {
			t.Fatalf("%d spans rejected", rejected)
		}
		return engine.New(b, d.Conventions)
	}, telemetrytest.Options{NoLogs: true})
}
