//go:build chdb

package clickhouse_test

import (
	"context"
	"testing"
	"time"

	"github.com/runlens/runlens/internal/telemetry/engine"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/clickhouse"
	"github.com/runlens/runlens/internal/telemetry/conventions"
	"github.com/runlens/runlens/internal/telemetry/telemetrytest"
)

// ClickHouse orders job runs by their start as the other sources do: of three runs 0.4 ms apart
// in one millisecond, whose span ids rise with them, the last is the newest and the previous the
// one before it.
func TestClickHouseNamesTheNewestJobRunWithinOneMillisecond(t *testing.T) {
	e := chdbEngine(t)
	addr := front(t, e, nil)
	tb := freshTables(t, e)
	base := telemetrytest.Now.Add(-time.Hour)
	run := func(trace, span, id, status string, at time.Duration) telemetry.SpanRow {
		return telemetry.SpanRow{TraceID: trace, SpanID: span, Name: "nightly-export", Service: "worker", Kind: telemetry.KindInternal,
			StartNs: base.Add(at).UnixNano(), DurationNs: int64(300 * time.Microsecond), StatusCode: telemetry.CodeUnset,
			Attributes: conventions.Attributes{"job.id": id, "job.name": "nightly-export", "job.status": status}}
	}
	if err := e.LoadSpans(tb, []telemetry.SpanRow{
		run("00000000000000000000000000000001", "0000000000000007", "export-0001", "succeeded", 100*time.Microsecond),
		run("00000000000000000000000000000002", "0000000000000008", "export-0002", "succeeded", 500*time.Microsecond),
		run("00000000000000000000000000000003", "0000000000000009", "export-0003", "failed", 900*time.Microsecond),
	}); err != nil {
		t.Fatal(err)
	}
	conv, err := conventions.Preset("otel")
	if err != nil {
		t.Fatal(err)
	}
	src := engine.New(open(t, addr, tb.Database, clickhouse.Options{}), conv)
	w := telemetrytest.Last(24 * time.Hour)
	got, err := src.LastJob(context.Background(), telemetry.JobQuery{Window: w, JobName: "nightly-export"})
	if err != nil {
		t.Fatal(err)
	}
	if got.JobID != "export-0003" || got.Status != telemetry.StatusError || got.Previous != telemetry.StatusOK {
		t.Errorf("last run %s (%s), previous %q; want export-0003 (error) after export-0002 (ok)", got.JobID, got.Status, got.Previous)
	}
}
