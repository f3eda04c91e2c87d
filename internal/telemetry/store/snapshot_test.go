package store

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/memory"
)

// ignoreScanned leaves Scan.Scanned out of comparisons: it counts rows examined.
var ignoreScanned = cmpopts.IgnoreFields(telemetry.Scan{}, "Scanned")

func TestAPinnedQueryIgnoresWhatArrivedAfterItsSnapshot(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)
	conv := mustPreset(t, "otel")
	data := newRandomTelemetry(9, scaled(300), now, 2*time.Hour)
	// The later batches bring more spans and records of traces the snapshot saw in part: new
	// errors below them, their roots, records that fold into them.
	cut := len(data.batches) * 3 / 5
	s := openTestStore(t, Options{Retention: 30 * 24 * time.Hour, Conventions: conv})
	mb := &memory.Backend{}
	deliver(t, s, mb, randomTelemetry{batches: data.batches[:cut]})
	src := sourcesOver(s, mb, conv)
	snap, err := src.caps.Fingerprint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	memSnap, _ := src.mem.Fingerprint(ctx)
	if snap.AsOf != memSnap.AsOf {
		t.Fatalf("the store's snapshot %d and the in-memory one %d count rows differently", snap.AsOf, memSnap.AsOf)
	}
	before := map[string]any{}
	// The last window ends past every row inside a bucket, which is then read whole from the
	// rollups (liveSplit) — rollups that count what arrived after the snapshot too.
	windows := append(windowsAround(now, 2*time.Hour)[:3],
		telemetry.Window{StartMs: now.Add(-40*time.Minute + 3*time.Second).UnixMilli(), EndMs: now.Add(2 * time.Minute).UnixMilli()})
	ask := func(record bool) {
		for wi, w := range windows {
			for _, q := range []telemetry.RunsQuery{
				{Window: w, Limit: 100, AsOf: snap.AsOf}, {Window: w, Status: telemetry.StatusError, Limit: 100, AsOf: snap.AsOf},
				{Window: w, Status: telemetry.StatusOK, Limit: 5, Offset: 3, AsOf: snap.AsOf},
			} {
				name := fmt.Sprintf("Runs window %d %+v", wi, q)
				src.sameAnswers(t, name, func(s telemetry.Source) (any, error) { return s.Runs(ctx, q) })
				page, _, err := src.backend.ListRuns(ctx, q, telemetry.Ask{Conv: conv, Limits: telemetry.DefaultLimits()})
				if err != nil {
					t.Fatal(err)
				}
				if record {
					before[name] = page
				} else if diff := cmp.Diff(before[name], page, ignoreScanned); diff != "" {
					t.Errorf("%s moved with the data that arrived after its snapshot:\n%s", name, diff)
				}
			}
			for _, svc := range []string{"", "checkout"} {
				q := telemetry.ErrorsQuery{Window: w, Service: svc, AsOf: snap.AsOf}
				name := fmt.Sprintf("Errors window %d %+v", wi, q)
				src.sameAnswers(t, name, func(s telemetry.Source) (any, error) { return s.Errors(ctx, q) })
				idx, handled, err := src.backend.IndexOccurrences(ctx, q, telemetry.Ask{Conv: conv, Limits: telemetry.DefaultLimits()})
				rep := idx.Report()
				if err != nil || !handled {
					t.Fatalf("%s: handled %v, %v; the capability must answer pinned queries", name, handled, err)
				}
				if record {
					before[name] = rep
				} else if diff := cmp.Diff(before[name], rep, ignoreScanned); diff != "" {
					t.Errorf("%s moved with the data that arrived after its snapshot:\n%s", name, diff)
				}
			}
		}
	}
	ask(true)
	deliver(t, s, mb, randomTelemetry{batches: data.batches[cut:]})
	d, err := dirtyTraces(ctx, s.DB(), snap.AsOf)
	if err != nil || len(d.traces) == 0 {
		t.Fatalf("no trace changed after the snapshot (%v): the test would not test anything", err)
	}
	ask(false)
	checkDerived(t, s)
}
