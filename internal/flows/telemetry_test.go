package flows

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/runlens/runlens/internal/telemetry/engine"

	"github.com/runlens/runlens/gen"
	"github.com/runlens/runlens/internal/shape"
	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/fixture"
	"github.com/runlens/runlens/internal/telemetry/memory"
	"github.com/runlens/runlens/internal/toolerr"
)

var fixtureNow = time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)

// telemetryFlows loads the otel fixture into the engine over a fresh in-memory backend and
// returns flows over it. The flows are source-independent; every source is held to the same
// answers by the conformance suite.
func telemetryFlows(t *testing.T) (*Flows, *fixture.Dataset, *memory.Backend) {
	t.Helper()
	d, err := fixture.New(fixture.Options{Now: fixtureNow, Seed: 11})
	if err != nil {
		t.Fatal(err)
	}
	b := &memory.Backend{}
	b.AddTraces(d.Traces)
	b.AddLogs(d.Logs)
	f := New(Deps{Telemetry: engine.New(b, d.Conventions), Now: func() time.Time { return fixtureNow }})
	return f, d, b
}

func wantCode(t *testing.T, err error, code gen.ErrorCode) {
	t.Helper()
	if code == gen.ErrorCodeCursorInvalid {
		if !errors.Is(err, shape.ErrCursorInvalid) {
			t.Fatalf("want a cursor error, got %v", err)
		}
		return
	}
	te, ok := toolerr.As(err)
	if !ok || te.Code != code {
		t.Fatalf("want %s, got %v", code, err)
	}
}

func TestTelemetryWindowsAreCheckedBeforeQuerying(t *testing.T) {
	f, _, _ := telemetryFlows(t)
	ctx := context.Background()
	tooOld := fixtureNow.Add(-8 * 24 * time.Hour).UnixMilli()
	future := fixtureNow.Add(time.Hour).UnixMilli()
	tests := []struct {
		name string
		call func() error
	}{
		{"a window over seven days is refused", func() error {
			_, err := f.ListRuns(ctx, defaults(gen.ListRunsInput{Window: "8d"}))
			return err
		}},
		{"a since older than seven days is refused", func() error {
			_, err := f.GetRecentErrors(ctx, defaults(gen.GetRecentErrorsInput{SinceUnixMs: &tooOld}))
			return err
		}},
		{"a since in the future is refused", func() error {
			_, err := f.GetAppStatus(ctx, defaults(gen.GetAppStatusInput{SinceUnixMs: &future}))
			return err
		}},
		{"a malformed compareTo is refused", func() error {
			_, err := f.AnalyzeServicePerformance(ctx, defaults(gen.AnalyzeServicePerformanceInput{Service: "checkout",
				CompareTo: &gen.AnalyzeServicePerformanceInputCompareTo{Window: "15x", EndAgo: "1h"}}))
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { wantCode(t, tt.call(), gen.ErrorCodeInvalidArguments) })
	}
}

func TestSinceWinsOverWindow(t *testing.T) {
	f, _, _ := telemetryFlows(t)
	since := fixtureNow.Add(-2 * time.Hour).UnixMilli()
	out, err := f.GetAppStatus(context.Background(), defaults(gen.GetAppStatusInput{Window: "1m", SinceUnixMs: &since}))
	if err != nil {
		t.Fatal(err)
	}
	if out.Scan.WindowStartUnixMs != since {
		t.Fatalf("window starts at %d, want %d", out.Scan.WindowStartUnixMs, since)
	}
}

// lastHour is the default window at fixtureNow.
func lastHour() telemetry.Window {
	return telemetry.Window{StartMs: fixtureNow.Add(-time.Hour).UnixMilli(), EndMs: fixtureNow.UnixMilli() + 1}
}

func TestGetAppStatusFailsOnAnErrorInTheWindow(t *testing.T) {
	f, d, _ := telemetryFlows(t)
	out, err := f.GetAppStatus(context.Background(), defaults(gen.GetAppStatusInput{}))
	if err != nil {
		t.Fatal(err)
	}
	// The default window is the last hour, as for every telemetry tool but the last job.
	want := d.ExpectStatus(telemetry.StatusQuery{Window: lastHour()})
	if out.Status != gen.GetAppStatusOutputStatusFail || out.Counts.Errors != want.Errors || want.Errors != 8 || out.Source.Kind != "memory" || !out.Source.Reachable {
		t.Fatalf("status %+v, want %d errors", out, want.Errors)
	}
	// Four http runs hold an error span; three failed: the payment error of a rendered page is
	// handled, its request answered ok.
	if len(out.Domains) != 5 || out.Domains[0].Domain != "http" || out.Domains[0].SeenCount != 30 || out.Domains[0].ErrorCount != 3 {
		t.Fatalf("domains %+v", out.Domains)
	}
	if out.Counts.HandledErrors != want.HandledErrors || want.HandledErrors != 2 {
		t.Fatalf("handled errors %d, want %d (2: the payment error and a billing deadlock)", out.Counts.HandledErrors, want.HandledErrors)
	}
	sum, err := f.GetAppStatus(context.Background(), defaults(gen.GetAppStatusInput{Detail: gen.DetailSummary}))
	if err != nil {
		t.Fatal(err)
	}
	if sum.Domains != nil || sum.Services != nil || sum.Counts != out.Counts {
		t.Fatalf("summary carries collections or other counts: %+v", sum)
	}
	quiet, err := f.GetAppStatus(context.Background(), defaults(gen.GetAppStatusInput{Window: "1m"}))
	if err != nil {
		t.Fatal(err)
	}
	if quiet.Status != gen.GetAppStatusOutputStatusWarn {
		t.Fatalf("a window without telemetry is %s, want warn", quiet.Status)
	}
}

func TestListRunsPagesWithCursorsBoundToTheData(t *testing.T) {
	f, d, s := telemetryFlows(t)
	ctx := context.Background()
	in := defaults(gen.ListRunsInput{Limit: 15})
	want := d.ExpectRuns(telemetry.RunsQuery{Window: telemetry.Window{StartMs: fixtureNow.Add(-time.Hour).UnixMilli(), EndMs: fixtureNow.UnixMilli() + 1}, Limit: 100})
	var ids []string
	for page := 0; ; page++ {
		out, err := f.ListRuns(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		if out.Count != int64(len(out.Runs)) || out.Page.Returned != out.Count || *out.Page.Total != int64(want.Total) {
			t.Fatalf("page %d: count %d returned %d total %v", page, out.Count, out.Page.Returned, *out.Page.Total)
		}
		for _, r := range out.Runs {
			ids = append(ids, r.ID)
		}
		if out.Page.NextCursor == nil {
			break
		}
		in.Cursor = out.Page.NextCursor
	}
	if len(ids) != want.Total {
		t.Fatalf("paged through %d runs, want %d", len(ids), want.Total)
	}
	for i, r := range want.Runs {
		if ids[i] != r.ID {
			t.Fatalf("run %d is %s, want %s", i, ids[i], r.ID)
		}
	}

	first, err := f.ListRuns(ctx, defaults(gen.ListRunsInput{Limit: 5}))
	if err != nil {
		t.Fatal(err)
	}
	changed := defaults(gen.ListRunsInput{Limit: 6, Cursor: first.Page.NextCursor})
	_, err = f.ListRuns(ctx, changed)
	wantCode(t, err, gen.ErrorCodeCursorInvalid)

	more, err := fixture.New(fixture.Options{Now: fixtureNow, Seed: 12})
	if err != nil {
		t.Fatal(err)
	}
	s.AddTraces(more.Traces)
	_, err = f.ListRuns(ctx, defaults(gen.ListRunsInput{Limit: 5, Cursor: first.Page.NextCursor}))
	wantCode(t, err, gen.ErrorCodeCursorInvalid)
}

// A summary lists no runs and counts those matching: its count is no "0 runs" beside a total.
func TestListRunsSummaryHasNoRuns(t *testing.T) {
	f, d, _ := telemetryFlows(t)
	out, err := f.ListRuns(context.Background(), defaults(gen.ListRunsInput{Detail: gen.DetailSummary}))
	if err != nil {
		t.Fatal(err)
	}
	if want := d.ExpectRuns(telemetry.RunsQuery{Window: lastHour()}).Total; out.Runs != nil || out.Count != int64(want) || out.Page.Returned != 0 || *out.Page.Total != int64(want) || want != 37 {
		t.Fatalf("summary %+v", out)
	}
}

func TestGetRun(t *testing.T) {
	f, d, _ := telemetryFlows(t)
	ctx := context.Background()
	var failing fixture.Run
	for _, r := range d.Runs {
		if r.Service == "checkout" && r.ErrorCount > 0 && r.ErrorMessage != "" && r.Name == "GET /orders/{id}" {
			failing = r
			break
		}
	}
	out, err := f.GetRun(ctx, defaults(gen.GetRunInput{ID: failing.ID}))
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Spans) != 5 || out.Spans[0].Depth != 0 || out.Spans[1].Depth != 1 || out.Spans[2].Depth != 2 || out.OmittedSpans != 0 {
		t.Fatalf("spans %+v", out.Spans)
	}
	want, _ := d.ExpectRun(failing.ID)
	if out.Status != gen.RunStatusError || out.ErrorMessage == nil || *out.ErrorMessage != want.ErrorMessage || out.Summary == "" {
		t.Fatalf("error message %v, summary %q", out.ErrorMessage, out.Summary)
	}
	if len(out.Logs) != 2 || len(out.CriticalPath) == 0 || out.CriticalPath[0].SpanID != out.Spans[0].SpanID ||
		out.CriticalPath[0].Name != out.Spans[0].Name || out.CriticalPath[0].Service != out.Spans[0].Service {
		t.Fatalf("logs %+v critical path %+v", out.Logs, out.CriticalPath)
	}
	for _, s := range out.Spans {
		if s.Attributes != nil || s.Events != nil || s.OmittedEvents != nil {
			t.Fatalf("standard detail carries attributes or events: %+v", s)
		}
	}
	shallow, err := f.GetRun(ctx, defaults(gen.GetRunInput{ID: failing.TraceID, MaxDepth: 1}))
	if err != nil {
		t.Fatal(err)
	}
	if len(shallow.Spans) != 1 || shallow.OmittedSpans != 4 || !shallow.Page.Truncated || *shallow.Page.Total != 5 {
		t.Fatalf("maxDepth 1: %d spans, %d omitted", len(shallow.Spans), shallow.OmittedSpans)
	}
	// The path still reads whole when the tree was cut: every step is named.
	if !slices.Equal(shallow.CriticalPath, out.CriticalPath) || len(shallow.CriticalPath) < 2 {
		t.Fatalf("maxDepth 1 critical path %+v, want the whole path %+v", shallow.CriticalPath, out.CriticalPath)
	}
	full, err := f.GetRun(ctx, defaults(gen.GetRunInput{ID: failing.ID, Detail: gen.DetailFull}))
	if err != nil {
		t.Fatal(err)
	}
	if full.Spans[0].Attributes["http.request.method"] != "GET" {
		t.Fatalf("full detail lacks attributes: %v", full.Spans[0].Attributes)
	}
	// The failing span's exception event is on it at full detail.
	var exception *gen.GetRunOutputSpanEvent
	for _, s := range full.Spans {
		for i, e := range s.Events {
			if e.Name == "exception" && s.ErrorMessage != nil && e.Attributes["exception.message"] == *s.ErrorMessage {
				exception = &s.Events[i]
			}
		}
	}
	if exception == nil || exception.TimeUnixMs <= 0 {
		t.Fatalf("full detail lacks the exception event: %+v", full.Spans)
	}
	_, err = f.GetRun(ctx, defaults(gen.GetRunInput{ID: "nope"}))
	wantCode(t, err, gen.ErrorCodeRunNotFound)
}

func TestGetRecentErrorsCountsOccurrencesAndGroupsByFingerprint(t *testing.T) {
	f, d, _ := telemetryFlows(t)
	out, err := f.GetRecentErrors(context.Background(), defaults(gen.GetRecentErrorsInput{Limit: 4}))
	if err != nil {
		t.Fatal(err)
	}
	want := d.ExpectErrors(telemetry.ErrorsQuery{Window: lastHour()})
	if out.Count != want.Events || want.Events != 8 || len(out.Groups) != 4 || *out.Page.Total != 7 || out.Page.NextCursor == nil {
		t.Fatalf("errors %+v", out)
	}
	next, err := f.GetRecentErrors(context.Background(), defaults(gen.GetRecentErrorsInput{Limit: 4, Cursor: out.Page.NextCursor}))
	if err != nil {
		t.Fatal(err)
	}
	if len(next.Groups) != 3 || next.Page.NextCursor != nil || next.Groups[0].Fingerprint == out.Groups[0].Fingerprint {
		t.Fatalf("second page %+v", next)
	}
}

func TestGetLastJobResult(t *testing.T) {
	f, _, _ := telemetryFlows(t)
	ctx := context.Background()
	out, err := f.GetLastJobResult(ctx, defaults(gen.GetLastJobResultInput{JobName: ptr("nightly-report")}))
	if err != nil {
		t.Fatal(err)
	}
	if !out.Found || *out.Status != gen.RunStatusOk || *out.Outcome != "succeeded" || *out.ExitCode != 0 || out.Previous == nil || out.Previous.Status != gen.RunStatusError {
		t.Fatalf("last job %+v", out)
	}
	none, err := f.GetLastJobResult(ctx, defaults(gen.GetLastJobResultInput{JobName: ptr("no-such-job")}))
	if err != nil {
		t.Fatal(err)
	}
	if none.Found || !slices.Equal(none.KnownJobs, []string{"cleanup", "nightly-report", "reindex"}) || none.Hint == nil {
		t.Fatalf("an unknown job answers %+v, want the known jobs", none)
	}
	quiet, err := f.GetLastJobResult(ctx, defaults(gen.GetLastJobResultInput{Window: "1m"}))
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(quiet); string(b) != `{"found":false}` {
		t.Fatalf("no job in the window answers %s, want exactly {\"found\":false}", b)
	}
}

func TestAnalyzeServicePerformance(t *testing.T) {
	f, d, _ := telemetryFlows(t)
	ctx := context.Background()
	out, err := f.AnalyzeServicePerformance(ctx, defaults(gen.AnalyzeServicePerformanceInput{Service: "checkout",
		CompareTo: &gen.AnalyzeServicePerformanceInputCompareTo{Window: "15m", EndAgo: "30m"}}))
	if err != nil {
		t.Fatal(err)
	}
	want := d.ExpectPerformance(telemetry.PerformanceQuery{Service: "checkout", Window: lastHour()})
	// 30 requests and the orphan span: entry spans only, not middleware, queries or steps.
	if out.SampleCount != want.SampleCount || want.SampleCount != 31 || out.P95DurationMs != want.P95Ms ||
		out.ErrorRate != round4(float64(want.ErrorCount)/float64(want.SampleCount)) {
		t.Fatalf("performance %+v, want %+v", out, want)
	}
	if want.LastMs-want.FirstMs < 30*60000 || out.TrafficFromUnixMs == nil || *out.TrafficFromUnixMs != want.FirstMs ||
		out.TrafficToUnixMs == nil || *out.TrafficToUnixMs != want.LastMs ||
		out.ThroughputPerMinute != round4(31/(float64(want.LastMs-want.FirstMs)/60000)) {
		t.Fatalf("throughput %v over %v..%v, want 31 over the fixture's %d..%d", out.ThroughputPerMinute,
			out.TrafficFromUnixMs, out.TrafficToUnixMs, want.FirstMs, want.LastMs)
	}
	if c := out.Comparison; c == nil || c.BeforeSamples != 5 || c.AfterSamples != 31 || c.P95 == nil || c.P95.Before == 0 || c.P95.After != out.P95DurationMs || c.Note != nil {
		t.Fatalf("comparison %+v", out.Comparison)
	}
	empty, err := f.AnalyzeServicePerformance(ctx, defaults(gen.AnalyzeServicePerformanceInput{Service: "checkout",
		CompareTo: &gen.AnalyzeServicePerformanceInputCompareTo{Window: "15m", EndAgo: "6d"}}))
	if err != nil {
		t.Fatal(err)
	}
	if c := empty.Comparison; c == nil || c.BeforeSamples != 0 || c.Note == nil || c.P95 != nil || c.Average != nil {
		t.Fatalf("a comparison with an empty window %+v, want a note and no numbers", empty.Comparison)
	}
	op, err := f.AnalyzeServicePerformance(ctx, defaults(gen.AnalyzeServicePerformanceInput{Service: "checkout", Operation: ptr("no-such-op")}))
	if err != nil {
		t.Fatal(err)
	}
	if op.SampleCount != 0 || !slices.Equal(op.KnownOperations, []string{"GET /orders/{id}", "retry worker"}) || op.Hint == nil {
		t.Fatalf("an unknown operation answers %+v, want the known ones", op)
	}
	unknown, err := f.AnalyzeServicePerformance(ctx, defaults(gen.AnalyzeServicePerformanceInput{Service: "nope"}))
	if err != nil {
		t.Fatal(err)
	}
	if unknown.SampleCount != 0 || unknown.Found == nil || *unknown.Found || len(unknown.KnownServices) != 4 || unknown.Hint == nil {
		t.Fatalf("unknown service %+v", unknown)
	}
}

func TestAnalyzeDBBottlenecks(t *testing.T) {
	f, _, _ := telemetryFlows(t)
	out, err := f.AnalyzeDBBottlenecks(context.Background(), defaults(gen.AnalyzeDBBottlenecksInput{Window: "1h", System: ptr("mysql")}))
	if err != nil {
		t.Fatal(err)
	}
	if out.SampleCount != 4 || len(out.Operations) != 1 || out.Operations[0].Operation != nil || *out.Operations[0].Statement != "UPDATE accounts SET balance = balance - ? WHERE id = ?" ||
		out.Operations[0].ShareOfTotal != 1 || out.Operations[0].ErrorCount != 1 || *out.Page.Total != 1 {
		t.Fatalf("db %+v", out)
	}
	all, err := f.AnalyzeDBBottlenecks(context.Background(), defaults(gen.AnalyzeDBBottlenecksInput{}))
	if err != nil {
		t.Fatal(err)
	}
	// The connection-pool spans run no query and are not counted; the query shows its
	// normalized statement.
	if all.SampleCount != 38 || all.Operations[0].Statement == nil || *all.Operations[0].Statement != "SELECT * FROM orders WHERE id = ?" {
		t.Fatalf("db %+v", all)
	}
	none, err := f.AnalyzeDBBottlenecks(context.Background(), defaults(gen.AnalyzeDBBottlenecksInput{System: ptr("oracle")}))
	if err != nil {
		t.Fatal(err)
	}
	if none.SampleCount != 0 || !slices.Equal(none.KnownSystems, []string{"mysql", "postgresql", "redis"}) {
		t.Fatalf("an unknown system answers %+v, want the known ones", none)
	}
}

// A trace larger than get_run's read cap: the answer reads only the cap, says so in
// scan.limited, and reports the true span count, not the cap.
func TestGetRunOfAHugeTraceReportsTheTrueTotal(t *testing.T) {
	const n = 100_000
	b := &memory.Backend{}
	trace := "0af7651916cd43dd8448eb211c80319c"
	start := fixtureNow.Add(-time.Minute).UnixNano()
	rows := make([]telemetry.SpanRow, 0, n)
	rows = append(rows, telemetry.SpanRow{TraceID: trace, SpanID: "0000000000000001", Name: "import", Kind: telemetry.KindServer,
		Service: "batch", StartNs: start, DurationNs: int64(time.Second), StatusCode: telemetry.CodeUnset})
	for i := 2; i <= n; i++ {
		rows = append(rows, telemetry.SpanRow{TraceID: trace, SpanID: fmt.Sprintf("%016x", i), ParentSpanID: "0000000000000001",
			Name: "row", Kind: telemetry.KindInternal, Service: "batch", StartNs: start + int64(i), DurationNs: 1000, StatusCode: telemetry.CodeUnset})
	}
	b.AddSpans(rows...)
	f := New(Deps{Telemetry: engine.New(b, nil), Now: func() time.Time { return fixtureNow }})
	out, err := f.GetRun(context.Background(), defaults(gen.GetRunInput{ID: trace}))
	if err != nil {
		t.Fatal(err)
	}
	if *out.Page.Total != n || !out.Scan.Limited || !out.Page.Truncated || out.OmittedSpans != int64(n-len(out.Spans)) {
		t.Fatalf("page %+v scan %+v omitted %d, want total %d and a limited scan", out.Page, out.Scan, out.OmittedSpans, n)
	}
	if !strings.Contains(out.Summary, "ran 100000 spans") {
		t.Fatalf("summary %q does not report the true span count", out.Summary)
	}
}
