package goapp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/runlens/runlens/internal/e2e/corpus/answers"
	"github.com/runlens/runlens/internal/e2e/corpus/captured"
	"github.com/runlens/runlens/internal/e2e/corpus/goapp"
)

// tools is runlens's MCP tool layer, in process (package answers).
type tools = answers.Tools

// TestGoApp runs the four-service shop against real MariaDB and Redis servers, exporting to
// runlens's receivers (frontend and inventory over OTLP/HTTP, checkout and legacy over
// OTLP/gRPC), and holds every telemetry tool's answer to what the app itself recorded.
func TestGoApp(t *testing.T) {
	dsn, redisAddr := startServers(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	rl := answers.Start(ctx, t, t.TempDir())
	start := time.Now()
	truth, runErr := goapp.Run(ctx, goapp.Options{
		Endpoints: goapp.Endpoints{HTTPURL: "http://" + rl.HTTPAddr, GRPCAddr: rl.GRPCAddr},
		MariaDSN:  dsn, RedisAddr: redisAddr, Seed: 11,
	})
	elapsed := time.Since(start)
	rl.StopReceivers(ctx, t)
	if runErr != nil {
		t.Fatalf("run the app: %v", runErr)
	}
	logTruth(t, truth, elapsed)
	if bad := truth.Check(); len(bad) > 0 {
		t.Fatalf("the app's own record is inconsistent, so it cannot judge runlens:\n  %s", strings.Join(bad, "\n  "))
	}
	causes := 0
	for _, c := range []goapp.Cause{goapp.CauseAddressInvalid, goapp.CauseQtyLimit, goapp.CauseCacheTimeout} {
		if len(truth.RunsWith(c)) > 0 {
			causes++
		}
	}
	rl.Capture(ctx, t, "goapp", time.Now(), captured.Truth{
		Runs: len(truth.Requests), Domains: []string{"http"}, FailedRuns: truth.FailedTraceIDs(), Occurrences: truth.Occurrences(),
		Handled: truth.HandledOccurrences(), Causes: causes, SlowStatements: map[string]string{"": "SLEEP"},
	})
	tl := rl.Tools

	t.Run("list_runs has one run per request, error exactly for the 500s", func(t *testing.T) { checkRuns(t, tl, truth) })
	t.Run("list_runs status=error returns exactly the 500s", func(t *testing.T) { checkErrorRuns(t, tl, truth) })
	t.Run("get_app_status counts occurrences, handled errors, spans and logs", func(t *testing.T) { checkAppStatus(t, tl, truth) })
	t.Run("get_recent_errors has one group per cause counting the runs it affected", func(t *testing.T) { checkRecentErrors(t, tl, truth, "") })
	t.Run("get_recent_errors service=frontend finds the causes that started downstream", func(t *testing.T) {
		checkRecentErrors(t, tl, truth, goapp.ServiceFrontend)
	})
	t.Run("get_run of a 200 with a retried cache timeout says ok", func(t *testing.T) { checkHandledRun(t, tl, truth) })
	t.Run("get_run of a legacy validation failure names the span event's reason", func(t *testing.T) { checkValidationRun(t, tl, truth, false) })
	t.Run("get_run of a validation failure after a retried cache timeout names the validation, not the timeout", func(t *testing.T) {
		checkValidationRun(t, tl, truth, true)
	})
	t.Run("analyze_db_bottlenecks ranks the slow statement first, legacy's SQL SELECT spans included", func(t *testing.T) { checkDB(t, tl, truth) })
}

// logTruth writes the app's record, so a failure report shows what was expected.
func logTruth(t *testing.T, tr *goapp.Truth, elapsed time.Duration) {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "workload %v; requests %d: 2xx %d, 4xx %d, 5xx %d\n", elapsed.Round(time.Millisecond), len(tr.Requests),
		tr.StatusCount(2), tr.StatusCount(4), tr.StatusCount(5))
	for _, c := range []goapp.Cause{goapp.CauseAddressInvalid, goapp.CauseQtyLimit, goapp.CauseCacheTimeout} {
		runs := tr.RunsWith(c)
		failed := 0
		for _, r := range runs {
			if r.Failed() {
				failed++
			}
		}
		fmt.Fprintf(&b, "  cause %-16s from %-9s in %3d runs (%d of them failed)\n", c, goapp.Origins[c], len(runs), failed)
	}
	fmt.Fprintf(&b, "  occurrences %d (handled %d); cache timeouts %d; legacy notices: %d lock waits, %d retries\n",
		tr.Occurrences(), tr.HandledOccurrences(), tr.CacheTimeouts(), tr.LockWaitNotices, tr.RetryNotices)
	for _, k := range slices.Sorted(maps.Keys(tr.Statements)) {
		s := tr.Statements[k]
		fmt.Fprintf(&b, "  statement %4d× %10v %v %s %q\n", s.Count, s.Total.Round(time.Microsecond), s.Services, s.System, s.Text)
	}
	fmt.Fprintf(&b, "  spans %v, logs %v, protocols %v", tr.Spans, tr.Logs, tr.Protocols)
	t.Log(b.String())
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// allRuns follows list_runs' cursor to the end.
func allRuns(t *testing.T, tl tools, query map[string]any) []run {
	t.Helper()
	var out []run
	args := query
	for range 20 {
		var got runList
		tl.Call(t, "list_runs", args, &got)
		out = append(out, got.Runs...)
		if got.Page.NextCursor == nil {
			return out
		}
		args = map[string]any{"cursor": *got.Page.NextCursor}
		for k, v := range query {
			args[k] = v
		}
	}
	t.Fatal("list_runs' cursor chain did not end after 20 pages")
	return nil
}

func checkRuns(t *testing.T, tl tools, tr *goapp.Truth) {
	runs := allRuns(t, tl, map[string]any{"limit": 100})
	if len(runs) != len(tr.Requests) {
		t.Errorf("list_runs returned %d runs, truth: %d requests, each its own trace", len(runs), len(tr.Requests))
	}
	byTrace := map[string]goapp.Request{}
	for _, r := range tr.Requests {
		byTrace[r.TraceID] = r
	}
	wrong := 0
	for _, r := range runs {
		req, ok := byTrace[r.TraceID]
		if !ok {
			t.Errorf("run %s (%s, %s) is no request of the workload", r.ID, r.Name, r.Service)
			continue
		}
		want := map[bool]string{true: "error", false: "ok"}[req.Failed()]
		if r.Status != want || r.Service != goapp.ServiceFrontend || r.Domain != "http" {
			if wrong++; wrong <= 5 {
				t.Errorf("run %s: status %q, service %q, domain %q; truth: HTTP %d (causes %v) entered at frontend → %s, frontend, http\n%s",
					r.TraceID, r.Status, r.Service, r.Domain, req.Status, req.Causes, want, tr.Digest(r.TraceID))
			}
		}
	}
	if wrong > 5 {
		t.Errorf("… %d wrong runs in all", wrong)
	}
}

func checkErrorRuns(t *testing.T, tl tools, tr *goapp.Truth) {
	runs := allRuns(t, tl, map[string]any{"status": "error", "limit": 100})
	var got []string
	for _, r := range runs {
		got = append(got, r.TraceID)
	}
	slices.Sort(got)
	want := tr.FailedTraceIDs()
	if slices.Equal(got, want) {
		return
	}
	missing, extra := difference(want, got), difference(got, want)
	t.Errorf("status=error returned %d runs, truth: the %d requests answered 500; missing %d, extra %d",
		len(got), len(want), len(missing), len(extra))
	describe := func(label string, ids []string) {
		byTrace := map[string]goapp.Request{}
		for _, r := range tr.Requests {
			byTrace[r.TraceID] = r
		}
		for _, id := range head(ids) {
			r := byTrace[id]
			t.Errorf("%s %s: HTTP %d, causes %v, cache timeouts %d; spans sent:\n%s", label, id, r.Status, r.Causes, r.CacheTimeouts, tr.Digest(id))
		}
	}
	describe("missing", missing)
	describe("extra", extra)
}

func checkAppStatus(t *testing.T, tl tools, tr *goapp.Truth) {
	var got appStatus
	tl.Call(t, "get_app_status", nil, &got)
	if got.Status != "fail" {
		t.Errorf("status = %q, truth: %d requests failed → fail", got.Status, tr.StatusCount(5))
	}
	if got.Counts.Errors != tr.Occurrences() {
		t.Errorf("counts.errors = %d, truth: %d occurrences (one per cause per run: %d failed runs + %d runs with a retried cache timeout)",
			got.Counts.Errors, tr.Occurrences(), tr.StatusCount(5), len(tr.RunsWith(goapp.CauseCacheTimeout)))
	}
	if got.Counts.HandledErrors == nil {
		t.Errorf("counts.handledErrors is absent, truth: %d handled occurrences (cache timeouts in runs that returned 200 or 400)", tr.HandledOccurrences())
	} else if *got.Counts.HandledErrors != tr.HandledOccurrences() {
		t.Errorf("counts.handledErrors = %d, truth: %d", *got.Counts.HandledErrors, tr.HandledOccurrences())
	}
	if got.Counts.Services != len(tr.Services()) {
		t.Errorf("counts.services = %d, truth: %d %v", got.Counts.Services, len(tr.Services()), tr.Services())
	}
	if got.Counts.Spans != sum(tr.Spans) {
		t.Errorf("counts.spans = %d, truth: the SDKs emitted %d %v", got.Counts.Spans, sum(tr.Spans), tr.Spans)
	}
	if got.Counts.Logs != sum(tr.Logs) {
		t.Errorf("counts.logs = %d, truth: the logger providers emitted %d records %v (legacy's span events are not log records)", got.Counts.Logs, sum(tr.Logs), tr.Logs)
	}
	for _, svc := range tr.Services() {
		i := slices.IndexFunc(got.Services, func(s struct {
			Service string `json:"service"`
			Spans   int    `json:"spans"`
			Errors  int    `json:"errors"`
		}) bool {
			return s.Service == svc
		})
		if i < 0 {
			t.Errorf("services has no entry for %s: %+v", svc, got.Services)
		} else if got.Services[i].Spans != tr.Spans[svc] {
			t.Errorf("services[%s].spans = %d, truth: %d", svc, got.Services[i].Spans, tr.Spans[svc])
		}
	}
	found := false
	for _, d := range got.Domains {
		if d.Domain != "http" {
			continue
		}
		found = true
		if d.SeenCount != len(tr.Requests) || d.ErrorCount != tr.StatusCount(5) {
			t.Errorf("domain http: seen %d, errors %d; truth: %d runs, %d failed", d.SeenCount, d.ErrorCount, len(tr.Requests), tr.StatusCount(5))
		}
	}
	if !found {
		t.Errorf("domains has no http entry: %+v", got.Domains)
	}
}

func checkRecentErrors(t *testing.T, tl tools, tr *goapp.Truth, service string) {
	args := map[string]any{"limit": 100}
	if service != "" {
		args["service"] = service
	}
	var got recentErrors
	tl.Call(t, "get_recent_errors", args, &got)
	// Every run entered at the frontend, so filtering by it keeps every occurrence.
	if got.Count != tr.Occurrences() {
		t.Errorf("count = %d, truth: %d occurrences, one per cause per run", got.Count, tr.Occurrences())
	}
	causes := []goapp.Cause{goapp.CauseAddressInvalid, goapp.CauseQtyLimit, goapp.CauseCacheTimeout}
	if len(got.Groups) != len(causes) {
		t.Errorf("%d groups, truth: %d causes (%v):\n%s", len(got.Groups), len(causes), causes, describeGroups(got.Groups))
	}
	total := 0
	for _, g := range got.Groups {
		total += g.Count
	}
	if total != got.Count {
		t.Errorf("the groups add up to %d, count says %d", total, got.Count)
	}
	for _, c := range causes {
		runs := tr.RunsWith(c)
		phrase := strings.ToLower(goapp.Phrases[c])
		var matched []errorGroup
		for _, g := range got.Groups {
			if strings.Contains(strings.ToLower(g.SampleMessage), phrase) {
				matched = append(matched, g)
			}
		}
		if len(matched) != 1 {
			t.Errorf("%s: want one group whose message says %q (it started in %s, %d runs), got %d; all groups:\n%s",
				c, phrase, goapp.Origins[c], len(runs), len(matched), describeGroups(got.Groups))
			if len(runs) > 0 {
				t.Logf("spans of one %s run (%s):\n%s", c, runs[0].TraceID, tr.Digest(runs[0].TraceID))
			}
			continue
		}
		g := matched[0]
		if g.Service != goapp.Origins[c] {
			t.Errorf("%s: group service = %q, truth: it started in %s", c, g.Service, goapp.Origins[c])
		}
		affected := map[string]bool{}
		for _, r := range runs {
			affected[r.TraceID] = true
		}
		if g.Count != len(runs) {
			t.Errorf("%s: group count = %d, truth: %d runs affected", c, g.Count, len(runs))
			// Show what was sent for a run the group does not name, where one is known.
			for _, r := range runs {
				if !slices.Contains(g.RelatedRunIDs, r.TraceID) && !slices.Contains(g.RelatedTraceIDs, r.TraceID) {
					var d runDetail
					tl.Call(t, "get_run", map[string]any{"id": r.TraceID, "maxSpans": 200, "maxDepth": 32}, &d)
					if d.ErrorMessage == nil || !strings.Contains(strings.ToLower(*d.ErrorMessage), phrase) {
						t.Logf("run %s (%s), get_run errorMessage %s; sent:\n%s", r.TraceID, c, show(d.ErrorMessage), tr.Digest(r.TraceID))
						break
					}
				}
			}
		}
		for _, id := range append(slices.Clone(g.RelatedRunIDs), g.RelatedTraceIDs...) {
			if !affected[id] {
				t.Errorf("%s: related run/trace %s is not one of the %d runs it affected", c, id, len(runs))
			}
		}
	}
}

func describeGroups(gs []errorGroup) string {
	var b strings.Builder
	for _, g := range gs {
		fmt.Fprintf(&b, "  %3d× %s/%s %q (type %s, runs %d)\n", g.Count, g.Service, g.Domain, g.SampleMessage, show(g.ExceptionType), len(g.RelatedRunIDs))
	}
	return b.String()
}

func checkHandledRun(t *testing.T, tl tools, tr *goapp.Truth) {
	req, ok := tr.OKWithTimeout()
	if !ok {
		t.Fatal("no request returned 200 after a cache timeout")
	}
	var got runDetail
	tl.Call(t, "get_run", map[string]any{"id": req.TraceID, "maxSpans": 200, "maxDepth": 32}, &got)
	if got.Status != "ok" {
		t.Errorf("get_run %s: status %q, errorMessage %s; truth: HTTP 200 after %d retried cache timeouts → ok\nspans sent:\n%s",
			req.TraceID, got.Status, show(got.ErrorMessage), req.CacheTimeouts, tr.Digest(req.TraceID))
	}
	if len(got.Spans) != tr.SpansPerTrace[req.TraceID] {
		t.Errorf("get_run %s: %d spans, truth: the SDKs emitted %d", req.TraceID, len(got.Spans), tr.SpansPerTrace[req.TraceID])
	}
	timedOut := 0
	for _, s := range got.Spans {
		if s.Service == goapp.ServiceCheckout && s.Status == "error" && strings.Contains(strings.ToLower(s.Name), "blpop") {
			timedOut++
		}
	}
	if timedOut != req.CacheTimeouts {
		t.Errorf("get_run %s: %d failed blpop spans of checkout, truth: %d cart reads timed out", req.TraceID, timedOut, req.CacheTimeouts)
	}
}

func checkValidationRun(t *testing.T, tl tools, tr *goapp.Truth, withTimeout bool) {
	var req *goapp.Request
	for _, r := range tr.RunsWith(goapp.CauseAddressInvalid) {
		if (r.CacheTimeouts > 0) == withTimeout {
			req = &r
			break
		}
	}
	if req == nil {
		t.Fatalf("no validation failure with cache timeouts = %v in this run: the workload's fixed seed plans both", withTimeout)
	}
	var got runDetail
	tl.Call(t, "get_run", map[string]any{"id": req.TraceID, "maxSpans": 200, "maxDepth": 32}, &got)
	if got.Status != "error" {
		t.Errorf("get_run %s: status %q, truth: HTTP 500", req.TraceID, got.Status)
	}
	if got.ErrorMessage == nil || !strings.Contains(*got.ErrorMessage, goapp.Phrases[goapp.CauseAddressInvalid]) {
		t.Errorf("get_run %s: errorMessage %s, truth: the run failed because of legacy's span event %q (%d handled cache timeouts before it)\nspans sent:\n%s",
			req.TraceID, show(got.ErrorMessage), goapp.Phrases[goapp.CauseAddressInvalid], req.CacheTimeouts, tr.Digest(req.TraceID))
	}
}

func checkDB(t *testing.T, tl tools, tr *goapp.Truth) {
	var got dbReport
	tl.Call(t, "analyze_db_bottlenecks", map[string]any{"limit": 20}, &got)
	if len(got.Operations) == 0 {
		t.Fatal("no operations")
	}
	slow := tr.Statements[goapp.StatementKey(goapp.SystemMySQL, goapp.SlowStatement)]
	top := got.Operations[0]
	isSlow := func(o dbOperation) bool {
		return o.Statement != nil && strings.Contains(strings.ToUpper(*o.Statement), "SLEEP")
	}
	if !isSlow(top) {
		t.Errorf("operations[0] = %q (statement %s), truth: %q is the slowest, %d× in %v, %v in all:\n%s",
			top.Operation, show(top.Statement), goapp.SlowStatement, slow.Count, slow.Services, slow.Total, describeOps(got.Operations))
	}
	var slowOps []dbOperation
	for _, o := range got.Operations {
		if isSlow(o) {
			slowOps = append(slowOps, o)
		}
	}
	if len(slowOps) != 1 || slowOps[0].Count != slow.Count {
		t.Errorf("the slow statement: %d operations %s, truth: one operation of %d runs (%d by inventory through otelsql, %d by legacy as OpenTracing \"SQL SELECT\" spans with sql.query)",
			len(slowOps), describeOps(slowOps), slow.Count, slow.ByService[goapp.ServiceInventory], slow.ByService[goapp.ServiceLegacy])
	}
	if top.System == nil || *top.System != goapp.SystemMySQL {
		t.Errorf("operations[0].system = %s, truth: mysql (otelsql's db.system, legacy's peer.service)", show(top.System))
	}
	if ms := float64(slow.Total)/1e6 + 0.01; isSlow(top) && top.TotalDurationMs > ms {
		t.Errorf("operations[0].totalDurationMs = %.3f, more than the %.3f ms measured around those queries", top.TotalDurationMs, ms)
	}
	// Legacy's zip lookup is reported only as "SQL SELECT" spans with sql.query.
	zip := tr.Statements[goapp.StatementKey(goapp.SystemMySQL, goapp.ZipStatement)]
	zi := slices.IndexFunc(got.Operations, func(o dbOperation) bool {
		return o.Statement != nil && strings.Contains(*o.Statement, "FROM zips WHERE")
	})
	if zi < 0 {
		t.Errorf("no operation is legacy's zip lookup (%d runs, OpenTracing \"SQL SELECT\" spans with sql.query and peer.service):\n%s", zip.Count, describeOps(got.Operations))
	} else if got.Operations[zi].Count != zip.Count {
		t.Errorf("legacy's zip lookup ran %d times, answer says %d", zip.Count, got.Operations[zi].Count)
	}
	// The statement the requests queue for (behind inventory's lock) is not slow itself.
	locked := tr.Statements[goapp.StatementKey(goapp.SystemMySQL, goapp.LockedStatement)]
	li := slices.IndexFunc(got.Operations, func(o dbOperation) bool {
		return o.Statement != nil && strings.HasPrefix(*o.Statement, "UPDATE stock")
	})
	switch {
	case li < 0:
		t.Errorf("no operation is inventory's stock update (%d runs):\n%s", locked.Count, describeOps(got.Operations))
	case li == 0:
		t.Errorf("the stock update, which only waits on the lock, ranks first")
	case got.Operations[li].Count != locked.Count:
		t.Errorf("the stock update ran %d times, answer says %d", locked.Count, got.Operations[li].Count)
	}
	var mysqlStatements, mysqlErrors int
	for _, s := range tr.StatementsOf(goapp.SystemMySQL) {
		mysqlStatements += s.Count
		mysqlErrors += s.Errors
	}
	var mysql dbReport
	tl.Call(t, "analyze_db_bottlenecks", map[string]any{"limit": 20, "system": goapp.SystemMySQL}, &mysql)
	if mysql.SampleCount != mysqlStatements {
		t.Errorf("system=mysql: sampleCount = %d, truth: %d statements ran on MariaDB (%d failed):\n%s", mysql.SampleCount, mysqlStatements, mysqlErrors, describeOps(mysql.Operations))
	}
}

func describeOps(ops []dbOperation) string {
	var b strings.Builder
	for i, o := range ops {
		fmt.Fprintf(&b, "  #%d %q %d× total %.1f ms system %s statement %s\n", i+1, o.Operation, o.Count, o.TotalDurationMs, show(o.System), show(o.Statement))
	}
	return b.String()
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
