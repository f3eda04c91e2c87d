package store

import (
	"context"
	"testing"
	"time"

	"github.com/runlens/runlens/internal/telemetry/engine"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/runlens/runlens/internal/telemetry"
)

// A job run that starts less than a millisecond after the one before it is still the last run:
// every source orders job runs by their start at the precision it keeps, not by the
// millisecond with the span id deciding between runs of one millisecond.
func TestTheLastJobRunIsTheNewestEvenWithinOneMillisecond(t *testing.T) {
	ctx := context.Background()
	base := time.Date(2026, 3, 14, 11, 0, 0, 0, time.UTC)
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "worker")
	run := func(trace, span byte, id, status string, at time.Duration) {
		sp := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
		sp.SetTraceID(pcommon.TraceID{trace})
		// Span ids rise with the runs: a tie broken by span id (smallest first) picks the oldest.
		sp.SetSpanID(pcommon.SpanID{span})
		sp.SetName("nightly-export")
		sp.SetStartTimestamp(pcommon.NewTimestampFromTime(base.Add(at)))
		sp.SetEndTimestamp(pcommon.NewTimestampFromTime(base.Add(at + 300*time.Microsecond)))
		sp.Attributes().PutStr("job.id", id)
		sp.Attributes().PutStr("job.name", "nightly-export")
		sp.Attributes().PutStr("job.status", status)
	}
	// Three runs in one millisecond, 0.4 ms apart; the last one failed.
	run(1, 7, "export-0001", "succeeded", 100*time.Microsecond)
	run(2, 8, "export-0002", "succeeded", 500*time.Microsecond)
	run(3, 9, "export-0003", "failed", 900*time.Microsecond)
	src := loadSources(t, mustPreset(t, "otel"), randomTelemetry{batches: []randomBatch{{traces: &td}}})
	w := telemetry.Window{StartMs: base.Add(-time.Hour).UnixMilli(), EndMs: base.Add(time.Hour).UnixMilli()}
	for name, e := range map[string]*engine.Engine{"the store's own query": src.caps, "the engine over scans": src.scans, "the in-memory backend": src.mem} {
		got, err := e.LastJob(ctx, telemetry.JobQuery{Window: w, JobName: "nightly-export"})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got.JobID != "export-0003" || got.Status != telemetry.StatusError || got.Previous != telemetry.StatusOK {
			t.Errorf("%s: last run %s (%s), previous %q; want export-0003 (error) after export-0002 (ok)", name, got.JobID, got.Status, got.Previous)
		}
	}
}
