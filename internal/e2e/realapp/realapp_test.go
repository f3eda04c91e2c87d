package realapp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/runlens/runlens/internal/app"
	"github.com/runlens/runlens/internal/config"
	"github.com/runlens/runlens/internal/e2e/corpus/answers"
	"github.com/runlens/runlens/internal/e2e/dbservers"
	"github.com/runlens/runlens/internal/e2e/realapp"
	"github.com/runlens/runlens/internal/server"
)

// unavailable fails under CI=true, where PostgreSQL is installed by .ci/install-deps and its
// absence is a broken build; elsewhere the test is skipped with the reason.
func unavailable(t *testing.T, err error) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("PostgreSQL is required under CI=true: %v", err)
	}
	t.Skipf("PostgreSQL is not available: %v", err)
}

// startDatabase starts a throwaway PostgreSQL cluster, stopped when the test ends however it
// ends, and seeds the shop database in it.
func startDatabase(t *testing.T, ctx context.Context) string {
	t.Helper()
	bin, err := dbservers.FindPGBin(os.Getenv)
	if err != nil {
		unavailable(t, err)
	}
	pg, err := dbservers.StartPostgres(ctx, bin)
	if err != nil {
		unavailable(t, err)
	}
	t.Cleanup(func() {
		if err := pg.Stop(); err != nil {
			t.Errorf("stop PostgreSQL: %v", err)
		}
	})
	dbURL, err := realapp.Seed(ctx, pg.URL)
	if err != nil {
		t.Fatalf("seed the shop database: %v\nserver log:\n%s", err, pg.ServerLog())
	}
	return dbURL
}

// tools is runlens's MCP tool layer, in process: the handler `runlens serve` dispatches every
// tools/call to (argument validation, flows, shaping, redaction, output validation).
type tools = answers.Tools

// TestRealApp runs a shop built with real instrumentation libraries — otelhttp on both ends of
// two services, otelpgx on pgx against a real PostgreSQL, the otelslog bridge — exported by
// the OpenTelemetry SDK to runlens's receiver, and holds every telemetry tool's answer to what
// the workload itself counted.
func TestRealApp(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dbURL := startDatabase(t, ctx)

	dir := t.TempDir()
	cfg, err := app.LoadConfig(dir, func(string) string { return "" }, config.Overrides{ProjectRoot: dir, Receiver: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	a, err := app.New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	rcv, err := a.ListenReceiver(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatalf("start the receiver: %v", err)
	}
	truth, err := realapp.Run(ctx, realapp.Options{Endpoint: "http://" + rcv.Addr, DatabaseURL: dbURL, Seed: 7})
	if err != nil {
		_ = rcv.Shutdown(ctx)
		t.Fatalf("run the workload: %v", err)
	}
	if err := rcv.Shutdown(ctx); err != nil {
		t.Fatalf("stop the receiver: %v", err)
	}
	if bad := truth.Check(); len(bad) > 0 {
		t.Fatalf("the workload's own record is inconsistent, so it cannot judge runlens:\n  %s", strings.Join(bad, "\n  "))
	}
	logTruth(t, truth)
	tl := tools{H: a.Handler(server.ProfileFull)}

	t.Run("get_app_status counts one error per failure and fails", func(t *testing.T) { checkAppStatus(t, tl, truth) })
	t.Run("get_recent_errors has one occurrence per failure and one group per kind", func(t *testing.T) { checkRecentErrors(t, tl, truth) })
	t.Run("list_runs says ok or error and keeps the app's word in outcome", func(t *testing.T) { checkRuns(t, tl, truth) })
	t.Run("list_runs with status error returns exactly the failed runs", func(t *testing.T) { checkErrorRuns(t, tl, truth) })
	t.Run("get_last_job_result reports the failed last run with its exit code", func(t *testing.T) { checkLastJob(t, tl, truth) })
	t.Run("analyze_service_performance covers the requests the shop served", func(t *testing.T) { checkShopPerformance(t, tl, truth) })
	t.Run("analyze_service_performance keeps every failing operation with limit 1", func(t *testing.T) { checkFailingOperations(t, tl, truth) })
	t.Run("analyze_service_performance of payments counts the charges it served", func(t *testing.T) { checkPaymentsPerformance(t, tl, truth) })
	t.Run("analyze_db_bottlenecks ranks the slow statement first and apart from the fast one", func(t *testing.T) { checkDB(t, tl, truth) })
	t.Run("get_run of a declined checkout shows the middleware chain and the critical path", func(t *testing.T) { checkDeclinedRun(t, tl, truth) })
}

// logTruth writes the workload's numbers, so a failure report shows what was expected.
func logTruth(t *testing.T, tr *realapp.Truth) {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "requests %d (failed %d), runs %d, occurrences %d, charges %d\n", len(tr.Requests), tr.FailedRequests(), tr.Runs(), tr.Occurrences(), tr.ChargeRequests)
	for _, k := range []realapp.Kind{realapp.KindOrderNotFound, realapp.KindPaymentDeclined, realapp.KindPanic, realapp.KindJobFailed, realapp.KindLoneLog} {
		fmt.Fprintf(&b, "  %-16s %d\n", k, len(tr.FailuresOf(k)))
	}
	for route, s := range tr.Routes() {
		fmt.Fprintf(&b, "  route %-24s %3d requests, %d failed\n", route, s.Count, s.Errors)
	}
	for sql, s := range tr.Statements() {
		fmt.Fprintf(&b, "  statement %4d× %9v %v %.50q\n", s.Count, s.Total.Round(time.Microsecond), s.Services, sql)
	}
	fmt.Fprintf(&b, "  spans %v, logs %v, pool spans %v, queries %d\n", tr.Spans, tr.Logs, tr.PoolSpans, len(tr.Queries))
	t.Log(b.String())
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func checkAppStatus(t *testing.T, tl tools, tr *realapp.Truth) {
	var got appStatus
	tl.Call(t, "get_app_status", nil, &got)
	if got.Status != "fail" {
		t.Errorf("status = %q, want fail: the window holds %d failures", got.Status, tr.Occurrences())
	}
	if got.Counts.Errors != tr.Occurrences() {
		t.Errorf("counts.errors = %d, want %d occurrences (%d failed requests + 1 failed job run + 1 lone error log)",
			got.Counts.Errors, tr.Occurrences(), tr.FailedRequests())
	}
	if got.Counts.Services != len(tr.Services()) {
		t.Errorf("counts.services = %d, want %d (%v)", got.Counts.Services, len(tr.Services()), tr.Services())
	}
	if got.Counts.Spans != sum(tr.Spans) {
		t.Errorf("counts.spans = %d, want the %d spans the SDKs emitted", got.Counts.Spans, sum(tr.Spans))
	}
	if got.Counts.Logs != sum(tr.Logs) {
		t.Errorf("counts.logs = %d, want the %d log records the SDKs emitted", got.Counts.Logs, sum(tr.Logs))
	}
	for _, svc := range tr.Services() {
		i := slices.IndexFunc(got.Services, func(s serviceStatus) bool { return s.Service == svc })
		if i < 0 {
			t.Errorf("services has no entry for %s: %+v", svc, got.Services)
			continue
		}
		if got.Services[i].Spans != tr.Spans[svc] {
			t.Errorf("services[%s].spans = %d, want %d", svc, got.Services[i].Spans, tr.Spans[svc])
		}
	}
	want := map[string][2]int{"http": {len(tr.Requests), tr.FailedRequests()}, "job": {len(tr.Jobs), 1}}
	for _, d := range got.Domains {
		w, ok := want[d.Domain]
		if !ok {
			continue
		}
		delete(want, d.Domain)
		if d.SeenCount != w[0] || d.ErrorCount != w[1] {
			t.Errorf("domain %s: seen %d, errors %d; want seen %d, errors %d", d.Domain, d.SeenCount, d.ErrorCount, w[0], w[1])
		}
	}
	for d := range want {
		t.Errorf("domains has no %s entry: %+v", d, got.Domains)
	}
}

// kindGroup says how to recognise a failure kind's group in get_recent_errors.
type kindGroup struct {
	kind    realapp.Kind
	service string
	domain  string // "" when the kind has no run (the lone log)
	phrase  string
}

var kindGroups = []kindGroup{
	{realapp.KindOrderNotFound, realapp.ServiceShop, "http", "not found"},
	{realapp.KindPaymentDeclined, realapp.ServicePayments, "http", "payment declined"},
	{realapp.KindPanic, realapp.ServiceShop, "http", "index out of range"},
	{realapp.KindJobFailed, realapp.ServiceWorker, "job", "export failed"},
	{realapp.KindLoneLog, realapp.ServiceShop, "", "config reload failed"},
}

func checkRecentErrors(t *testing.T, tl tools, tr *realapp.Truth) {
	var got recentErrors
	tl.Call(t, "get_recent_errors", map[string]any{"limit": 100}, &got)
	if got.Count != tr.Occurrences() {
		t.Errorf("count = %d, want %d occurrences: %d failed requests, 1 failed job run, 1 lone error log",
			got.Count, tr.Occurrences(), tr.FailedRequests())
	}
	if len(got.Groups) != len(kindGroups) {
		t.Errorf("%d groups, want %d, one per failure kind:\n%s", len(got.Groups), len(kindGroups), describeGroups(got.Groups))
	}
	total := 0
	for i, g := range got.Groups {
		total += g.Count
		if strings.TrimSpace(g.SampleMessage) == "" {
			t.Errorf("group %d (%s/%s, %d×) has an empty sampleMessage", i, g.Service, g.Domain, g.Count)
		}
	}
	if total != got.Count {
		t.Errorf("the groups add up to %d, count says %d", total, got.Count)
	}
	for _, kg := range kindGroups {
		failures := tr.FailuresOf(kg.kind)
		var matched []errorGroup
		for _, g := range got.Groups {
			if g.Service == kg.service && strings.Contains(strings.ToLower(g.SampleMessage), kg.phrase) {
				matched = append(matched, g)
			}
		}
		if len(matched) != 1 {
			t.Errorf("%s: want one group of %s whose message says %q, got %d:\n%s", kg.kind, kg.service, kg.phrase, len(matched), describeGroups(matched))
			continue
		}
		g := matched[0]
		if g.Count != len(failures) {
			t.Errorf("%s: group count = %d, want %d", kg.kind, g.Count, len(failures))
		}
		if kg.domain == "" {
			continue
		}
		if g.Domain != kg.domain {
			t.Errorf("%s: domain = %q, want %q", kg.kind, g.Domain, kg.domain)
		}
		if len(g.RelatedRunIDs) == 0 {
			t.Errorf("%s: relatedRunIds is empty", kg.kind)
		}
		traces := map[string]bool{}
		for _, f := range failures {
			traces[f.TraceID] = true
		}
		// The otel preset keys a job's run by its trace; a configuration that keys it by
		// job.id names the run so instead. Either is that run.
		for _, j := range tr.Jobs {
			if traces[j.TraceID] {
				traces[j.ID] = true
			}
		}
		for _, id := range g.RelatedRunIDs {
			if !traces[id] {
				t.Errorf("%s: related run %s is not one of the %d runs that failed so", kg.kind, id, len(failures))
			}
		}
	}
}

func describeGroups(gs []errorGroup) string {
	var b strings.Builder
	for _, g := range gs {
		fmt.Fprintf(&b, "  %3d× %s/%s %q (runs %d)\n", g.Count, g.Service, g.Domain, g.SampleMessage, len(g.RelatedRunIDs))
	}
	return b.String()
}

// allRuns follows list_runs' cursor to the end.
func allRuns(t *testing.T, tl tools, query map[string]any) []run {
	t.Helper()
	var out []run
	args := query
	for range 20 {
		var got runList
		tl.Call(t, "list_runs", args, &got)
		if got.Count != len(got.Runs) {
			t.Errorf("count = %d but %d runs", got.Count, len(got.Runs))
		}
		out = append(out, got.Runs...)
		if got.Page.NextCursor == nil {
			return out
		}
		// A cursor is bound to its query: the next page repeats the arguments.
		args = map[string]any{"cursor": *got.Page.NextCursor}
		for k, v := range query {
			args[k] = v
		}
	}
	t.Fatal("list_runs' cursor chain did not end after 20 pages")
	return nil
}

func checkRuns(t *testing.T, tl tools, tr *realapp.Truth) {
	runs := allRuns(t, tl, map[string]any{"limit": 100})
	if len(runs) != tr.Runs() {
		t.Errorf("%d runs, want %d: %d requests and %d job runs", len(runs), tr.Runs(), len(tr.Requests), len(tr.Jobs))
	}
	failed := map[string]bool{}
	for _, id := range tr.FailedRunTraceIDs() {
		failed[id] = true
	}
	jobs := map[string]realapp.JobRun{}
	for _, j := range tr.Jobs {
		jobs[j.TraceID] = j
	}
	routes := map[string]string{}
	for _, r := range tr.Requests {
		routes[r.TraceID] = r.Route
	}
	wrong := 0
	for _, r := range runs {
		if r.Status != "ok" && r.Status != "error" {
			t.Errorf("run %s (%s) has status %q: want ok or error", r.ID, r.Name, r.Status)
			continue
		}
		if want := map[bool]string{true: "error", false: "ok"}[failed[r.TraceID]]; r.Status != want {
			if wrong++; wrong <= 5 {
				t.Errorf("run %s (%s) has status %q, want %s", r.ID, r.Name, r.Status, want)
			}
		}
		if route, ok := routes[r.TraceID]; ok && (r.Name != route || r.Domain != "http" || r.Service != realapp.ServiceShop) {
			if wrong++; wrong <= 5 {
				t.Errorf("request run %s: name %q, domain %q, service %q; want %s, http, %s", r.ID, r.Name, r.Domain, r.Service, route, realapp.ServiceShop)
			}
		}
		if j, ok := jobs[r.TraceID]; ok {
			if r.Name != realapp.JobName || r.Domain != "job" {
				t.Errorf("job run %s: name %q, domain %q; want %s, job", j.ID, r.Name, r.Domain, realapp.JobName)
			}
			if r.Outcome == nil || *r.Outcome != j.Status {
				t.Errorf("job run %s: outcome %s, want the job's own word %q", j.ID, show(r.Outcome), j.Status)
			}
		}
	}
	if wrong > 5 {
		t.Errorf("… %d wrong runs in all", wrong)
	}
}

func checkErrorRuns(t *testing.T, tl tools, tr *realapp.Truth) {
	runs := allRuns(t, tl, map[string]any{"status": "error", "limit": 100})
	var got []string
	for _, r := range runs {
		got = append(got, r.TraceID)
	}
	slices.Sort(got)
	want := tr.FailedRunTraceIDs()
	if !slices.Equal(got, want) {
		missing, extra := difference(want, got), difference(got, want)
		t.Errorf("status=error returned %d runs, want the %d that failed; missing %d %v, extra %d %v",
			len(got), len(want), len(missing), head(missing), len(extra), head(extra))
	}
	last := tr.LastJob()
	for _, r := range runs {
		if r.TraceID == last.TraceID && (r.Outcome == nil || *r.Outcome != last.Status) {
			t.Errorf("the failed job run's outcome is %s, want %q", show(r.Outcome), last.Status)
		}
	}
}

func checkLastJob(t *testing.T, tl tools, tr *realapp.Truth) {
	var got jobResult
	tl.Call(t, "get_last_job_result", map[string]any{"jobName": realapp.JobName}, &got)
	last := tr.LastJob()
	if !got.Found {
		t.Fatalf("found = false for job %s, which ran %d times", realapp.JobName, len(tr.Jobs))
	}
	eq := func(field string, got *string, want string) {
		if got == nil || *got != want {
			t.Errorf("%s = %s, want %q", field, show(got), want)
		}
	}
	eq("jobName", got.JobName, realapp.JobName)
	eq("jobId", got.JobID, last.ID)
	eq("status", got.Status, "error")
	eq("outcome", got.Outcome, last.Status)
	eq("traceId", got.TraceID, last.TraceID)
	if got.ExitCode == nil || *got.ExitCode != last.ExitCode {
		t.Errorf("exitCode = %s, want %d (sent as the string %q)", show(got.ExitCode), last.ExitCode, fmt.Sprint(last.ExitCode))
	}
	if got.ErrorMessage == nil || !strings.Contains(*got.ErrorMessage, last.Error) {
		t.Errorf("errorMessage = %s, want it to carry %q", show(got.ErrorMessage), last.Error)
	}
	if got.Previous == nil || got.Previous.Status != "ok" {
		t.Errorf("previous = %+v, want status ok: run %s succeeded", got.Previous, tr.Jobs[len(tr.Jobs)-2].ID)
	}
	// Timestamps are epoch milliseconds; the SDK's are nanoseconds.
	near := func(field string, got *int64, want time.Time) {
		if got == nil || math.Abs(float64(*got-want.UnixMilli())) > 1 {
			t.Errorf("%s = %s, want %d (±1 ms)", field, show(got), want.UnixMilli())
		}
	}
	near("startUnixMs", got.StartUnixMs, last.Start)
	near("completedUnixMs", got.CompletedUnixMs, last.End)
	wantMs := float64(last.End.Sub(last.Start)) / 1e6
	if got.DurationMs == nil || math.Abs(*got.DurationMs-wantMs) > 0.01 {
		t.Errorf("durationMs = %s, want %.3f", show(got.DurationMs), wantMs)
	}
}

// msTolerance covers the conversion of nanosecond spans to millisecond floats.
const msTolerance = 0.01

// inBracket checks a duration in ms against [lo, hi]: the percentile of the inner and of the
// outer measurements. Each server span started after the outer timer and before the inner one,
// and ended after the inner timer and before the outer one, so inner ≤ span ≤ outer request by
// request, and a nearest-rank percentile (or a mean) keeps that order.
func inBracket(t *testing.T, field string, gotMs float64, lo, hi time.Duration) {
	t.Helper()
	l, h := float64(lo)/1e6-msTolerance, float64(hi)/1e6+msTolerance
	if gotMs < l || gotMs > h {
		t.Errorf("%s = %.3f ms, want within [%.3f, %.3f] ms (the inner and outer measurements of the requests)", field, gotMs, l, h)
	}
}

func checkShopPerformance(t *testing.T, tl tools, tr *realapp.Truth) {
	var got performance
	tl.Call(t, "analyze_service_performance", map[string]any{"service": realapp.ServiceShop}, &got)
	if got.SampleCount != len(tr.Requests) {
		t.Errorf("sampleCount = %d, want the %d requests the shop served (entry spans only: not its %d other spans)",
			got.SampleCount, len(tr.Requests), tr.Spans[realapp.ServiceShop]-len(tr.Requests))
	}
	if got.ErrorCount != tr.FailedRequests() {
		t.Errorf("errorCount = %d, want the %d failed requests", got.ErrorCount, tr.FailedRequests())
	}
	if want := float64(tr.FailedRequests()) / float64(len(tr.Requests)); math.Abs(got.ErrorRate-want) > 1e-6 {
		t.Errorf("errorRate = %.4f, want %.4f", got.ErrorRate, want)
	}
	for _, p := range []struct {
		field string
		got   float64
		q     float64
	}{{"p50DurationMs", got.P50DurationMs, 0.50}, {"p95DurationMs", got.P95DurationMs, 0.95}, {"p99DurationMs", got.P99DurationMs, 0.99}} {
		lo, hi := tr.Bracket(p.q)
		inBracket(t, p.field, p.got, lo, hi)
	}
	lo, hi := tr.AverageBracket()
	inBracket(t, "averageDurationMs", got.AverageDurationMs, lo, hi)
	checkThroughput(t, got, tr)
	routes := tr.Routes()
	for route, s := range routes {
		i := slices.IndexFunc(got.TopOperations, func(o operationStats) bool { return o.Name == route })
		if i < 0 {
			t.Errorf("topOperations has no %s (%d requests): %+v", route, s.Count, got.TopOperations)
			continue
		}
		if o := got.TopOperations[i]; o.Count != s.Count || o.ErrorCount != s.Errors {
			t.Errorf("operation %s: count %d, errors %d; want %d, %d", route, o.Count, o.ErrorCount, s.Count, s.Errors)
		}
	}
}

// checkThroughput holds throughput to the span the shop had traffic (docs/semantics.md R17):
// stated by the first and last request's start, and the requests per minute over it, counted
// as a minute at least — not over the hour the question covers.
func checkThroughput(t *testing.T, got performance, tr *realapp.Truth) {
	t.Helper()
	first, last := tr.TrafficBracket()
	if got.TrafficFrom == nil || got.TrafficTo == nil {
		t.Fatalf("no traffic span stated: %+v", got)
	}
	if from := *got.TrafficFrom; from < first[0] || from > first[1] {
		t.Errorf("trafficFromUnixMs = %d, want the first request's start within [%d, %d]", from, first[0], first[1])
	}
	if to := *got.TrafficTo; to < last[0] || to > last[1] {
		t.Errorf("trafficToUnixMs = %d, want the last request's start within [%d, %d]", to, last[0], last[1])
	}
	minutes := max(float64(*got.TrafficTo-*got.TrafficFrom)/60000, 1)
	if want := math.Round(float64(got.SampleCount)/minutes*1e4) / 1e4; math.Abs(got.ThroughputPerMin-want) > 1e-4 {
		t.Errorf("throughputPerMinute = %v, want %v: %d requests over %.3f min of traffic", got.ThroughputPerMin, want, got.SampleCount, minutes)
	}
}

func checkFailingOperations(t *testing.T, tl tools, tr *realapp.Truth) {
	var got performance
	tl.Call(t, "analyze_service_performance", map[string]any{"service": realapp.ServiceShop, "limit": 1}, &got)
	for route, s := range tr.Routes() {
		if s.Errors == 0 {
			continue
		}
		i := slices.IndexFunc(got.TopOperations, func(o operationStats) bool { return o.Name == route })
		if i < 0 {
			t.Errorf("with limit 1, topOperations leaves out %s, which failed %d times: %+v", route, s.Errors, got.TopOperations)
			continue
		}
		if o := got.TopOperations[i]; o.ErrorCount != s.Errors {
			t.Errorf("operation %s: errorCount %d, want %d", route, o.ErrorCount, s.Errors)
		}
	}
}

func checkPaymentsPerformance(t *testing.T, tl tools, tr *realapp.Truth) {
	var got performance
	tl.Call(t, "analyze_service_performance", map[string]any{"service": realapp.ServicePayments}, &got)
	declined := len(tr.FailuresOf(realapp.KindPaymentDeclined))
	if got.SampleCount != tr.ChargeRequests || got.ErrorCount != declined {
		t.Errorf("sampleCount %d, errorCount %d; want the %d charges it served (their parent is the shop's client span), %d declined",
			got.SampleCount, got.ErrorCount, tr.ChargeRequests, declined)
	}
}

func checkDB(t *testing.T, tl tools, tr *realapp.Truth) {
	var got dbReport
	tl.Call(t, "analyze_db_bottlenecks", map[string]any{"limit": 20}, &got)
	st := tr.Statements()
	if got.SampleCount != len(tr.Queries) {
		t.Errorf("sampleCount = %d, want the %d statements run; the %d connect and %d pool.acquire spans run none",
			got.SampleCount, len(tr.Queries), tr.PoolSpans["connect"], tr.PoolSpans["pool.acquire"])
	}
	if len(got.Operations) != len(st) {
		t.Errorf("%d operations, want %d, one per statement:\n%s", len(got.Operations), len(st), describeOps(got.Operations))
	}
	if got.Page != nil && got.Page.Total != nil && *got.Page.Total != len(st) {
		t.Errorf("page.total = %d, want %d statements", *got.Page.Total, len(st))
	}
	if len(got.Operations) == 0 {
		t.Fatal("no operations")
	}
	top := got.Operations[0]
	slow := st[realapp.SlowStatement]
	if top.Statement == nil {
		t.Errorf("operations[0] (%q, %d×) has no statement field: want the normalized slow statement", top.Operation, top.Count)
	} else if !isNormalizedSlow(*top.Statement) {
		t.Errorf("operations[0].statement = %q, want the slow statement normalized: whitespace collapsed, 'cancelled' and 20 as ?", *top.Statement)
	}
	if top.Count != slow.Count {
		t.Errorf("operations[0] (%q) ran %d times, want %d, the slow statement's count", top.Operation, top.Count, slow.Count)
	}
	if top.System == nil || *top.System != "postgresql" {
		t.Errorf("operations[0].system = %s, want postgresql", show(top.System))
	}
	fast := st[realapp.FastStatement]
	fi := slices.IndexFunc(got.Operations, func(o dbOperation) bool { return o.Statement != nil && isNormalizedFast(*o.Statement) })
	switch {
	case fi < 0:
		t.Errorf("no operation carries the fast primary-key SELECT on orders as its statement (%d runs):\n%s", fast.Count, describeOps(got.Operations))
	case fi == 0:
		t.Errorf("the fast SELECT is operation #1, the slow statement is not")
	case got.Operations[fi].Count != fast.Count:
		t.Errorf("the fast SELECT ran %d times, answer says %d", fast.Count, got.Operations[fi].Count)
	}
	for _, o := range got.Operations[1:] {
		if o.TotalDurationMs > top.TotalDurationMs {
			t.Errorf("operation %q (%.1f ms) outranks operations[0] (%.1f ms) by total time", o.Operation, o.TotalDurationMs, top.TotalDurationMs)
		}
	}
	// The workload measured each statement around the driver call that ran it, which brackets
	// the span from outside: the answer's total cannot exceed it.
	if top.TotalDurationMs > float64(slow.Total)/1e6+msTolerance {
		t.Errorf("operations[0].totalDurationMs = %.3f, more than the %.3f ms the workload measured around those queries", top.TotalDurationMs, float64(slow.Total)/1e6)
	}
}

// collapse joins a statement's words with single spaces.
func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

// isNormalizedSlow: the slow statement with its whitespace collapsed and its two literals
// replaced; the placeholder $1 is not a literal and may stay or become ?.
func isNormalizedSlow(s string) bool {
	if s != collapse(s) || strings.Contains(s, "cancelled") || strings.Contains(s, "20") {
		return false
	}
	for _, part := range []string{"SELECT o.id, o.total, c.name FROM orders o JOIN customers c ON c.id = o.customer_id WHERE c.name ILIKE", "AND o.status <> ? ORDER BY o.id LIMIT ?"} {
		if !strings.Contains(s, part) {
			return false
		}
	}
	return true
}

func isNormalizedFast(s string) bool {
	return strings.HasPrefix(s, collapse(realapp.FastStatement)[:len("SELECT id, customer_id, total, status FROM orders WHERE id =")])
}

func describeOps(ops []dbOperation) string {
	var b strings.Builder
	for i, o := range ops {
		fmt.Fprintf(&b, "  #%d %q %d× total %.1f ms statement %s\n", i+1, o.Operation, o.Count, o.TotalDurationMs, show(o.Statement))
	}
	return b.String()
}

func checkDeclinedRun(t *testing.T, tl tools, tr *realapp.Truth) {
	declined := tr.FailuresOf(realapp.KindPaymentDeclined)
	traceID := declined[0].TraceID
	want := tr.CriticalPaths[traceID]
	var got runDetail
	tl.Call(t, "get_run", map[string]any{"id": traceID, "maxSpans": 200, "maxDepth": 32}, &got)
	byID := map[string]runSpan{}
	for _, s := range got.Spans {
		byID[s.SpanID] = s
	}
	if got.Page.Total == nil || *got.Page.Total != tr.SpansPerTrace[traceID] || len(got.Spans) != tr.SpansPerTrace[traceID] {
		t.Errorf("%d spans (page.total %s), want all %d the SDKs emitted for the trace", len(got.Spans), show(got.Page.Total), tr.SpansPerTrace[traceID])
	}
	// The chain as the workload opened it: server span, middleware, handler, the call to
	// payments, and so on down to the fraud-review query.
	wantNames := []string{"POST /checkout", "middleware.recover", "middleware.log", "middleware.auth", "checkout.create", "",
		"POST /charges", "middleware.log", "charges.create", ""}
	for i, id := range want {
		s, ok := byID[id]
		if !ok {
			t.Errorf("span %s (%s) of the chain is not in the answer", id, orAny(wantNames[i]))
			continue
		}
		if wantNames[i] != "" && s.Name != wantNames[i] {
			t.Errorf("chain step %d: span %s is named %q, want %q", i, id, s.Name, wantNames[i])
		}
		if i > 0 && s.ParentSpanID != want[i-1] {
			t.Errorf("chain step %d (%s): parent %s, want %s", i, s.Name, s.ParentSpanID, want[i-1])
		}
		if i <= 4 && s.Status != "error" {
			t.Errorf("%s has status %q, want error: the decline came back through it", s.Name, s.Status)
		}
	}
	if got.ErrorMessage == nil || !strings.Contains(*got.ErrorMessage, "payment declined") {
		t.Errorf("errorMessage = %s, want the decline", show(got.ErrorMessage))
	}
	// Where the decline was raised: a short span of payments that ended before the review.
	ai := slices.IndexFunc(got.Spans, func(s runSpan) bool { return s.Name == "card.authorize" })
	if ai < 0 {
		t.Errorf("no card.authorize span, where the decline was raised")
	} else if a := got.Spans[ai]; a.Status != "error" || a.Service != realapp.ServicePayments || a.ErrorMessage == nil || !strings.Contains(*a.ErrorMessage, "payment declined") {
		t.Errorf("card.authorize: service %q, status %q, errorMessage %s; want payments, error, the decline", a.Service, a.Status, show(a.ErrorMessage))
	}
	if len(got.Logs) != tr.LogsPerTrace[traceID] {
		t.Errorf("%d logs, want the %d records both services logged in the trace", len(got.Logs), tr.LogsPerTrace[traceID])
	}
	// Jaeger's critical path: the chain of last-finishing children (root to the fraud-review
	// query, which ended after card.authorize raised the decline), and, before each step of it,
	// the sequential work the request waited for (the authorization, the pool waits).
	var path []string
	for _, p := range got.CriticalPath {
		path = append(path, p.SpanID)
	}
	if len(path) == 0 || path[0] != want[0] || !isSubsequence(want, path) ||
		(ai >= 0 && !slices.Contains(path, got.Spans[ai].SpanID)) {
		t.Errorf("criticalPath =\n  %s\nwant it to start at the root and hold, in order, the chain to the fraud-review query\n  %s\nand card.authorize, which the request waited for",
			namePath(path, byID), namePath(want, byID))
	}
	for _, p := range got.CriticalPath {
		s, ok := byID[p.SpanID]
		if !ok {
			t.Errorf("criticalPath names %s, which is not a span of the run", p.SpanID)
			continue
		}
		if p.Name != s.Name || p.Service != s.Service {
			t.Errorf("criticalPath step %s is %q of %q, but the span is %q of %q", p.SpanID, p.Name, p.Service, s.Name, s.Service)
		}
	}
}

// isSubsequence reports whether sub appears in s in order (not necessarily adjacent).
func isSubsequence(sub, s []string) bool {
	i := 0
	for _, x := range s {
		if i < len(sub) && x == sub[i] {
			i++
		}
	}
	return i == len(sub)
}

func namePath(ids []string, byID map[string]runSpan) string {
	var parts []string
	for _, id := range ids {
		parts = append(parts, fmt.Sprintf("%s(%s)", byID[id].Name, id))
	}
	if len(parts) == 0 {
		return "(none)"
	}
	return strings.Join(parts, " → ")
}

func orAny(s string) string {
	if s == "" {
		return "any name"
	}
	return s
}

func show[T any](p *T) string {
	if p == nil {
		return "absent"
	}
	b, _ := json.Marshal(*p)
	return string(b)
}

func difference(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

func head(s []string) []string {
	if len(s) > 3 {
		return s[:3]
	}
	return s
}
