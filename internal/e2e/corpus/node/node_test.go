// Package node is a corpus of two Node.js apps written the way such apps are written in the
// wild and instrumented only by the OpenTelemetry JS auto-instrumentations: an Express 5 shop
// on PostgreSQL (node-postgres) exporting over OTLP/HTTP, and a Koa 3 inventory on MariaDB
// (mysql2) and Redis (ioredis) exporting over OTLP/gRPC, both logging through pino. A
// workload drives them over HTTP and counts its own truth; every telemetry tool's answer is
// held to that truth as the telemetry rules define it.
package node

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runlens/runlens/internal/app"
	"github.com/runlens/runlens/internal/e2e/corpus/answers"
	"github.com/runlens/runlens/internal/e2e/corpus/captured"
	"github.com/runlens/runlens/internal/e2e/dbservers"
)

// startPostgres starts a throwaway PostgreSQL cluster and returns the URL of a fresh database.
func startPostgres(t *testing.T, ctx context.Context) string {
	t.Helper()
	bin, err := dbservers.FindPGBin(os.Getenv)
	if err != nil {
		unavailable(t, "PostgreSQL is not available: %v", err)
	}
	pg, err := dbservers.StartPostgres(ctx, bin)
	if err != nil {
		unavailable(t, "PostgreSQL is not available: %v", err)
	}
	t.Cleanup(func() {
		if err := pg.Stop(); err != nil {
			t.Errorf("stop PostgreSQL: %v", err)
		}
	})
	return pg.URL
}

// tools is runlens's MCP tool layer, in process (package answers).
type tools struct {
	answers.Tools
	a *app.App
}

// TestNodeCorpus runs both apps against real databases, exports their telemetry to runlens's
// receivers (the shop over OTLP/HTTP protobuf, the inventory over OTLP/gRPC), and checks every
// telemetry tool per service and over both.
func TestNodeCorpus(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	nt := nodeTools(t)
	node := filepath.Join(nt, "node_modules", ".bin", "node")

	pgURL := startPostgres(t, ctx)
	maria := dbservers.StartMariaDB(t)
	rds := dbservers.StartRedis(t)
	mysqlURL := (&url.URL{Scheme: "mysql", User: url.UserPassword(maria.User, maria.Password), Host: maria.Addr, Path: "/" + maria.Database}).String()
	redisURL := "redis://" + rds.Addr

	root := project(t, nt)
	shopDir, invDir := filepath.Join(root, "shop-express"), filepath.Join(root, "inventory-koa")
	seed(t, node, shopDir, "DATABASE_URL="+pgURL)
	seed(t, node, invDir, "MYSQL_URL="+mysqlURL)

	rl := answers.Start(ctx, t, root)

	shopApp := startApp(t, node, shopDir, serviceShop, "http/protobuf", "http://"+rl.HTTPAddr, "DATABASE_URL="+pgURL)
	invApp := startApp(t, node, invDir, serviceInventory, "grpc", "http://"+rl.GRPCAddr, "MYSQL_URL="+mysqlURL, "REDIS_URL="+redisURL)
	shop := driveShop(t, shopApp, root)
	inv := driveInventory(t, invApp, root)
	for _, na := range []*nodeApp{shopApp, invApp} {
		if err := na.shutdown(); err != nil {
			t.Fatalf("%s did not shut down cleanly: %v\n%s", na.name, err, na.out.String())
		}
	}
	rl.StopReceivers(ctx, t)
	jobTraces(shop, shopApp.logs())
	for _, c := range []struct {
		tr  *Truth
		app *nodeApp
	}{{shop, shopApp}, {inv, invApp}} {
		if bad := c.tr.Check(c.app.logs()); len(bad) > 0 {
			t.Fatalf("the workload's own record of %s is inconsistent, so it cannot judge runlens:\n  %s\napp output:\n%s",
				c.tr.Service, strings.Join(bad, "\n  "), c.app.out.String())
		}
	}
	t.Logf("truth:\n%s%s", shop.Summary(), inv.Summary())

	truth := captured.Truth{Domains: []string{"http", "job"}, SlowStatements: map[string]string{}}
	for _, tr := range []*Truth{shop, inv} {
		truth.Runs += tr.Runs()
		truth.FailedRuns = append(truth.FailedRuns, tr.FailedRuns()...)
		truth.Occurrences += tr.Occurrences()
		truth.Handled += tr.Handled()
		truth.Causes += len(tr.Causes)
		truth.SlowStatements[tr.Service] = tr.SlowStatement
	}
	rl.Capture(ctx, t, "node", time.Now(), truth)
	tl := tools{Tools: rl.Tools, a: rl.App}
	for _, tr := range []*Truth{shop, inv} {
		t.Run(tr.Service, func(t *testing.T) {
			t.Run("get_app_status counts its runs and errors", func(t *testing.T) { checkStatus(t, tl, tr.Service, tr) })
			t.Run("list_runs fails exactly the 5xx requests and failed job runs", func(t *testing.T) { checkRuns(t, tl, tr.Service, tr) })
			t.Run("get_recent_errors has one group per cause with its specific message", func(t *testing.T) { checkErrors(t, tl, tr.Service, tr) })
			t.Run("get_run of a failed run names its cause first", func(t *testing.T) { checkFailedRuns(t, tl, tr) })
			t.Run("analyze_db_bottlenecks ranks the slow statement first", func(t *testing.T) { checkDB(t, tl, tr) })
			if len(tr.Jobs) > 0 {
				t.Run("get_last_job_result reports the failed last run", func(t *testing.T) { checkLastJob(t, tl, tr) })
			}
		})
	}
	t.Run("both services", func(t *testing.T) {
		t.Run("get_app_status counts both apps", func(t *testing.T) { checkStatus(t, tl, "", shop, inv) })
		t.Run("list_runs covers both apps", func(t *testing.T) { checkRuns(t, tl, "", shop, inv) })
		t.Run("get_recent_errors groups both apps' causes", func(t *testing.T) { checkErrors(t, tl, "", shop, inv) })
	})
}

// withService adds the service filter to a tool's arguments when there is one.
func withService(service string, args map[string]any) map[string]any {
	if args == nil {
		args = map[string]any{}
	}
	if service != "" {
		args["service"] = service
	}
	return args
}

func scope(service string) string {
	if service == "" {
		return "both services"
	}
	return service
}

func checkStatus(t *testing.T, tl tools, service string, trs ...*Truth) {
	var got appStatus
	tl.Call(t, "get_app_status", withService(service, nil), &got)
	var occ, handled, reqs, failedReqs, jobs, failedJobs int
	for _, tr := range trs {
		occ += tr.Occurrences()
		handled += tr.Handled()
		reqs += len(tr.Requests)
		failedReqs += tr.FailedRequests()
		jobs += len(tr.Jobs)
		failedJobs += tr.FailedJobs()
	}
	if got.Status != "fail" {
		t.Errorf("%s: status = %q, want fail: %d runs failed", scope(service), got.Status, occ-handled)
	}
	if got.Counts.Errors != occ {
		t.Errorf("%s: counts.errors = %d, want %d occurrences (%d failed runs + %d handled errors)", scope(service), got.Counts.Errors, occ, occ-handled, handled)
	}
	if got.Counts.HandledErrors == nil || *got.Counts.HandledErrors != handled {
		t.Errorf("%s: counts.handledErrors = %s, want %d (retried cache timeouts in requests that returned 200)", scope(service), show(got.Counts.HandledErrors), handled)
	}
	if got.Counts.Services != len(trs) {
		t.Errorf("%s: counts.services = %d, want %d", scope(service), got.Counts.Services, len(trs))
	}
	want := map[string][2]int{"http": {reqs, failedReqs}}
	if jobs > 0 {
		want["job"] = [2]int{jobs, failedJobs}
	}
	for _, d := range got.Domains {
		w, ok := want[d.Domain]
		if !ok {
			// Runs the workload did not cause (the apps' startup: the lookup of the address
			// they listen on, the Redis client's connection) are internal and never fail.
			if d.ErrorCount != 0 {
				t.Errorf("%s: domain %s: seen %d, errors %d; want no errors outside the workload's requests and jobs", scope(service), d.Domain, d.SeenCount, d.ErrorCount)
			}
			continue
		}
		delete(want, d.Domain)
		if d.SeenCount != w[0] || d.ErrorCount != w[1] {
			t.Errorf("%s: domain %s: seen %d, errors %d; want seen %d runs, errors %d failed runs (4xx and handled errors are not failures)",
				scope(service), d.Domain, d.SeenCount, d.ErrorCount, w[0], w[1])
		}
	}
	for d, w := range want {
		t.Errorf("%s: domains has no %s entry (want seen %d, errors %d): %+v", scope(service), d, w[0], w[1], got.Domains)
	}
}

// allRuns follows list_runs' cursor to the end.
func allRuns(t *testing.T, tl tools, query map[string]any) []run {
	t.Helper()
	var out []run
	args := query
	for range 30 {
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
	t.Fatal("list_runs' cursor chain did not end after 30 pages")
	return nil
}

// checkRuns holds list_runs to the workload: every request is an http run and every job run
// a job run, with the status the rules give it; the runs the workload did not cause (the
// apps' startup spans: the lookup of the address they listen on, the Redis client's first
// connection) must not fail.
func checkRuns(t *testing.T, tl tools, service string, trs ...*Truth) {
	all := allRuns(t, tl, withService(service, map[string]any{"limit": 100}))
	var runs []run
	for _, r := range all {
		if r.Domain == "http" || r.Domain == "job" {
			runs = append(runs, r)
		} else if r.Status != "ok" {
			t.Errorf("%s: run %s %q of domain %s, which the workload did not cause, has status %s", scope(service), r.ID, r.Name, r.Domain, r.Status)
		}
	}
	wantRuns := 0
	kind := map[string]string{}
	status := map[string]string{}
	for _, tr := range trs {
		wantRuns += tr.Runs()
		for _, r := range tr.Requests {
			switch {
			case r.Status >= 500:
				kind[r.TraceID], status[r.TraceID] = fmt.Sprintf("%d %s (%s)", r.Status, r.Route, r.Cause.Key), "error"
			case r.Cause != nil:
				kind[r.TraceID], status[r.TraceID] = fmt.Sprintf("%d %s with a handled %s", r.Status, r.Route, r.Cause.Key), "ok"
			default:
				kind[r.TraceID], status[r.TraceID] = fmt.Sprintf("%d %s", r.Status, r.Route), "ok"
			}
		}
		for _, j := range tr.Jobs {
			kind[j.TraceID], status[j.TraceID] = "job "+j.Name+" "+j.Status, map[bool]string{true: "error", false: "ok"}[j.Cause != nil]
		}
	}
	if len(runs) != wantRuns {
		t.Errorf("%s: %d http and job runs, want %d (every request and job run is a trace)", scope(service), len(runs), wantRuns)
	}
	wrong := map[string]int{}
	var sample []string
	for _, r := range runs {
		k, ok := kind[r.TraceID]
		if !ok {
			wrong["unknown run"]++
			if len(sample) < 5 {
				sample = append(sample, fmt.Sprintf("run %s %q (%s, %s) is no request or job of the workload", r.ID, r.Name, r.Service, r.Status))
			}
			continue
		}
		if r.Status != status[r.TraceID] {
			wrong[k]++
			if len(sample) < 8 {
				sample = append(sample, fmt.Sprintf("run %s %q: status %s, want %s (%s)", r.TraceID, r.Name, r.Status, status[r.TraceID], k))
			}
		}
	}
	if len(wrong) > 0 {
		t.Errorf("%s: runs with the wrong status, by kind: %v\n  %s", scope(service), wrong, strings.Join(sample, "\n  "))
	}
	failed := allRuns(t, tl, withService(service, map[string]any{"limit": 100, "status": "error"}))
	var want []string
	for _, tr := range trs {
		want = append(want, tr.FailedRuns()...)
	}
	var got []string
	for _, r := range failed {
		got = append(got, r.TraceID)
	}
	missing, extra := difference(want, got), difference(got, want)
	if len(got) != len(want) || len(missing) > 0 || len(extra) > 0 {
		t.Errorf("%s: status=error returned %d runs, want the %d that failed (5xx requests and failed job runs); missing %d, extra %d:\n  %s",
			scope(service), len(got), len(want), len(missing), len(extra), strings.Join(describeIDs(append(missing, extra...), kind), "\n  "))
	}
}

func describeIDs(ids []string, kind map[string]string) []string {
	var out []string
	for i, id := range ids {
		if i == 6 {
			out = append(out, fmt.Sprintf("… %d more", len(ids)-i))
			break
		}
		out = append(out, id+" "+kind[id])
	}
	return out
}

func checkErrors(t *testing.T, tl tools, service string, trs ...*Truth) {
	var got recentErrors
	tl.Call(t, "get_recent_errors", withService(service, map[string]any{"limit": 100}), &got)
	occ, causes := 0, 0
	for _, tr := range trs {
		occ += tr.Occurrences()
		causes += len(tr.Causes)
	}
	if got.Count != occ {
		t.Errorf("%s: count = %d, want %d occurrences, one per cause per run", scope(service), got.Count, occ)
	}
	if len(got.Groups) != causes {
		t.Errorf("%s: %d groups, want %d, one per cause:\n%s", scope(service), len(got.Groups), causes, describeGroups(got.Groups))
	}
	sum := 0
	for _, g := range got.Groups {
		sum += g.Count
	}
	if sum != got.Count {
		t.Errorf("%s: the groups add up to %d, count says %d", scope(service), sum, got.Count)
	}
	for _, tr := range trs {
		for _, c := range tr.Causes {
			runs := tr.CauseRuns(c)
			var matched []errorGroup
			for _, g := range got.Groups {
				if g.Service == tr.Service && strings.Contains(g.SampleMessage, c.Message) {
					matched = append(matched, g)
				}
			}
			if len(matched) != 1 {
				// Find the cause's group by its runs instead, so its count and location are
				// still checked.
				var byRuns []errorGroup
				for _, g := range got.Groups {
					if g.Service == tr.Service && len(g.RelatedRunIDs) > 0 && len(difference(g.RelatedRunIDs, runs)) == 0 {
						byRuns = append(byRuns, g)
					}
				}
				t.Errorf("%s: cause %s: want one group of %s whose message says %q, got %d; the group of its runs says %s; all groups:\n%s\nthe spans of one such run:\n%s",
					scope(service), c.Key, tr.Service, c.Message, len(matched), groupMessages(byRuns), describeGroups(got.Groups), dumpRun(t, tl, runs[0]))
				if len(byRuns) != 1 {
					continue
				}
				matched = byRuns
			}
			g := matched[0]
			if g.Count != len(runs) {
				t.Errorf("%s: cause %s: count = %d, want %d (one per run with the cause)", scope(service), c.Key, g.Count, len(runs))
			}
			if c.Generic != "" && strings.Contains(g.SampleMessage, c.Generic) {
				t.Errorf("%s: cause %s: sampleMessage %q carries the instrumentation's generic text", scope(service), c.Key, g.SampleMessage)
			}
			if g.Domain != c.Domain {
				t.Errorf("%s: cause %s: domain = %q, want %q", scope(service), c.Key, g.Domain, c.Domain)
			}
			if extra := difference(g.RelatedRunIDs, runs); len(g.RelatedRunIDs) == 0 || len(extra) > 0 {
				t.Errorf("%s: cause %s: relatedRunIds %v; want some of the %d runs with the cause, and only them (extra %v)", scope(service), c.Key, head(g.RelatedRunIDs), len(runs), extra)
			}
			if c.Throw != "" && (g.Location == nil || (*g.Location != c.Throw && !strings.HasPrefix(*g.Location, c.Throw+" "))) {
				t.Errorf("%s: cause %s: location = %s, want %s, the app's line that throws it", scope(service), c.Key, show(g.Location), c.Throw)
			}
		}
	}
}

func groupMessages(gs []errorGroup) string {
	if len(gs) == 0 {
		return "(no group holds only its runs)"
	}
	var out []string
	for _, g := range gs {
		out = append(out, fmt.Sprintf("%q", g.SampleMessage))
	}
	return strings.Join(out, " and ")
}

func describeGroups(gs []errorGroup) string {
	var b strings.Builder
	for _, g := range gs {
		fmt.Fprintf(&b, "  %3d× %s/%s %q type %s at %s (runs %d)\n", g.Count, g.Service, g.Domain, g.SampleMessage, show(g.ExceptionType), show(g.Location), len(g.RelatedRunIDs))
	}
	return b.String()
}

// checkFailedRuns opens one run of each cause: a failed run's answer leads with its cause; a
// run with a handled error is ok.
func checkFailedRuns(t *testing.T, tl tools, tr *Truth) {
	for _, c := range tr.Causes {
		id := tr.CauseRuns(c)[0]
		var got runDetail
		tl.Call(t, "get_run", map[string]any{"id": id, "maxSpans": 200}, &got)
		want := map[bool]string{true: "ok", false: "error"}[c.Handled]
		if got.Status != want {
			t.Errorf("cause %s: run %s has status %q, want %s\n%s", c.Key, id, got.Status, want, dumpRun(t, tl, id))
			continue
		}
		if c.Handled {
			continue
		}
		if got.ErrorMessage == nil || !strings.HasPrefix(*got.ErrorMessage, c.Message) && !strings.Contains(*got.ErrorMessage, c.Message) {
			t.Errorf("cause %s: run %s: errorMessage = %s, want the cause %q\n%s", c.Key, id, show(got.ErrorMessage), c.Message, dumpRun(t, tl, id))
		} else if c.Generic != "" && strings.Contains(*got.ErrorMessage, c.Generic) {
			t.Errorf("cause %s: run %s: errorMessage = %q carries the generic %q", c.Key, id, *got.ErrorMessage, c.Generic)
		}
		if !strings.Contains(got.Summary, c.Message) {
			t.Errorf("cause %s: run %s: summary %q does not name the cause %q", c.Key, id, got.Summary, c.Message)
		}
	}
}

func checkDB(t *testing.T, tl tools, tr *Truth) {
	var got dbReport
	tl.Call(t, "analyze_db_bottlenecks", map[string]any{"service": tr.Service, "limit": 20}, &got)
	if len(got.Operations) == 0 {
		t.Fatalf("no operations")
	}
	top := got.Operations[0]
	if top.Statement == nil || !strings.Contains(*top.Statement, tr.SlowStatement) {
		t.Errorf("operations[0] is %q (statement %s, %d×, %.1f ms), want the statement with %s that %s runs:\n%s",
			top.Operation, show(top.Statement), top.Count, top.TotalDurationMs, tr.SlowStatement, tr.SlowRoute, describeOps(got.Operations))
		return
	}
	if top.Count != tr.SlowCount() {
		t.Errorf("operations[0] ran %d times, want %d (once per %s)", top.Count, tr.SlowCount(), tr.SlowRoute)
	}
	if top.System == nil || !contains(tr.DBSystems, *top.System) {
		t.Errorf("operations[0].system = %s, want one of %v", show(top.System), tr.DBSystems)
	}
	if min := float64(tr.SlowCount()) * 200; top.TotalDurationMs < min*0.95 {
		t.Errorf("operations[0].totalDurationMs = %.1f, want at least %.0f: each run sleeps 200 ms or more", top.TotalDurationMs, min)
	}
}

func describeOps(ops []dbOperation) string {
	var b strings.Builder
	for i, o := range ops {
		fmt.Fprintf(&b, "  #%d %q %d× total %.1f ms system %s statement %s\n", i+1, o.Operation, o.Count, o.TotalDurationMs, show(o.System), show(o.Statement))
	}
	return b.String()
}

func checkLastJob(t *testing.T, tl tools, tr *Truth) {
	last := tr.Jobs[len(tr.Jobs)-1]
	var got jobResult
	tl.Call(t, "get_last_job_result", map[string]any{"jobName": last.Name}, &got)
	if !got.Found {
		t.Fatalf("found = false for job %s, which ran %d times", last.Name, len(tr.Jobs))
	}
	eq := func(field string, got *string, want string) {
		if got == nil || *got != want {
			t.Errorf("%s = %s, want %q", field, show(got), want)
		}
	}
	eq("jobId", got.JobID, last.ID)
	eq("status", got.Status, "error")
	eq("outcome", got.Outcome, "failed")
	eq("traceId", got.TraceID, last.TraceID)
	if got.ExitCode == nil || *got.ExitCode != 1 {
		t.Errorf("exitCode = %s, want 1", show(got.ExitCode))
	}
	if got.ErrorMessage == nil || !strings.Contains(*got.ErrorMessage, last.Cause.Message) {
		t.Errorf("errorMessage = %s, want %q", show(got.ErrorMessage), last.Cause.Message)
	}
}

// dumpRun is the spans and logs of one run as runlens stored them, for a failure message.
func dumpRun(t *testing.T, tl tools, id string) string {
	t.Helper()
	var got runDetail
	tl.Call(t, "get_run", map[string]any{"id": id, "maxSpans": 100, "detail": "full"}, &got)
	var b strings.Builder
	fmt.Fprintf(&b, "    run %s: status %s, errorMessage %s\n", id, got.Status, show(got.ErrorMessage))
	for _, s := range got.Spans {
		fmt.Fprintf(&b, "    %s%s [%s] %s", strings.Repeat("  ", s.Depth), s.Name, s.Service, s.Status)
		if s.ErrorMessage != nil {
			fmt.Fprintf(&b, " %q", *s.ErrorMessage)
		}
		if s.Location != nil {
			fmt.Fprintf(&b, " at %s", *s.Location)
		}
		b.WriteByte('\n')
	}
	for _, l := range got.Logs {
		fmt.Fprintf(&b, "    log %s %q\n", l.Severity, l.Message)
	}
	b.WriteString("    as stored:\n")
	b.WriteString(rawTrace(t, tl.a, got.TraceID))
	return b.String()
}

func show[T any](p *T) string {
	if p == nil {
		return "absent"
	}
	b, _ := json.Marshal(*p)
	return string(b)
}

func contains(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

func difference(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !contains(b, x) {
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
