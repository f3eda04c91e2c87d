package store

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/conventions"
	"github.com/runlens/runlens/internal/telemetry/fixture"
)

// Query paths: a Querier answers from the derived columns when the store computed them with
// its conventions, and by decoding attributes otherwise. Both must give the fixture's answers.
const (
	derivedPath = "derived"
	decodedPath = "decoded"
)

var queryPaths = []string{derivedPath, decodedPath}

// loadFixture stores the fixture dataset of preset through the ingest API and returns a
// querier over it that answers from the derived columns.
func loadFixture(t *testing.T, preset string, now time.Time) (*Querier, *fixture.Dataset) {
	return loadFixtureVia(t, preset, now, derivedPath)
}

// loadFixtureVia is loadFixture on the given query path: for the decoded path the store
// computes its derived columns with the other preset, so the querier cannot use them.
func loadFixtureVia(t *testing.T, preset string, now time.Time, path string) (*Querier, *fixture.Dataset) {
	t.Helper()
	d, err := fixture.New(fixture.Options{Preset: preset, Now: now, Seed: 7})
	if err != nil {
		t.Fatalf("fixture: %v", err)
	}
	storeConv := d.Conventions
	if path == decodedPath {
		other := map[string]string{"otel": "netscript", "netscript": "otel"}[preset]
		if storeConv, err = conventions.Preset(other); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	s, err := Open(ctx, Options{Path: filepath.Join(t.TempDir(), "telemetry.db"), Retention: 48 * time.Hour, Conventions: storeConv})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if _, rejected, err := s.IngestTraces(ctx, d.Traces); err != nil || rejected != 0 {
		t.Fatalf("ingest traces: rejected %d, %v", rejected, err)
	}
	if _, rejected, err := s.IngestLogs(ctx, d.Logs); err != nil || rejected != 0 {
		t.Fatalf("ingest logs: rejected %d, %v", rejected, err)
	}
	q := NewQuerier(s, d.Conventions)
	if derived, err := q.derived(ctx); err != nil || derived != (path == derivedPath) {
		t.Fatalf("querier on the %s path reads derived columns: %v (%v)", path, derived, err)
	}
	return q, d
}

// last returns the window of the last d before now.
func last(now time.Time, d time.Duration) telemetry.Window {
	return telemetry.Window{StartMs: now.Add(-d).UnixMilli(), EndMs: now.UnixMilli()}
}

// ignoreScanned leaves Scan.Scanned out of comparisons: it depends on the access path.
var ignoreScanned = cmpopts.IgnoreFields(telemetry.Scan{}, "Scanned")

var presets = []string{"otel", "netscript"}

func TestQueriesMatchTheFixtureAnswers(t *testing.T) {
	now := time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)
	for _, preset := range presets {
		for _, path := range queryPaths {
			t.Run(preset+"/"+path, func(t *testing.T) {
				q, d := loadFixtureVia(t, preset, now, path)
				ctx := context.Background()
				otel := preset == "otel"
				domain := map[bool]string{true: "http", false: "service"}[otel]

				t.Run("status", func(t *testing.T) {
					for _, sq := range []telemetry.StatusQuery{
						{Window: last(now, 15*time.Minute)},
						{Window: last(now, time.Hour)},
						{Window: last(now, 24*time.Hour)},
						{Window: last(now, time.Hour), Service: "checkout"},
						{Window: last(now, time.Hour), Service: "unknown"},
						{Window: last(now, time.Hour), MaxServices: 2},
					} {
						got, err := q.Status(ctx, sq)
						if err != nil {
							t.Fatal(err)
						}
						if diff := cmp.Diff(d.ExpectStatus(sq), got, ignoreScanned); diff != "" {
							t.Errorf("Status(%+v) (-want +got):\n%s", sq, diff)
						}
					}
				})

				t.Run("runs", func(t *testing.T) {
					for _, rq := range []telemetry.RunsQuery{
						{Window: last(now, time.Hour)},
						{Window: last(now, time.Hour), Limit: 7, Offset: 7},
						{Window: last(now, 24*time.Hour), Limit: 100},
						{Window: last(now, time.Hour), Status: "error", Limit: 100},
						{Window: last(now, time.Hour), Domain: domain, Limit: 5, Offset: 5},
						{Window: last(now, 24*time.Hour), Service: "worker"},
						{Window: last(now, 24*time.Hour), Status: "failed"},
					} {
						got, err := q.Runs(ctx, rq)
						if err != nil {
							t.Fatal(err)
						}
						if diff := cmp.Diff(d.ExpectRuns(rq), got, ignoreScanned, cmpopts.EquateEmpty()); diff != "" {
							t.Errorf("Runs(%+v) (-want +got):\n%s", rq, diff)
						}
					}
				})

				t.Run("run", func(t *testing.T) {
					for _, r := range d.Runs {
						for _, id := range []string{r.ID, r.TraceID} {
							want, _ := d.ExpectRun(id)
							got, err := q.Run(ctx, telemetry.RunQuery{ID: id})
							if err != nil {
								t.Fatalf("Run(%s): %v", id, err)
							}
							if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
								t.Errorf("Run(%s) (-want +got):\n%s", id, diff)
							}
						}
					}
					if _, err := q.Run(ctx, telemetry.RunQuery{ID: "no-such-run"}); !errors.Is(err, telemetry.ErrRunNotFound) {
						t.Errorf("unknown run: want ErrRunNotFound, got %v", err)
					}
				})

				t.Run("errors", func(t *testing.T) {
					for _, eq := range []telemetry.ErrorsQuery{
						{Window: last(now, 15*time.Minute)},
						{Window: last(now, time.Hour)},
						{Window: last(now, 24*time.Hour)},
						{Window: last(now, time.Hour), Service: "checkout"},
						{Window: last(now, time.Hour), Domain: domain},
					} {
						got, err := q.Errors(ctx, eq)
						if err != nil {
							t.Fatal(err)
						}
						if diff := cmp.Diff(d.ExpectErrors(eq), got, ignoreScanned, cmpopts.EquateEmpty()); diff != "" {
							t.Errorf("Errors(%+v) (-want +got):\n%s", eq, diff)
						}
					}
				})

				t.Run("last job", func(t *testing.T) {
					for _, jq := range []telemetry.JobQuery{
						{Window: last(now, 24*time.Hour)},
						{Window: last(now, 24*time.Hour), JobName: "nightly-report"},
						{Window: last(now, 24*time.Hour), JobID: "nightly-report", Service: "worker"},
						{Window: last(now, 5*time.Hour), JobName: "nightly-report"},
						{Window: last(now, 24*time.Hour), JobName: "cleanup"},
						{Window: last(now, 24*time.Hour), JobName: "no-such-job"},
						{Window: last(now, 15*time.Minute)},
						{Window: telemetry.Window{StartMs: now.Add(-9 * time.Hour).UnixMilli(), EndMs: now.Add(-7 * time.Hour).UnixMilli()}},
					} {
						got, err := q.LastJob(ctx, jq)
						if err != nil {
							t.Fatal(err)
						}
						if diff := cmp.Diff(d.ExpectLastJob(jq), got); diff != "" {
							t.Errorf("LastJob(%+v) (-want +got):\n%s", jq, diff)
						}
					}
				})

				t.Run("service performance", func(t *testing.T) {
					for _, pq := range []telemetry.PerformanceQuery{
						{Window: last(now, 15*time.Minute), Service: "checkout"},
						{Window: last(now, time.Hour), Service: "checkout", TopN: 2},
						{Window: last(now, time.Hour), Service: "checkout", Operation: "SELECT orders"},
						{Window: last(now, 24*time.Hour), Service: "worker"},
						{Window: last(now, time.Hour), Service: "unknown"},
						{Window: last(now, time.Hour), Service: "no-such-service"},
					} {
						got, err := q.ServicePerformance(ctx, pq)
						if err != nil {
							t.Fatal(err)
						}
						if diff := cmp.Diff(d.ExpectPerformance(pq), got, ignoreScanned, cmpopts.EquateEmpty()); diff != "" {
							t.Errorf("ServicePerformance(%+v) (-want +got):\n%s", pq, diff)
						}
					}
				})

				t.Run("db operations", func(t *testing.T) {
					for _, dq := range []telemetry.DBQuery{
						{Window: last(now, 15*time.Minute)},
						{Window: last(now, time.Hour), TopN: 20},
						{Window: last(now, time.Hour), Service: "billing"},
						{Window: last(now, time.Hour), System: "mysql"},
						{Window: last(now, time.Hour), TopN: 1},
					} {
						got, err := q.DBOperations(ctx, dq)
						if err != nil {
							t.Fatal(err)
						}
						if diff := cmp.Diff(d.ExpectDB(dq), got, ignoreScanned, cmpopts.EquateEmpty()); diff != "" {
							t.Errorf("DBOperations(%+v) (-want +got):\n%s", dq, diff)
						}
					}
				})
			})
		}
	}
}
