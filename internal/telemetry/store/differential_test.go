package store

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/runlens/runlens/internal/telemetry/engine"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/conventions"
	"github.com/runlens/runlens/internal/telemetry/memory"
)

// The store answers through the engine: with its capabilities (aggregates in SQL over derived
// columns, indexes and rollups), and with scans only. Both must give exactly what the engine
// gives over the in-memory backend loaded with the same data, field by field — Scan.Scanned
// aside, which counts rows examined on each access path.

// sources are three engines over the same data.
type sources struct {
	store            *Store
	backend          *Backend
	caps, scans, mem *engine.Engine
}

// loadSources delivers data, batch by batch in its order, to a fresh store (opened with conv)
// and to an in-memory backend.
func loadSources(t *testing.T, conv *conventions.Conventions, data randomTelemetry) sources {
	t.Helper()
	s := openTestStore(t, Options{Retention: 30 * 24 * time.Hour, Conventions: conv})
	mb := &memory.Backend{}
	deliver(t, s, mb, data)
	return sourcesOver(s, mb, conv)
}

// deliver ingests data into s and, when mb is not nil, mb.
func deliver(t *testing.T, s *Store, mb *memory.Backend, data randomTelemetry) {
	t.Helper()
	ctx := context.Background()
	for _, b := range data.batches {
		if b.traces != nil {
			if _, _, err := s.IngestTraces(ctx, *b.traces); err != nil {
				t.Fatal(err)
			}
			if mb != nil {
				mb.AddTraces(*b.traces)
			}
			continue
		}
		if _, _, err := s.IngestLogs(ctx, *b.logs); err != nil {
			t.Fatal(err)
		}
		if mb != nil {
			mb.AddLogs(*b.logs)
		}
	}
}

func sourcesOver(s *Store, mb *memory.Backend, conv *conventions.Conventions) sources {
	b := NewBackend(s)
	caps := engine.New(b, conv)
	return sources{store: s, backend: b, caps: caps, scans: caps.ScansOnly(), mem: engine.New(mb, conv)}
}

// sameAnswers compares what call answers from each engine with the in-memory one.
func (src sources) sameAnswers(t *testing.T, what string, call func(telemetry.Source) (any, error)) {
	t.Helper()
	want, werr := call(src.mem)
	for _, e := range []struct {
		name string
		src  telemetry.Source
	}{{"capabilities", src.caps}, {"scans", src.scans}} {
		got, err := call(e.src)
		if (err == nil) != (werr == nil) || (werr != nil && errors.Is(werr, telemetry.ErrRunNotFound) != errors.Is(err, telemetry.ErrRunNotFound)) {
			t.Errorf("%s with %s: error %v, the in-memory engine's %v", what, e.name, err, werr)
			continue
		}
		if diff := cmp.Diff(want, got, cmpopts.EquateEmpty(), cmpopts.IgnoreFields(telemetry.Scan{}, "Scanned")); diff != "" {
			t.Errorf("%s with %s differs from the in-memory engine (-memory +store):\n%s", what, e.name, diff)
		}
	}
}

// capabilitiesHandle asserts that every capability answers (does not decline) with conv.
func (src sources) capabilitiesHandle(t *testing.T, conv *conventions.Conventions, w telemetry.Window) {
	t.Helper()
	ctx := context.Background()
	b := src.backend
	var handled [7]bool
	var errs [7]error
	ask := telemetry.Ask{Conv: conv, Limits: telemetry.DefaultLimits()}
	_, handled[0], errs[0] = b.CountActivity(ctx, telemetry.StatusQuery{Window: w}, ask)
	_, handled[1], errs[1] = b.ListRuns(ctx, telemetry.RunsQuery{Window: w}, ask)
	_, handled[2], errs[2] = b.IndexOccurrences(ctx, telemetry.ErrorsQuery{Window: w}, ask)
	_, handled[3], errs[3] = b.IndexJobs(ctx, telemetry.JobQuery{Window: w}, ask)
	_, handled[4], errs[4] = b.IndexDurations(ctx, telemetry.DurationQuery{Window: w, Service: "checkout"}, ask)
	_, handled[5], errs[5] = b.IndexDB(ctx, telemetry.DBQuery{Window: w}, ask)
	_, handled[6], errs[6] = b.ResolveRun(ctx, "run-1", ask)
	for i := range handled {
		if errs[i] != nil || !handled[i] {
			t.Errorf("capability %d: handled %v, error %v; want it to answer", i, handled[i], errs[i])
		}
	}
}

// compareAll asks every Source method a table of questions over windows.
func (src sources) compareAll(t *testing.T, conv *conventions.Conventions, windows []telemetry.Window, runIDs []string) {
	t.Helper()
	ctx := context.Background()
	if raceEnabled {
		windows = windows[:min(2, len(windows))]
	}
	services := []string{"", "checkout", "unknown", "gateway", "nope"}
	domains := []string{"", conv.DomainNames()[0], conv.DefaultDomain, "nope"}
	for wi, w := range windows {
		wn := fmt.Sprintf("window %d [%d, %d)", wi, w.StartMs, w.EndMs)
		for _, svc := range services {
			for _, maxSvc := range []int{0, 2} {
				q := telemetry.StatusQuery{Window: w, Service: svc, MaxServices: maxSvc}
				src.sameAnswers(t, fmt.Sprintf("Status %s %+v", wn, q), func(s telemetry.Source) (any, error) { return s.Status(ctx, q) })
			}
			for _, dom := range domains {
				q := telemetry.ErrorsQuery{Window: w, Service: svc, Domain: dom}
				src.sameAnswers(t, fmt.Sprintf("Errors %s %+v", wn, q), func(s telemetry.Source) (any, error) { return s.Errors(ctx, q) })
			}
			for _, q := range []telemetry.RunsQuery{
				{Window: w, Service: svc, Limit: 100}, {Window: w, Service: svc, Limit: 3, Offset: 2},
				{Window: w, Service: svc, Status: telemetry.StatusError, Limit: 100}, {Window: w, Service: svc, Status: telemetry.StatusOK, Limit: 7},
				{Window: w, Service: svc, Status: "failed"}, {Window: w, Service: svc, Domain: domains[1], Limit: 100},
				{Window: w, Service: svc, Domain: domains[2], Status: telemetry.StatusError, Limit: 100},
				{Window: w, Service: svc, Offset: 10000},
			} {
				src.sameAnswers(t, fmt.Sprintf("Runs %s %+v", wn, q), func(s telemetry.Source) (any, error) { return s.Runs(ctx, q) })
			}
			for _, q := range []telemetry.JobQuery{
				{Window: w, Service: svc}, {Window: w, Service: svc, JobName: "sync"}, {Window: w, Service: svc, JobName: "sub"},
				{Window: w, Service: svc, JobID: "job-3"}, {Window: w, Service: svc, JobName: "nope"},
				{Window: w, Service: svc, JobID: "3", JobName: "nightly"},
			} {
				src.sameAnswers(t, fmt.Sprintf("LastJob %s %+v", wn, q), func(s telemetry.Source) (any, error) { return s.LastJob(ctx, q) })
			}
			for _, q := range []telemetry.PerformanceQuery{
				{Window: w, Service: svc}, {Window: w, Service: svc, TopN: 1}, {Window: w, Service: svc, TopN: 20},
				{Window: w, Service: svc, Operation: "SELECT orders"}, {Window: w, Service: svc, Operation: "nope"},
			} {
				src.sameAnswers(t, fmt.Sprintf("ServicePerformance %s %+v", wn, q), func(s telemetry.Source) (any, error) {
					return s.ServicePerformance(ctx, q)
				})
			}
			for _, q := range []telemetry.DBQuery{
				{Window: w, Service: svc}, {Window: w, Service: svc, TopN: 1}, {Window: w, Service: svc, TopN: 20},
				{Window: w, Service: svc, System: "mysql"}, {Window: w, Service: svc, System: "oracle"},
			} {
				src.sameAnswers(t, fmt.Sprintf("DBOperations %s %+v", wn, q), func(s telemetry.Source) (any, error) { return s.DBOperations(ctx, q) })
			}
		}
	}
	for _, id := range runIDs {
		for _, q := range []telemetry.RunQuery{{ID: id}, {ID: id, MaxSpans: 2, MaxLogs: 1, WithAttributes: true}} {
			src.sameAnswers(t, fmt.Sprintf("Run %+v", q), func(s telemetry.Source) (any, error) { return s.Run(ctx, q) })
		}
	}
	for _, limit := range []int{0, 1, 3, 100} {
		src.sameAnswers(t, fmt.Sprintf("Services(%d)", limit), func(s telemetry.Source) (any, error) { return s.Services(ctx, limit) })
	}
	src.sameAnswers(t, "Describe's newest data", func(s telemetry.Source) (any, error) {
		info := s.Describe(ctx)
		return []any{info.Reachable, info.NewestDataMs}, nil
	})
}

// windowsAround are windows of every kind within span before now: all of it first, the
// tools' default, one aligned on the rollup buckets, one ragged at both ends, one inside a
// bucket.
func windowsAround(now time.Time, span time.Duration) []telemetry.Window {
	end := now.UnixMilli()
	last := func(d time.Duration) telemetry.Window {
		return telemetry.Window{StartMs: end - d.Milliseconds(), EndMs: end}
	}
	const bucketMs = 5 * 60 * 1000
	aligned := end / bucketMs * bucketMs
	return []telemetry.Window{
		last(span + time.Hour), last(15 * time.Minute),
		{StartMs: aligned - 8*bucketMs, EndMs: aligned - 2*bucketMs},
		{StartMs: end - 133*60*1000 - 7, EndMs: end - 17*60*1000 + 3},
		{StartMs: aligned - bucketMs + 10, EndMs: aligned - 10},
	}
}

// runIDsOf lists ids get_run is asked about: some trace ids of the data, run ids, unknown ids.
func runIDsOf(t *testing.T, mem *engine.Engine, w telemetry.Window) []string {
	t.Helper()
	page, err := mem.Runs(context.Background(), telemetry.RunsQuery{Window: w, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{"run-1", "run-4", "exec-2", "exec-5", "saga-3", "no-such-run", "0123456789abcdef0123456789abcdef"}
	for i, r := range page.Runs {
		if i%7 == 0 {
			ids = append(ids, r.TraceID, r.ID)
		}
	}
	return ids
}

// scaled is n, or a fifth of it (at least 1) under the race detector.
func scaled(n int) int {
	if raceEnabled {
		return max(1, n/5)
	}
	return n
}

func mustPreset(t testing.TB, name string) *conventions.Conventions {
	t.Helper()
	c, err := conventions.Preset(name)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestTheStoreAnswersLikeTheEngineOverMemoryOnRandomData is the differential test of
// docs/semantics.md R7, R8, R12, R17 as the store restates them (its stored origins, its SQL of
// the runs' verdicts and entry services, its traffic span): on random telemetry, every answer
// equals the engine's over memory.
func TestTheStoreAnswersLikeTheEngineOverMemoryOnRandomData(t *testing.T) {
	now := time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		name   string
		preset string
		seed   uint64
	}{
		{"otel conventions, seed 1", "otel", 1},
		{"netscript conventions, seed 3", "netscript", 3},
		{"otel conventions, seed 2", "otel", 2},
	}
	if raceEnabled {
		cases = cases[:1]
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			conv := mustPreset(t, c.preset)
			span := 3 * time.Hour
			src := loadSources(t, conv, newRandomTelemetry(c.seed, scaled(300), now, span))
			checkDerived(t, src.store)
			windows := windowsAround(now, span)
			src.capabilitiesHandle(t, conv, windows[0])
			src.compareAll(t, conv, windows, runIDsOf(t, src.mem, windows[0]))
		})
	}
}

// TestTheStoreTakesTheEnginesLimits runs the questions whose answers list known names with an
// engine limited to one hint: the capabilities cut them where the engine over memory does,
// because they take the limits the engine hands them (telemetry.Ask), not its defaults.
func TestTheStoreTakesTheEnginesLimits(t *testing.T) {
	now := time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)
	conv := mustPreset(t, "otel")
	src := loadSources(t, conv, newRandomTelemetry(1, scaled(300), now, 3*time.Hour))
	few := telemetry.Limits{MaxHints: 1}
	src.caps, src.scans, src.mem = src.caps.WithLimits(few), src.scans.WithLimits(few), src.mem.WithLimits(few)
	ctx := context.Background()
	w := windowsAround(now, 3*time.Hour)[0]
	perf, err := src.caps.ServicePerformance(ctx, telemetry.PerformanceQuery{Window: w, Service: "checkout", Operation: "nope"})
	if err != nil || len(perf.KnownOperations) != 1 {
		t.Fatalf("known operations %q (%v), want one: the engine's hint limit", perf.KnownOperations, err)
	}
	src.sameAnswers(t, "ServicePerformance of an unknown operation", func(s telemetry.Source) (any, error) {
		return s.ServicePerformance(ctx, telemetry.PerformanceQuery{Window: w, Service: "checkout", Operation: "nope"})
	})
	src.sameAnswers(t, "DBOperations of an unknown system", func(s telemetry.Source) (any, error) {
		return s.DBOperations(ctx, telemetry.DBQuery{Window: w, System: "oracle"})
	})
	src.sameAnswers(t, "LastJob of an unknown job", func(s telemetry.Source) (any, error) {
		return s.LastJob(ctx, telemetry.JobQuery{Window: w, JobName: "nope"})
	})
}
