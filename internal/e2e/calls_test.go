package e2e

import (
	"context"
	"slices"
	"time"

	"github.com/runlens/runlens/gen"
	"github.com/runlens/runlens/internal/flows"
	"github.com/runlens/runlens/internal/telemetry/fixture"
)

// call is one telemetry tool call, or a chain of calls following nextCursor; it returns the
// typed answer (a slice of pages for a chain) or the error the tool gave.
type call struct {
	name string
	do   func(ctx context.Context, f *flows.Flows) (any, error)
	// fails is the error code the call must answer with; empty when it must succeed.
	fails gen.ErrorCode
}

// failsWith returns c expecting the tool error code.
func (c call) failsWith(code gen.ErrorCode) call {
	c.fails = code
	return c
}

// method is a gen.Flows method taken as a function of its receiver, e.g. (*flows.Flows).ListRuns.
type method[In, Out any] func(*flows.Flows, context.Context, In) (Out, error)

func one[In, Out any](name string, m method[In, Out], in In) call {
	return call{name: name, do: func(ctx context.Context, f *flows.Flows) (any, error) { return m(f, ctx, in) }}
}

// maxPages bounds a cursor chain, so a cursor that never ends fails instead of hanging.
const maxPages = 50

// paged follows the answer's nextCursor to the last page and answers every page.
func paged[In, Out any](name string, m method[In, Out], in In, withCursor func(In, *string) In, next func(Out) *string) call {
	return call{name: name, do: func(ctx context.Context, f *flows.Flows) (any, error) {
		var pages []Out
		in := in // each chain starts from the first page
		for range maxPages {
			out, err := m(f, ctx, in)
			if err != nil {
				return pages, err
			}
			pages = append(pages, out)
			cur := next(out)
			if cur == nil {
				return pages, nil
			}
			in = withCursor(in, cur)
		}
		return pages, errTooManyPages
	}}
}

type pagingError string

func (e pagingError) Error() string { return string(e) }

const errTooManyPages = pagingError("the cursor chain did not end")

func ptr[T any](v T) *T { return &v }

// services lists the service names the fixture's spans report, "unknown" for the spans sent
// without service.name.
func services(d *fixture.Dataset) []string {
	var out []string
	for _, s := range d.Spans {
		name := s.Service
		if name == "" {
			name = "unknown"
		}
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// telemetryCalls covers every telemetry tool: default and explicit windows, since, every
// filter, every detail level, cursors, and the not-found answers.
func telemetryCalls(d *fixture.Dataset) []call {
	since2h := d.Now.Add(-2 * time.Hour).UnixMilli()
	calls := []call{
		one("get_app_status over the default window", (*flows.Flows).GetAppStatus, defaults(gen.GetAppStatusInput{})),
		one("get_app_status over the last day", (*flows.Flows).GetAppStatus, defaults(gen.GetAppStatusInput{Window: "1d"})),
		one("get_app_status full since two hours ago", (*flows.Flows).GetAppStatus, defaults(gen.GetAppStatusInput{SinceUnixMs: &since2h, Detail: gen.DetailFull})),
		one("get_app_status summary over the last hour", (*flows.Flows).GetAppStatus, defaults(gen.GetAppStatusInput{Window: "1h", Detail: gen.DetailSummary})),
		one("get_app_status over a quiet minute", (*flows.Flows).GetAppStatus, defaults(gen.GetAppStatusInput{Window: "1m"})),

		one("list_runs over the default window", (*flows.Flows).ListRuns, defaults(gen.ListRunsInput{})),
		one("list_runs of the last day in one page", (*flows.Flows).ListRuns, defaults(gen.ListRunsInput{Window: "1d", Limit: 100})),
		paged("list_runs of the last day five at a time", (*flows.Flows).ListRuns, defaults(gen.ListRunsInput{Window: "1d", Limit: 5}),
			func(in gen.ListRunsInput, c *string) gen.ListRunsInput { in.Cursor = c; return in },
			func(out gen.ListRunsOutput) *string { return out.Page.NextCursor }),
		one("list_runs with status error", (*flows.Flows).ListRuns, defaults(gen.ListRunsInput{Window: "1d", Status: ptr(gen.RunStatusError)})),
		one("list_runs with status ok", (*flows.Flows).ListRuns, defaults(gen.ListRunsInput{Window: "1d", Status: ptr(gen.RunStatusOk)})),
		one("list_runs summary since two hours ago", (*flows.Flows).ListRuns, defaults(gen.ListRunsInput{SinceUnixMs: &since2h, Detail: gen.DetailSummary})),
		one("list_runs full over the last day", (*flows.Flows).ListRuns, defaults(gen.ListRunsInput{Window: "1d", Detail: gen.DetailFull, Limit: 100})),

		one("get_recent_errors over the default window", (*flows.Flows).GetRecentErrors, defaults(gen.GetRecentErrorsInput{})),
		one("get_recent_errors over the last day", (*flows.Flows).GetRecentErrors, defaults(gen.GetRecentErrorsInput{Window: "1d"})),
		paged("get_recent_errors of the last day two groups at a time", (*flows.Flows).GetRecentErrors, defaults(gen.GetRecentErrorsInput{Window: "1d", Limit: 2}),
			func(in gen.GetRecentErrorsInput, c *string) gen.GetRecentErrorsInput { in.Cursor = c; return in },
			func(out gen.GetRecentErrorsOutput) *string { return out.Page.NextCursor }),
		one("get_recent_errors summary", (*flows.Flows).GetRecentErrors, defaults(gen.GetRecentErrorsInput{Window: "1d", Detail: gen.DetailSummary})),
		one("get_recent_errors full", (*flows.Flows).GetRecentErrors, defaults(gen.GetRecentErrorsInput{Window: "1d", Detail: gen.DetailFull})),

		one("get_last_job_result by name", (*flows.Flows).GetLastJobResult, defaults(gen.GetLastJobResultInput{JobName: ptr("nightly-report")})),
		one("get_last_job_result by id", (*flows.Flows).GetLastJobResult, defaults(gen.GetLastJobResultInput{JobID: ptr("nightly-report")})),
		one("get_last_job_result by id over a week", (*flows.Flows).GetLastJobResult, defaults(gen.GetLastJobResultInput{JobID: ptr("nightly-report"), Window: "7d"})),
		one("get_last_job_result by name since two hours ago", (*flows.Flows).GetLastJobResult, defaults(gen.GetLastJobResultInput{JobName: ptr("nightly-report"), SinceUnixMs: &since2h})),
		one("get_last_job_result of any job of the worker", (*flows.Flows).GetLastJobResult, defaults(gen.GetLastJobResultInput{Service: ptr("worker")})),
		one("get_last_job_result of a job outside the window", (*flows.Flows).GetLastJobResult, defaults(gen.GetLastJobResultInput{JobName: ptr("cleanup"), Window: "10m"})),
		one("get_last_job_result of an unknown job", (*flows.Flows).GetLastJobResult, defaults(gen.GetLastJobResultInput{JobName: ptr("no-such-job")})),

		one("analyze_service_performance of an unknown service", (*flows.Flows).AnalyzeServicePerformance, defaults(gen.AnalyzeServicePerformanceInput{Service: "no-such-service"})),
		one("analyze_service_performance of one operation", (*flows.Flows).AnalyzeServicePerformance,
			defaults(gen.AnalyzeServicePerformanceInput{Service: "checkout", Window: "1h", Operation: ptr("SELECT orders")})),
		one("analyze_service_performance compared with an earlier window", (*flows.Flows).AnalyzeServicePerformance,
			defaults(gen.AnalyzeServicePerformanceInput{Service: "checkout", CompareTo: &gen.AnalyzeServicePerformanceInputCompareTo{Window: "15m", EndAgo: "30m"}})),
		one("analyze_service_performance of one operation compared", (*flows.Flows).AnalyzeServicePerformance,
			defaults(gen.AnalyzeServicePerformanceInput{Service: "checkout", Window: "30m", Operation: ptr("GET /orders/{id}"),
				CompareTo: &gen.AnalyzeServicePerformanceInputCompareTo{Window: "30m", EndAgo: "30m"}})),
		one("analyze_service_performance with one top operation", (*flows.Flows).AnalyzeServicePerformance,
			defaults(gen.AnalyzeServicePerformanceInput{Service: "billing", Window: "1h", Limit: 1})),

		one("analyze_db_bottlenecks over the default window", (*flows.Flows).AnalyzeDBBottlenecks, defaults(gen.AnalyzeDBBottlenecksInput{})),
		one("analyze_db_bottlenecks over the last hour", (*flows.Flows).AnalyzeDBBottlenecks, defaults(gen.AnalyzeDBBottlenecksInput{Window: "1h"})),
		one("analyze_db_bottlenecks of billing", (*flows.Flows).AnalyzeDBBottlenecks, defaults(gen.AnalyzeDBBottlenecksInput{Window: "1h", Service: ptr("billing")})),
		one("analyze_db_bottlenecks with the top operation only", (*flows.Flows).AnalyzeDBBottlenecks, defaults(gen.AnalyzeDBBottlenecksInput{Window: "1d", Limit: 1})),
		one("analyze_db_bottlenecks full", (*flows.Flows).AnalyzeDBBottlenecks, defaults(gen.AnalyzeDBBottlenecksInput{SinceUnixMs: &since2h, Detail: gen.DetailFull})),
	}
	for _, system := range []string{"postgresql", "mysql", "redis", "no-such-system"} {
		calls = append(calls, one("analyze_db_bottlenecks of system "+system, (*flows.Flows).AnalyzeDBBottlenecks,
			defaults(gen.AnalyzeDBBottlenecksInput{Window: "1h", System: ptr(system)})))
	}
	for _, svc := range services(d) {
		calls = append(calls,
			one("get_app_status of service "+svc, (*flows.Flows).GetAppStatus, defaults(gen.GetAppStatusInput{Service: ptr(svc), Window: "1d"})),
			one("list_runs of service "+svc, (*flows.Flows).ListRuns, defaults(gen.ListRunsInput{Service: ptr(svc), Window: "1d"})),
			one("get_recent_errors of service "+svc, (*flows.Flows).GetRecentErrors, defaults(gen.GetRecentErrorsInput{Service: ptr(svc), Window: "1d"})),
			one("analyze_service_performance of "+svc+" over the default window", (*flows.Flows).AnalyzeServicePerformance,
				defaults(gen.AnalyzeServicePerformanceInput{Service: svc})),
			one("analyze_service_performance of "+svc+" over the last day", (*flows.Flows).AnalyzeServicePerformance,
				defaults(gen.AnalyzeServicePerformanceInput{Service: svc, Window: "1d", Limit: 20})),
			one("analyze_db_bottlenecks of service "+svc, (*flows.Flows).AnalyzeDBBottlenecks,
				defaults(gen.AnalyzeDBBottlenecksInput{Service: ptr(svc), Window: "1d"})),
		)
	}
	for _, domain := range d.Conventions.DomainNames() {
		calls = append(calls,
			one("list_runs of domain "+domain, (*flows.Flows).ListRuns, defaults(gen.ListRunsInput{Domain: ptr(domain), Window: "1d"})),
			one("get_recent_errors of domain "+domain, (*flows.Flows).GetRecentErrors, defaults(gen.GetRecentErrorsInput{Domain: ptr(domain), Window: "1d"})),
		)
	}
	for _, r := range d.Runs {
		calls = append(calls,
			one("get_run "+r.ID+" in full", (*flows.Flows).GetRun, defaults(gen.GetRunInput{ID: r.ID, Detail: gen.DetailFull})),
			one("get_run by trace id "+r.TraceID, (*flows.Flows).GetRun, defaults(gen.GetRunInput{ID: r.TraceID})),
		)
		if r.ErrorCount > 0 {
			calls = append(calls,
				one("get_run "+r.ID+" one level deep", (*flows.Flows).GetRun, defaults(gen.GetRunInput{ID: r.ID, MaxDepth: 1})),
				one("get_run "+r.ID+" two spans at most", (*flows.Flows).GetRun, defaults(gen.GetRunInput{ID: r.ID, MaxSpans: 2})),
				one("get_run "+r.ID+" summary", (*flows.Flows).GetRun, defaults(gen.GetRunInput{ID: r.ID, Detail: gen.DetailSummary})),
			)
		}
	}
	calls = append(calls, one("get_run of an unknown id", (*flows.Flows).GetRun, defaults(gen.GetRunInput{ID: "0123456789abcdef0123456789abcdef"})).
		failsWith(gen.ErrorCodeRunNotFound))
	return calls
}
