// Package telemetrytest is the conformance suite every telemetry source runs: the fixture
// dataset (package fixture) is loaded into a fresh source, and every Source method must give
// the fixture's expected answer, field by field, for a table of queries over both presets.
// The expectations are computed by the fixture from what its generator recorded, never by the
// engine's code, so a source and the engine cannot agree on a wrong answer.
package telemetrytest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/conventions"
	"github.com/runlens/runlens/internal/telemetry/engine"
	"github.com/runlens/runlens/internal/telemetry/fixture"
)

// Now is the instant the suite's datasets end at.
var Now = time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)

// NewSource loads d into a fresh source (its conventions are d.Conventions) and returns it.
type NewSource func(t *testing.T, d *fixture.Dataset) telemetry.Source

// Options adjust the suite to what a source cannot do (each exception documented by the
// caller).
type Options struct {
	// Presets to run (default both).
	Presets []string
	// Seeds to run (default 1 and 42).
	Seeds []uint64
	// NoLogs: the source stores no log records (e.g. Jaeger); it is held to the answers of
	// the dataset without its records (fixture.Dataset.WithoutLogs).
	NoLogs bool
}

// Run runs the suite.
func Run(t *testing.T, newSource NewSource, o Options) {
	presets := o.Presets
	if len(presets) == 0 {
		presets = []string{"otel", "netscript"}
	}
	seeds := o.Seeds
	if len(seeds) == 0 {
		seeds = []uint64{1, 42}
	}
	for _, preset := range presets {
		for _, seed := range seeds {
			t.Run(fmt.Sprintf("%s/seed=%d", preset, seed), func(t *testing.T) {
				d, err := fixture.New(fixture.Options{Preset: preset, Now: Now, Seed: seed})
				if err != nil {
					t.Fatal(err)
				}
				src := newSource(t, d)
				if o.NoLogs {
					d = d.WithoutLogs()
				}
				runAll(t, src, d)
			})
		}
	}
}

// Last is the window of the last d before Now.
func Last(d time.Duration) telemetry.Window {
	return telemetry.Window{StartMs: Now.Add(-d).UnixMilli(), EndMs: Now.UnixMilli()}
}

var windows = []struct {
	name string
	w    telemetry.Window
}{
	{"15m", Last(15 * time.Minute)},
	{"1h", Last(time.Hour)},
	{"24h", Last(24 * time.Hour)},
	{"an hour a day ago", telemetry.Window{StartMs: Now.Add(-21 * time.Hour).UnixMilli(), EndMs: Now.Add(-19 * time.Hour).UnixMilli()}},
}

// compare fails t with a diff when got differs from want; Scan.Scanned is not predicted.
func compare(t *testing.T, what string, got, want any) {
	t.Helper()
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty(), cmpopts.IgnoreFields(telemetry.Scan{}, "Scanned"), cmpopts.IgnoreFields(telemetry.Span{}, "Failure")); diff != "" {
		t.Errorf("%s: answer differs from the fixture's (-want +got):\n%s", what, diff)
	}
}

// unknownDomain reports whether domain is not one of the dataset's conventions' domains, and
// then fails the test unless err is the *telemetry.UnknownNameError that names them: a filter
// that can only match nothing is refused, not answered with nothing.
func unknownDomain(t *testing.T, d *fixture.Dataset, domain string, err error) bool {
	t.Helper()
	names := d.Conventions.DomainNames()
	if domain == "" || slices.Contains(names, domain) {
		return false
	}
	var ue *telemetry.UnknownNameError
	if !errors.As(err, &ue) || ue.Arg != "domain" || !slices.Equal(ue.Known, names) {
		t.Errorf("domain %q is none of %v: got %v, want an UnknownNameError listing them", domain, names, err)
	}
	return true
}

func runAll(t *testing.T, src telemetry.Source, d *fixture.Dataset) {
	ctx := context.Background()
	services := []string{"", "checkout", "billing", "worker", telemetry.UnknownService, "no-such-service"}
	for _, w := range windows {
		for _, svc := range services {
			q := telemetry.StatusQuery{Window: w.w, Service: svc}
			got, err := src.Status(ctx, q)
			if err != nil {
				t.Fatalf("Status %s %q: %v", w.name, svc, err)
			}
			compare(t, fmt.Sprintf("Status over %s, service %q", w.name, svc), got, d.ExpectStatus(q))
			checkActivityFact(t, src, q, w.name)
		}
		for _, q := range runQueries(w.w) {
			got, err := src.Runs(ctx, q)
			if unknownDomain(t, d, q.Domain, err) {
				continue
			}
			if err != nil {
				t.Fatalf("Runs %+v: %v", q, err)
			}
			compare(t, fmt.Sprintf("Runs over %s %+v", w.name, q), got, d.ExpectRuns(q))
			checkRunPageFact(t, src, q, w.name)
		}
		for _, svc := range []string{"", "checkout", "billing", "worker"} {
			for _, dom := range []string{"", "http", "messaging", "job", "internal", "saga", "worker", "service"} {
				q := telemetry.ErrorsQuery{Window: w.w, Service: svc, Domain: dom}
				got, err := src.Errors(ctx, q)
				if unknownDomain(t, d, dom, err) {
					continue
				}
				if err != nil {
					t.Fatalf("Errors %+v: %v", q, err)
				}
				compare(t, fmt.Sprintf("Errors over %s, service %q, domain %q", w.name, svc, dom), got, d.ExpectErrors(q))
				checkOccurrenceFact(t, src, q, w.name)
			}
		}
		for _, q := range []telemetry.JobQuery{
			{Window: w.w}, {Window: w.w, JobName: "nightly-report"}, {Window: w.w, JobID: "cleanup"},
			{Window: w.w, JobName: "reindex"}, {Window: w.w, JobName: "nope"}, {Window: w.w, Service: "checkout"},
		} {
			got, err := src.LastJob(ctx, q)
			if err != nil {
				t.Fatalf("LastJob %+v: %v", q, err)
			}
			compare(t, fmt.Sprintf("LastJob over %s %+v", w.name, q), got, d.ExpectLastJob(q))
			checkJobFact(t, src, q, w.name)
		}
		for _, svc := range []string{"checkout", "billing", "worker", telemetry.UnknownService, "no-such-service"} {
			for _, q := range []telemetry.PerformanceQuery{
				{Window: w.w, Service: svc}, {Window: w.w, Service: svc, TopN: 1},
				{Window: w.w, Service: svc, Operation: "SELECT orders"}, {Window: w.w, Service: svc, Operation: "nope"},
			} {
				got, err := src.ServicePerformance(ctx, q)
				if err != nil {
					t.Fatalf("ServicePerformance %+v: %v", q, err)
				}
				compare(t, fmt.Sprintf("ServicePerformance over %s %+v", w.name, q), got, d.ExpectPerformance(q))
				checkDurationFact(t, src, telemetry.DurationQuery{Window: q.Window, Service: q.Service, Operation: q.Operation}, w.name)
			}
		}
		for _, q := range []telemetry.DBQuery{
			{Window: w.w}, {Window: w.w, TopN: 1}, {Window: w.w, Service: "billing"},
			{Window: w.w, System: "postgresql"}, {Window: w.w, System: "oracle"},
		} {
			got, err := src.DBOperations(ctx, q)
			if err != nil {
				t.Fatalf("DBOperations %+v: %v", q, err)
			}
			compare(t, fmt.Sprintf("DBOperations over %s %+v", w.name, q), got, d.ExpectDB(q))
			checkDBFact(t, src, q, w.name)
		}
	}
	for _, r := range d.Runs {
		for _, id := range []string{r.ID, r.TraceID} {
			got, err := src.Run(ctx, telemetry.RunQuery{ID: id})
			if err != nil {
				t.Fatalf("Run %s: %v", id, err)
			}
			want, _ := d.ExpectRun(id)
			compare(t, "Run "+id, got, want)
		}
	}
	if _, err := src.Run(ctx, telemetry.RunQuery{ID: "0123456789abcdef0123456789abcdef"}); !errors.Is(err, telemetry.ErrRunNotFound) {
		t.Errorf("Run of an unknown id: %v, want ErrRunNotFound", err)
	}
}

// portOf returns the engine src is and its backend as capability C, when src is an engine
// over a backend that has it.
func portOf[C any](src telemetry.Source) (*engine.Engine, C, bool) {
	var zero C
	e, ok := src.(*engine.Engine)
	if !ok {
		return nil, zero, false
	}
	c, ok := e.Backend().(C)
	return e, c, ok
}

// factOf asks a backend's port P for the fact F of question q, and the engine's scans for the
// same fact (the reference: the engine that scans only, over the same rows); it fails t unless
// both answer. ok is false when the backend has no such port.
func factOf[P, Q, F any](t *testing.T, src telemetry.Source, fact, where string, q Q,
	ask func(P, context.Context, Q, telemetry.Ask) (F, bool, error), scans func(*engine.Engine, context.Context, Q) (F, error)) (got, want F, ok bool) {
	t.Helper()
	e, c, ok := portOf[P](src)
	if !ok {
		return got, want, false
	}
	ctx := context.Background()
	got, handled, err := ask(c, ctx, q, e.Ask())
	want, scanErr := scans(e.ScansOnly(), ctx, q)
	answered(t, fact, where, handled, err, scanErr)
	return got, want, true
}

// answered fails t unless the backend answered a fact question (handled, no error) and the
// engine's scans did too.
func answered(t *testing.T, fact, where string, handled bool, err, scanErr error) {
	t.Helper()
	if err != nil || !handled {
		t.Fatalf("fact %s %s: handled %v, %v; want the backend to answer", fact, where, handled, err)
	}
	if scanErr != nil {
		t.Fatalf("fact %s from scans %s: %v", fact, where, scanErr)
	}
}

// checkActivityFact holds the fact a backend supplies through telemetry.ActivityCounter to
// the engine's scan-derived one (engine.Activity of the engine that scans only), over the
// same rows: a failure names the fact, not only the answer assembled from it.
func checkActivityFact(t *testing.T, src telemetry.Source, q telemetry.StatusQuery, window string) {
	t.Helper()
	got, want, ok := factOf(t, src, "Activity", fmt.Sprintf("over %s, service %q", window, q.Service), q, telemetry.ActivityCounter.CountActivity, (*engine.Engine).Activity)
	if !ok {
		return
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty(), cmpopts.IgnoreFields(telemetry.Scan{}, "Scanned")); diff != "" {
		t.Errorf("fact Activity over %s, service %q: the backend's differs from the engine's scans (-scans +backend):\n%s", window, q.Service, diff)
	}
}

// checkOccurrenceFact holds the index a backend supplies through telemetry.OccurrenceIndexer
// to the engine's scan-derived one, group by group in the order they are met: counts,
// sightings, handled share, entry services (as a set) and the newest occurrences that decide
// each group's fields (a backend may hand over more, which decide nothing).
func checkOccurrenceFact(t *testing.T, src telemetry.Source, q telemetry.ErrorsQuery, window string) {
	t.Helper()
	got, want, ok := factOf(t, src, "OccurrenceIndex", fmt.Sprintf("over %s, service %q, domain %q", window, q.Service, q.Domain), q, telemetry.OccurrenceIndexer.IndexOccurrences, (*engine.Engine).Occurrences)
	if !ok {
		return
	}
	deciding := func(idx telemetry.OccurrenceIndex) []telemetry.OccurrenceGroup {
		out := make([]telemetry.OccurrenceGroup, 0, len(idx.Groups))
		for _, g := range idx.Groups {
			g.EntryServices = slices.Compact(slices.Sorted(slices.Values(g.EntryServices)))
			if len(g.Newest) > 0 {
				g.Newest = telemetry.IndexOccurrences(g.Newest, "", "").Groups[0].Newest
			}
			out = append(out, g)
		}
		return out
	}
	// What Report reads of an occurrence: its handled flag and entry service are the group's
	// facts of their own, and whether it decided its run is not an errors answer's.
	newest := cmpopts.IgnoreFields(telemetry.Occurrence{}, "Decisive", "Handled", "EntryService")
	if diff := cmp.Diff(deciding(want), deciding(got), cmpopts.EquateEmpty(), newest); diff != "" {
		t.Errorf("fact OccurrenceIndex over %s, service %q, domain %q: the backend's groups differ from the engine's scans (-scans +backend):\n%s",
			window, q.Service, q.Domain, diff)
	}
	if got.Scan.Limited != want.Scan.Limited {
		t.Errorf("fact OccurrenceIndex over %s: limited %v, the engine's scans %v", window, got.Scan.Limited, want.Scan.Limited)
	}
}

// checkRunPageFact holds the page of the run index a backend supplies through
// telemetry.RunLister to the engine's scan-derived page (the answer before the engine adds
// where a service's runs entered).
func checkRunPageFact(t *testing.T, src telemetry.Source, q telemetry.RunsQuery, window string) {
	t.Helper()
	q = q.WithDefaults()
	got, want, ok := factOf(t, src, "RunPage", fmt.Sprintf("over %s %+v", window, q), q, telemetry.RunLister.ListRuns, (*engine.Engine).Runs)
	if !ok {
		return
	}
	want.EnteredAt = nil
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty(), cmpopts.IgnoreFields(telemetry.Scan{}, "Scanned")); diff != "" {
		t.Errorf("fact RunPage over %s %+v: the backend's differs from the engine's scans (-scans +backend):\n%s", window, q, diff)
	}
}

// checkDurationFact holds the duration facts a backend supplies through
// telemetry.DurationIndexer to the engine's scan-derived ones: the whole set's and each
// operation's count, errors, sum and percentiles, and the traffic span.
func checkDurationFact(t *testing.T, src telemetry.Source, q telemetry.DurationQuery, window string) {
	t.Helper()
	got, want, ok := factOf(t, src, "Durations", fmt.Sprintf("over %s %+v", window, q), q, telemetry.DurationIndexer.IndexDurations, (*engine.Engine).Durations)
	if !ok {
		return
	}
	byName := cmpopts.SortSlices(func(a, b telemetry.DurationFacts) bool { return a.Name < b.Name })
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty(), byName, cmpopts.IgnoreFields(telemetry.Scan{}, "Scanned")); diff != "" {
		t.Errorf("fact Durations over %s %+v: the backend's differ from the engine's scans (-scans +backend):\n%s", window, q, diff)
	}
}

// checkDBFact holds the database operations a backend supplies through telemetry.DBIndexer
// to the engine's scan-derived ones: each operation's count, errors, total and — unless the
// backend marked it Partial (it cannot make the answer) — its p95 and what the conventions
// read of it; and the systems seen, when the system filter kept nothing.
func checkDBFact(t *testing.T, src telemetry.Source, q telemetry.DBQuery, window string) {
	t.Helper()
	q = q.WithDefaults()
	got, want, ok := factOf(t, src, "DBOperations", fmt.Sprintf("over %s %+v", window, q), q, telemetry.DBIndexer.IndexDB, (*engine.Engine).DBFacts)
	if !ok {
		return
	}
	partial := map[string]bool{}
	for _, o := range got.Operations {
		partial[o.Op.Key] = o.Partial
	}
	for i := range want.Operations {
		if o := &want.Operations[i]; partial[o.Op.Key] {
			o.Partial, o.P95Ns = true, 0
			o.Op = conventions.DBOperation{Key: o.Op.Key, System: o.Op.System}
		}
	}
	if len(got.Operations) > 0 {
		got.Systems, want.Systems = nil, nil
	}
	sorted := cmpopts.SortSlices(func(a, b telemetry.DBOperationFacts) bool { return a.Op.Key < b.Op.Key })
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty(), sorted, cmpopts.SortSlices(func(a, b string) bool { return a < b }),
		cmpopts.IgnoreFields(telemetry.Scan{}, "Scanned")); diff != "" {
		t.Errorf("fact DBOperations over %s %+v: the backend's differ from the engine's scans (-scans +backend):\n%s", window, q, diff)
	}
}

// checkJobFact holds the facts a backend supplies through telemetry.JobIndexer to the
// engine's scan-derived ones: the newest matching execution (as JobFromSpan reads its span),
// the one before it, and the job names seen when none matched (the first MaxHints by name).
func checkJobFact(t *testing.T, src telemetry.Source, q telemetry.JobQuery, window string) {
	t.Helper()
	got, want, ok := factOf(t, src, "JobFacts", fmt.Sprintf("over %s %+v", window, q), q, telemetry.JobIndexer.IndexJobs, (*engine.Engine).JobFacts)
	if !ok {
		return
	}
	e := src.(*engine.Engine) // factOf answered: src is an engine
	type read struct {
		Newest          *telemetry.JobResult
		HasPrevious     bool
		PreviousStatus  string
		PreviousStartMs int64
		Names           []string
	}
	readOf := func(f telemetry.JobFacts) read {
		r := read{HasPrevious: f.HasPrevious, PreviousStatus: f.PreviousStatus, PreviousStartMs: f.PreviousStartMs}
		if f.Newest != nil {
			j, _ := telemetry.JobFromSpan(e.Conventions(), f.Newest)
			r.Newest = &j
		}
		if f.Newest == nil {
			r.Names = f.Result(e.Conventions(), q, e.Ask().Limits.MaxHints).KnownJobs
		}
		return r
	}
	if diff := cmp.Diff(readOf(want), readOf(got), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("fact JobFacts over %s %+v: the backend's differ from the engine's scans (-scans +backend):\n%s", window, q, diff)
	}
}

func runQueries(w telemetry.Window) []telemetry.RunsQuery {
	return []telemetry.RunsQuery{
		{Window: w, Limit: 100},
		{Window: w, Limit: 3}, {Window: w, Limit: 3, Offset: 3}, {Window: w, Limit: 5, Offset: 1000},
		{Window: w, Limit: 100, Status: telemetry.StatusError}, {Window: w, Limit: 100, Status: telemetry.StatusOK},
		{Window: w, Limit: 100, Domain: "http"}, {Window: w, Limit: 100, Domain: "job"}, {Window: w, Limit: 100, Domain: "worker"},
		{Window: w, Limit: 100, Service: "worker", Status: telemetry.StatusError},
		{Window: w, Limit: 100, Service: "billing"},
	}
}
