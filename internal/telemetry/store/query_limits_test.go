package store

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/fixture"
)

func TestAScanLimitIsReportedNotHidden(t *testing.T) {
	now := time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)
	ctx := context.Background()
	for _, path := range queryPaths {
		t.Run(path, func(t *testing.T) {
			q, d := loadFixtureVia(t, "otel", now, path)
			small := q.WithLimits(QueryLimits{MaxScanRows: 5})
			pq := telemetry.PerformanceQuery{Window: last(now, time.Hour), Service: "checkout"}
			perf, err := small.ServicePerformance(ctx, pq)
			if err != nil {
				t.Fatal(err)
			}
			if !perf.Scan.Limited || perf.SampleCount != 5 {
				t.Fatalf("performance over a limited scan: limited=%v samples=%d", perf.Scan.Limited, perf.SampleCount)
			}
			full, err := q.ServicePerformance(ctx, pq)
			if err != nil {
				t.Fatal(err)
			}
			if full.Scan.Limited {
				t.Fatal("an unlimited scan says it was limited")
			}
			rq := telemetry.RunsQuery{Window: last(now, time.Hour), Status: "ok"}
			runs, err := small.Runs(ctx, rq)
			if err != nil {
				t.Fatal(err)
			}
			switch path {
			case decodedPath:
				if !runs.Scan.Limited {
					t.Fatal("a filtered run listing over a limited scan does not say so")
				}
			case derivedPath:
				// Filters are index conditions there: nothing is scanned in Go, nothing is cut.
				if runs.Scan.Limited || runs.Total != d.ExpectRuns(rq).Total {
					t.Fatalf("filtered run listing: limited=%v total=%d, want the exact total %d", runs.Scan.Limited, runs.Total, d.ExpectRuns(rq).Total)
				}
			}
		})
	}
}

func TestASnapshotPinsPagesWhileDataArrives(t *testing.T) {
	now := time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)
	q, _ := loadFixture(t, "otel", now)
	ctx := context.Background()
	snap, err := q.Fingerprint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rq := telemetry.RunsQuery{Window: last(now, time.Hour), AsOf: snap.AsOf}
	before, err := q.Runs(ctx, rq)
	if err != nil {
		t.Fatal(err)
	}
	more, err := fixture.New(fixture.Options{Now: now, Seed: 99})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := q.store.IngestTraces(ctx, more.Traces); err != nil {
		t.Fatal(err)
	}
	after, err := q.Runs(ctx, rq)
	if err != nil {
		t.Fatal(err)
	}
	if after.Total != before.Total {
		t.Fatalf("pinned total moved from %d to %d", before.Total, after.Total)
	}
	snap2, err := q.Fingerprint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if snap2.ID == snap.ID || snap2.AsOf <= snap.AsOf {
		t.Fatalf("fingerprint did not move with new data: %+v then %+v", snap, snap2)
	}
	latest, err := q.Runs(ctx, telemetry.RunsQuery{Window: last(now, time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if latest.Total != 2*before.Total {
		t.Fatalf("unpinned total %d, want %d", latest.Total, 2*before.Total)
	}
}

func TestDescribeAndServices(t *testing.T) {
	now := time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)
	q, d := loadFixture(t, "otel", now)
	ctx := context.Background()
	info := q.Describe(ctx)
	var newest int64
	for _, s := range d.Spans {
		newest = max(newest, s.StartNs/1e6)
	}
	for _, r := range d.Records {
		newest = max(newest, r.TimeNs/1e6)
	}
	if info.Kind != "embedded" || !info.Reachable || info.NewestDataMs != newest {
		t.Fatalf("Describe = %+v, newest data %d", info, newest)
	}
	svcs, err := q.Services(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"billing", "checkout", "unknown", "worker"}; !slices.Equal(svcs, want) {
		t.Fatalf("Services = %v, want %v", svcs, want)
	}
}
