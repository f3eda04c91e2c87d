package store

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/runlens/runlens/internal/telemetry"
)

// bigTrace is one failing trace of n spans across two services — a root, a tree below it,
// an exception now and then, error records folded into it — delivered shuffled in batches of
// size, children often before their parents.
func bigTrace(n, size int, now time.Time) randomTelemetry {
	rng := rand.New(rand.NewPCG(uint64(n), 77))
	var tid pcommon.TraceID
	tid[0], tid[15] = 0xab, 0xcd
	ids := make([]pcommon.SpanID, n)
	for i := range ids {
		ids[i][0], ids[i][7] = byte(i>>8)|0x80, byte(i)
		ids[i][3] = byte(i >> 16)
	}
	order := rng.Perm(n)
	var out randomTelemetry
	start := now.Add(-30 * time.Minute).UnixNano()
	for lo := 0; lo < n; lo += size {
		td := ptrace.NewTraces()
		for _, i := range order[lo:min(n, lo+size)] {
			rs := td.ResourceSpans().AppendEmpty()
			rs.Resource().Attributes().PutStr("service.name", []string{"batch", "store"}[i/1000%2])
			sp := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
			sp.SetTraceID(tid)
			sp.SetSpanID(ids[i])
			if i > 0 {
				sp.SetParentSpanID(ids[(i-1)/4]) // a tree four wide
			}
			sp.SetName(fmt.Sprintf("step %d", i%17))
			sp.SetStartTimestamp(pcommon.Timestamp(start + int64(i)*1e6))
			sp.SetEndTimestamp(pcommon.Timestamp(start + int64(i)*1e6 + int64(rng.IntN(50))*1e6))
			if i%97 == 5 {
				sp.Status().SetCode(ptrace.StatusCodeError)
				ev := sp.Events().AppendEmpty()
				ev.SetName("exception")
				ev.Attributes().PutStr("exception.message", fmt.Sprintf("step %d failed", i%3))
			}
		}
		out.batches = append(out.batches, randomBatch{traces: &td})
		if lo%(10*size) == 0 {
			ld := plog.NewLogs()
			r := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
			r.SetTimestamp(pcommon.Timestamp(start + int64(lo)*1e6))
			r.SetSeverityNumber(plog.SeverityNumberError)
			r.Body().SetStr("retrying")
			r.SetTraceID(tid)
			out.batches = append(out.batches, randomBatch{logs: &ld})
		}
	}
	return out
}

func TestAHugeFailingTraceInManyBatchesKeepsIngestLinear(t *testing.T) {
	spans, size := 10_000, 100
	if raceEnabled {
		spans = 4_000
	}
	now := time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)
	conv := mustPreset(t, "otel")
	before := traceRowsRead.Load()
	src := loadSources(t, conv, bigTrace(spans, size, now))
	read := traceRowsRead.Load() - before
	// Rereading the stored trace for every batch would read about spans²/(2·size) = 500,000
	// rows; the bound is the traces recomputed until the trace passed maxShapedSpans, plus the
	// parents each span looked up.
	if limit := int64((maxShapedSpans+1)*(maxShapedSpans/size+2) + 2*spans); read > limit {
		t.Fatalf("the trace-level maintenance read %d stored spans for one %d-span trace in batches of %d, want at most %d",
			read, spans, size, limit)
	}
	var deferred int
	if err := src.store.DB().QueryRow(`SELECT COUNT(*) FROM ` + DeferredTable).Scan(&deferred); err != nil || deferred != 1 {
		t.Fatalf("%d deferred traces (%v), want the huge one", deferred, err)
	}
	checkDerived(t, src.store)
	// The trace has more entry spans than the exact percentiles' bound: compare exact answers
	// here (the sketched ones are compared with theirs in sketch_store_test.go).
	sketchExactMax = 1 << 40
	t.Cleanup(func() { sketchExactMax = 5_000 })
	ctx := context.Background()
	w := telemetry.Window{StartMs: now.Add(-time.Hour).UnixMilli(), EndMs: now.UnixMilli()}
	src.capabilitiesHandle(t, conv, w)
	for _, svc := range []string{"", "batch", "store"} {
		src.sameAnswers(t, "Status "+svc, func(s telemetry.Source) (any, error) {
			return s.Status(ctx, telemetry.StatusQuery{Window: w, Service: svc})
		})
		src.sameAnswers(t, "Errors "+svc, func(s telemetry.Source) (any, error) {
			return s.Errors(ctx, telemetry.ErrorsQuery{Window: w, Service: svc})
		})
		src.sameAnswers(t, "ServicePerformance "+svc, func(s telemetry.Source) (any, error) {
			return s.ServicePerformance(ctx, telemetry.PerformanceQuery{Window: w, Service: svc, TopN: 20})
		})
	}
	src.sameAnswers(t, "Runs", func(s telemetry.Source) (any, error) { return s.Runs(ctx, telemetry.RunsQuery{Window: w}) })
}
