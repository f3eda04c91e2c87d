package store

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
)

func TestScansHonourEveryFilterAsTheMemoryBackendDoes(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)
	src := loadSources(t, mustPreset(t, "otel"), newRandomTelemetry(5, scaled(250), now, 3*time.Hour))
	mem := src.mem.Backend()
	snap, err := src.backend.Fingerprint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	roots, err := mem.ScanSpans(ctx, telemetry.SpanScan{RootsOnly: true, Limit: 3})
	if err != nil || len(roots.Spans) < 3 {
		t.Fatalf("pick traces: %v", err)
	}
	traces := []string{roots.Spans[0].TraceID, roots.Spans[2].TraceID, "0123456789abcdef0123456789abcdef"}
	keyed, err := mem.ScanSpans(ctx, telemetry.SpanScan{AttrKeys: []string{"cicd.pipeline.run.id"}, Limit: 1, Fields: telemetry.FieldAttributes})
	if err != nil || len(keyed.Spans) == 0 {
		t.Fatalf("pick a pipeline run id: %v", err)
	}
	runID := keyed.Spans[0].Attributes["cicd.pipeline.run.id"]
	w := telemetry.Window{StartMs: now.Add(-100 * time.Minute).UnixMilli(), EndMs: now.Add(-20 * time.Minute).UnixMilli()}
	all := telemetry.FieldAttributes | telemetry.FieldEvents
	spanScans := []telemetry.SpanScan{
		{}, {Window: w}, {Service: "checkout"}, {Service: telemetry.UnknownService}, {RootsOnly: true}, {ErrorsOnly: true},
		{TraceIDs: traces}, {Names: []string{"render", "GET", "tick"}},
		{AttrKeys: []string{"job.id"}}, {AttrKeys: []string{"db."}}, {AttrKeys: []string{"netscript.kv.", "job.exit_code"}},
		{AttrKeys: []string{"cicd.pipeline.run.id"}, AttrValue: runID}, {AttrKeys: []string{"job.name", "db."}, AttrValue: "sub"},
		{Limit: 5}, {Limit: 5, Oldest: true}, {AsOf: snap.AsOf / 2}, {Fields: all}, {Fields: telemetry.FieldEvents, ErrorsOnly: true},
		{Window: w, Service: "billing", ErrorsOnly: true, Limit: 3, Fields: all},
		{TraceIDs: traces[:1], Limit: 2, Oldest: true, Fields: all},
		{Window: w, RootsOnly: true, AttrKeys: []string{"job.id"}, AsOf: snap.AsOf / 2, Limit: 4, Fields: telemetry.FieldAttributes},
	}
	opts := []cmp.Option{cmpopts.EquateEmpty(), cmpopts.IgnoreFields(telemetry.SpanBatch{}, "Scanned"),
		cmpopts.IgnoreFields(telemetry.LogBatch{}, "Scanned")}
	for _, s := range spanScans {
		t.Run(fmt.Sprintf("spans %+v", s), func(t *testing.T) {
			want, err := mem.ScanSpans(ctx, s)
			if err != nil {
				t.Fatal(err)
			}
			got, err := src.backend.ScanSpans(ctx, s)
			if err != nil {
				t.Fatal(err)
			}
			if len(want.Spans) == 0 && s.Limit == 0 && len(s.TraceIDs) == 0 {
				t.Fatal("the scan matches nothing: a test that cannot fail")
			}
			if diff := cmp.Diff(want, got, opts...); diff != "" {
				t.Errorf("ScanSpans (-memory +store):\n%s", diff)
			}
		})
	}
	logScans := []telemetry.LogScan{
		{}, {Window: w}, {Service: "worker"}, {Service: telemetry.UnknownService}, {ErrorsOnly: true}, {TraceIDs: traces},
		{Limit: 3}, {Limit: 3, Oldest: true}, {AsOf: snap.AsOf / 2}, {Fields: telemetry.FieldAttributes},
		{Window: w, ErrorsOnly: true, Limit: 2, Fields: telemetry.FieldAttributes},
	}
	for _, s := range logScans {
		t.Run(fmt.Sprintf("logs %+v", s), func(t *testing.T) {
			want, err := mem.ScanLogs(ctx, s)
			if err != nil {
				t.Fatal(err)
			}
			got, err := src.backend.ScanLogs(ctx, s)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got, opts...); diff != "" {
				t.Errorf("ScanLogs (-memory +store):\n%s", diff)
			}
		})
	}
}

func TestATraceLookupCountsTheWholeTraceWhileReadingOnlyItsCap(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t, Options{Retention: 48 * time.Hour})
	const spans = 3000
	data := bigTrace(spans, 700, time.Now())
	deliver(t, s, nil, data)
	big := data.batches[0].traces.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).TraceID()
	b := NewBackend(s)
	batch, err := b.ScanSpans(ctx, telemetry.SpanScan{TraceIDs: []string{hexID(big)}, Limit: 50, Oldest: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(batch.Spans) != 50 || !batch.Limited || batch.Matched != spans {
		t.Fatalf("read %d spans, limited %v, matched %d; want 50, true and every span of the trace (%d)", len(batch.Spans),
			batch.Limited, batch.Matched, spans)
	}
	run, err := engine.New(NewBackend(s), nil).Run(ctx, telemetry.RunQuery{ID: hexID(big), MaxSpans: 50})
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Spans) != 50 || run.SpanTotal != spans || !run.Limited {
		t.Fatalf("get_run read %d spans of %d (limited %v), want 50 of %d", len(run.Spans), run.SpanTotal, run.Limited, spans)
	}
}

func TestDescribeAndServices(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t, Options{Retention: 48 * time.Hour})
	now := time.Now()
	for i, svc := range []string{"zeta", "alpha", "", "unknown", "mid"} {
		td := makeTraces(svc, uint64(i), 8, now.Add(-time.Duration(i)*time.Minute))
		if svc == "" {
			td.ResourceSpans().At(0).Resource().Attributes().Remove("service.name")
		}
		if _, _, err := s.IngestTraces(ctx, td); err != nil {
			t.Fatal(err)
		}
	}
	b := NewBackend(s)
	for _, c := range []struct {
		limit int
		want  []string
	}{
		{0, []string{"alpha", "mid", "unknown", "zeta"}},
		{3, []string{"alpha", "mid", "unknown"}},
		{1, []string{"alpha"}},
	} {
		got, err := b.Services(ctx, c.limit)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("Services(%d) = %v, want %v", c.limit, got, c.want)
		}
	}
	info := b.Describe(ctx)
	if info.Kind != "embedded" || !info.Reachable || info.NewestDataMs != now.UnixMilli() {
		t.Fatalf("Describe = %+v, want the embedded source with data up to %d", info, now.UnixMilli())
	}
}
