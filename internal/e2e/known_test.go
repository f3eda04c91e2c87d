package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/runlens/runlens/gen"
	"github.com/runlens/runlens/internal/flows"
	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/fixture"
)

// window is the window a tool covers for a duration string, as the flows resolve it: the last
// d, ending one millisecond past now.
func window(d *fixture.Dataset, dur time.Duration) telemetry.Window {
	now := d.Now.UnixMilli()
	return telemetry.Window{StartMs: now - dur.Milliseconds(), EndMs: now + 1}
}

// checkKnownAnswers holds a handful of fields to the fixture's own expectations, computed from
// its model without any SQL, so four ways agreeing on a wrong answer still fails.
func checkKnownAnswers(t *testing.T, d *fixture.Dataset, f *flows.Flows) {
	t.Helper()
	ctx := context.Background()
	day := window(d, 24*time.Hour)

	status, err := f.GetAppStatus(ctx, defaults(gen.GetAppStatusInput{Window: "1d"}))
	if err != nil {
		t.Fatalf("get_app_status: %v", err)
	}
	wantStatus := d.ExpectStatus(telemetry.StatusQuery{Window: day})
	if got := status.Counts; got.Spans != wantStatus.Spans || got.Logs != wantStatus.Logs ||
		got.Errors != wantStatus.Errors || got.Services != wantStatus.Services {
		t.Errorf("get_app_status counts %+v, want spans %d logs %d errors %d services %d",
			got, wantStatus.Spans, wantStatus.Logs, wantStatus.Errors, wantStatus.Services)
	}

	runs, err := f.ListRuns(ctx, defaults(gen.ListRunsInput{Window: "1d", Limit: 100}))
	if err != nil {
		t.Fatalf("list_runs: %v", err)
	}
	wantRuns := d.ExpectRuns(telemetry.RunsQuery{Window: day, Limit: 100})
	if runs.Page.Total == nil || *runs.Page.Total != int64(wantRuns.Total) || len(runs.Runs) != len(wantRuns.Runs) {
		t.Errorf("list_runs returned %d of %v runs, want %d of %d", len(runs.Runs), runs.Page.Total, len(wantRuns.Runs), wantRuns.Total)
	} else {
		for i, r := range wantRuns.Runs {
			if got := runs.Runs[i]; got.ID != r.ID || string(got.Status) != r.Status || got.Domain != r.Domain || got.Service != r.Service {
				t.Errorf("list_runs run %d is %s (%s, %s, %s), want %s (%s, %s, %s)",
					i, got.ID, got.Status, got.Domain, got.Service, r.ID, r.Status, r.Domain, r.Service)
			}
		}
	}

	perf, err := f.AnalyzeServicePerformance(ctx, defaults(gen.AnalyzeServicePerformanceInput{Service: "checkout"}))
	if err != nil {
		t.Fatalf("analyze_service_performance: %v", err)
	}
	wantPerf := d.ExpectPerformance(telemetry.PerformanceQuery{Service: "checkout", Window: window(d, time.Hour)})
	if perf.SampleCount != wantPerf.SampleCount || perf.P95DurationMs != wantPerf.P95Ms || perf.P99DurationMs != wantPerf.P99Ms {
		t.Errorf("checkout performance: %d samples, p95 %v ms, p99 %v ms; want %d, %v, %v",
			perf.SampleCount, perf.P95DurationMs, perf.P99DurationMs, wantPerf.SampleCount, wantPerf.P95Ms, wantPerf.P99Ms)
	}

	db, err := f.AnalyzeDBBottlenecks(ctx, defaults(gen.AnalyzeDBBottlenecksInput{Window: "1h"}))
	if err != nil {
		t.Fatalf("analyze_db_bottlenecks: %v", err)
	}
	wantDB := d.ExpectDB(telemetry.DBQuery{Window: window(d, time.Hour)})
	if len(wantDB.Operations) == 0 {
		t.Fatal("the fixture expects no database operation in the last hour")
	}
	if len(db.Operations) == 0 || opLabel(db.Operations[0]) != wantDB.Operations[0].Label || db.SampleCount != wantDB.SampleCount {
		t.Errorf("analyze_db_bottlenecks: %d samples, operations %+v; want %d samples, top %q",
			db.SampleCount, db.Operations, wantDB.SampleCount, wantDB.Operations[0].Label)
	}

	errs, err := f.GetRecentErrors(ctx, defaults(gen.GetRecentErrorsInput{Window: "1d", Limit: 100}))
	if err != nil {
		t.Fatalf("get_recent_errors: %v", err)
	}
	wantErrs := d.ExpectErrors(telemetry.ErrorsQuery{Window: day})
	if len(wantErrs.Groups) == 0 {
		t.Fatal("the fixture expects no error in the last day")
	}
	if errs.Count != wantErrs.Events || len(errs.Groups) != len(wantErrs.Groups) ||
		errs.Groups[0].SampleMessage != wantErrs.Groups[0].SampleMessage || errs.Groups[0].Count != wantErrs.Groups[0].Count {
		t.Errorf("get_recent_errors: %d events in %d groups, first %+v; want %d in %d, first %q ×%d",
			errs.Count, len(errs.Groups), errs.Groups, wantErrs.Events, len(wantErrs.Groups), wantErrs.Groups[0].SampleMessage, wantErrs.Groups[0].Count)
	}

	job, err := f.GetLastJobResult(ctx, defaults(gen.GetLastJobResultInput{JobName: ptr("nightly-report")}))
	if err != nil {
		t.Fatalf("get_last_job_result: %v", err)
	}
	wantJob := d.ExpectLastJob(telemetry.JobQuery{Window: day, JobName: "nightly-report"})
	if !job.Found || job.Status == nil || string(*job.Status) != wantJob.Status || job.ExitCode == nil || int64(*job.ExitCode) != *wantJob.ExitCode ||
		job.Previous == nil || string(job.Previous.Status) != wantJob.Previous {
		t.Errorf("get_last_job_result %+v, want %+v", job, wantJob)
	}

	for _, r := range d.Runs {
		if r.ErrorCount == 0 {
			continue
		}
		got, err := f.GetRun(ctx, defaults(gen.GetRunInput{ID: r.TraceID, MaxSpans: 200}))
		if err != nil {
			t.Fatalf("get_run %s: %v", r.TraceID, err)
		}
		want, _ := d.ExpectRun(r.ID)
		if got.ID != r.ID || len(got.Spans) != len(want.Spans) || len(got.Logs) != len(want.Logs) ||
			got.ErrorMessage == nil || *got.ErrorMessage != want.ErrorMessage {
			t.Errorf("get_run %s: id %s, %d spans, %d logs, error %v; want %s, %d, %d, %q",
				r.TraceID, got.ID, len(got.Spans), len(got.Logs), got.ErrorMessage, r.ID, len(want.Spans), len(want.Logs), want.ErrorMessage)
		}
	}
}

// opLabel is an operation's label; the answer leaves it out when it is the statement.
func opLabel(op gen.AnalyzeDBBottlenecksOutputOperation) string {
	if op.Operation != nil {
		return *op.Operation
	}
	if op.Statement != nil {
		return *op.Statement
	}
	return ""
}
