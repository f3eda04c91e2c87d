package store

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/runlens/runlens/internal/telemetry"
)

func TestASpanSentAgainIsStoredOnceTheFirstCopyStanding(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)
	span := func(td ptrace.Traces, service string, id, parent byte, name string, failed bool) {
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", service)
		sp := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
		sp.SetTraceID(pcommon.TraceID{1, 2, 3})
		sp.SetSpanID(pcommon.SpanID{id})
		if parent != 0 {
			sp.SetParentSpanID(pcommon.SpanID{parent})
		}
		sp.SetName(name)
		sp.SetStartTimestamp(pcommon.Timestamp(now.Add(-time.Minute).UnixNano() + int64(id)*1e6))
		sp.SetEndTimestamp(pcommon.Timestamp(now.Add(-time.Minute).UnixNano() + int64(id)*2e6))
		if failed {
			sp.Status().SetCode(ptrace.StatusCodeError)
		}
	}
	first := ptrace.NewTraces()
	span(first, "api", 1, 0, "root", false)
	span(first, "api", 2, 1, "child", true)
	span(first, "api", 2, 1, "child", true) // a copy within the batch
	again := ptrace.NewTraces()
	span(again, "api", 1, 0, "root", false)                 // sent again
	span(again, "db", 2, 1, "another span, same id", false) // an id reused: the first stands
	span(again, "api", 3, 1, "sibling", false)
	src := loadSources(t, mustPreset(t, "otel"), randomTelemetry{batches: []randomBatch{{traces: &first}, {traces: &again}}})
	names := stringColumn(t, src.store.DB(), `SELECT SpanName FROM otel_traces ORDER BY Seq`)
	if len(names) != 3 || names[0] != "root" || names[1] != "child" || names[2] != "sibling" {
		t.Fatalf("stored %v, want root, child and sibling once each", names)
	}
	if accepted, rejected, err := src.store.IngestTraces(ctx, again); err != nil || accepted != 3 || rejected != 0 {
		t.Fatalf("a batch of copies: accepted %d, rejected %d, %v; copies are acknowledged", accepted, rejected, err)
	}
	checkDerived(t, src.store)
	w := telemetry.Window{StartMs: now.Add(-time.Hour).UnixMilli(), EndMs: now.UnixMilli()}
	st, err := src.caps.Status(ctx, telemetry.StatusQuery{Window: w})
	if err != nil || st.Spans != 3 || st.Errors != 1 || st.Services != 1 {
		t.Fatalf("status %+v (%v): three spans of api, one failure", st, err)
	}
	src.sameAnswers(t, "Status", func(s telemetry.Source) (any, error) { return s.Status(ctx, telemetry.StatusQuery{Window: w}) })
	src.sameAnswers(t, "Errors", func(s telemetry.Source) (any, error) { return s.Errors(ctx, telemetry.ErrorsQuery{Window: w}) })
	src.sameAnswers(t, "Runs", func(s telemetry.Source) (any, error) { return s.Runs(ctx, telemetry.RunsQuery{Window: w}) })
}
