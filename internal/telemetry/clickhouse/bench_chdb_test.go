//go:build chdb

package clickhouse_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runlens/runlens/internal/telemetry/engine"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/clickhouse"
	"github.com/runlens/runlens/internal/telemetry/clickhouse/chfront"
	"github.com/runlens/runlens/internal/telemetry/conventions"
	"github.com/runlens/runlens/internal/telemetry/store"
)

// b10Spans generates n spans over the 24 h before end inside ClickHouse, from numbers(): traces
// of five spans (an HTTP server span, a PostgreSQL and a MySQL query with literals in their
// statements, an internal step that is a job for 1 trace in 100, a Kafka publish), 50
// services, 1 trace in 50 failing in its first query (with an exception event) and its root.
func b10Spans(tb chfront.Tables, n int64, end time.Time) string {
	traces := n / 5
	startNs := end.Add(-24 * time.Hour).UnixNano()
	return fmt.Sprintf(`INSERT INTO %[1]s.%[2]s (Timestamp, TraceId, SpanId, ParentSpanId, TraceState, SpanName, SpanKind, ServiceName,
  ResourceAttributes, ScopeName, ScopeVersion, SpanAttributes, Duration, StatusCode, StatusMessage,
  "Events.Timestamp", "Events.Name", "Events.Attributes", "Links.TraceId", "Links.SpanId", "Links.TraceState", "Links.Attributes")
SELECT fromUnixTimestamp64Nano(toInt64(%[3]d + tr * intDiv(86400000000000, %[4]d) + pos * 1000000)) AS ts,
  lower(hex(MD5(toString(tr)))) AS trace, substring(lower(hex(MD5(toString(number)))), 1, 16), 
  if(pos = 0, '', substring(lower(hex(MD5(toString(tr * 5)))), 1, 16)), '',
  [concat('GET /api/', toString(tr %% 7)), 'SELECT orders', 'SELECT users', 'process', 'publish'][pos + 1],
  ['Server', 'Client', 'Client', 'Internal', 'Producer'][pos + 1], svc, map('service.name', svc), 'bench', '',
  multiIf(pos = 0, map('http.request.method', 'GET', 'http.route', concat('/api/', toString(tr %% 7))),
          pos = 1, map('db.system.name', 'postgresql', 'db.query.text', concat('SELECT * FROM orders WHERE id = ', toString(tr %% 1000)), 'db.operation.name', 'SELECT', 'db.collection.name', 'orders'),
          pos = 2, map('db.system', 'mysql', 'db.statement', concat('SELECT name FROM users WHERE id = ', toString(tr %% 500))),
          pos = 3 AND tr %% 100 = 0, map('job.id', concat('job-', toString(tr)), 'job.name', concat('nightly-', toString(tr %% 8)), 'job.status', if(failed, 'failed', 'succeeded')),
          pos = 4, map('messaging.system', 'kafka'), map()),
  100000 + cityHash64(number) %% 300000000, if(failed AND pos <= 1, 'Error', 'Unset'), if(failed AND pos <= 1, 'timed out', ''),
  if(failed AND pos = 1, [ts], []), if(failed AND pos = 1, ['exception'], []),
  if(failed AND pos = 1, [map('exception.type', 'TimeoutError', 'exception.message', concat('query timed out after ', toString(tr %% 90), ' ms'))], []),
  [], [], [], []
FROM (SELECT number, intDiv(number, 5) AS tr, number %% 5 AS pos, concat('svc-', toString(tr %% 50)) AS svc, cityHash64(tr) %% 50 = 0 AS failed
      FROM numbers(%[5]d))`, "`"+tb.Database+"`", "`"+tb.Traces+"`", startNs, traces, n)
}

// b10Logs generates m log records, spread over the same traces, an error record in each
// failing trace's first query span.
func b10Logs(tb chfront.Tables, n, m int64, end time.Time) string {
	traces := n / 5
	startNs := end.Add(-24 * time.Hour).UnixNano()
	return fmt.Sprintf(`INSERT INTO %[1]s.%[2]s (Timestamp, TraceId, SpanId, TraceFlags, SeverityText, SeverityNumber, ServiceName, Body,
  ResourceSchemaUrl, ResourceAttributes, ScopeSchemaUrl, ScopeName, ScopeVersion, ScopeAttributes, LogAttributes, EventName)
SELECT fromUnixTimestamp64Nano(toInt64(%[3]d + tr * intDiv(86400000000000, %[4]d) + 2000000)), lower(hex(MD5(toString(tr)))),
  substring(lower(hex(MD5(toString(tr * 5 + 1)))), 1, 16), 1, if(failed, 'ERROR', 'INFO'), if(failed, 17, 9), svc,
  if(failed, concat('order ', toString(tr %% 1000), ' failed: timeout'), concat('handled request ', toString(number))),
  '', map('service.name', svc), '', 'bench', '', map(), map(), ''
FROM (SELECT number, intDiv(number * %[4]d, %[5]d) AS tr, concat('svc-', toString(tr %% 50)) AS svc, cityHash64(tr) %% 50 = 0 AS failed
      FROM numbers(%[5]d))`, "`"+tb.Database+"`", "`"+tb.Logs+"`", startNs, traces, m)
}

// BenchmarkB10 measures every telemetry question through the adapter (clickhouse-go over HTTP
// in front of chDB) on the exporter's tables, at 1 h and 24 h windows, for each dataset size
// in RUNLENS_B10_SPANS (default 1000000,3000000; logs are a fifth), and prints a table per
// size. Run it once: go test -tags chdb -run '^$' -bench B10 -benchtime 1x.
func BenchmarkB10(b *testing.B) {
	e := chdbEngine(b)
	prof := &profile{on: os.Getenv("RUNLENS_B10_PROFILE") != ""}
	addr := front(b, e, &chfront.Front{Timed: prof.add})
	sizes := []int64{1_000_000, 3_000_000}
	if v := os.Getenv("RUNLENS_B10_SPANS"); v != "" {
		sizes = nil
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.ParseInt(f, 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			sizes = append(sizes, n)
		}
	}
	storeSizes := map[int64]bool{1_000_000: true}
	if v, ok := os.LookupEnv("RUNLENS_B10_STORE_SPANS"); ok {
		storeSizes = map[int64]bool{}
		for _, f := range strings.Split(v, ",") {
			if n, err := strconv.ParseInt(f, 10, 64); err == nil {
				storeSizes[n] = true
			}
		}
	}
	// RUNLENS_B10_TOOLS and RUNLENS_B10_WINDOWS (comma-separated; empty: all) narrow the cases.
	only := func(env, name string) bool {
		v := os.Getenv(env)
		return v == "" || slices.Contains(strings.Split(v, ","), name)
	}
	iters := 10
	if v, err := strconv.Atoi(os.Getenv("RUNLENS_BENCH_ITERS")); err == nil && v > 0 {
		iters = v
	}
	end := time.Now().Truncate(time.Minute)
	for _, n := range sizes {
		tb := freshTables(b, e)
		t0 := time.Now()
		if err := e.Exec(b10Spans(tb, n, end), b10Logs(tb, n, n/5, end)); err != nil {
			b.Fatal(err)
		}
		load := time.Since(t0)
		// chDB runs one query at a time, so the queries one answer sends at once wait in the
		// HTTP interface for each other; the client's read timeout (MaxExecutionTime plus the
		// dial timeout) must cover that queue at 10M spans on a loaded machine.
		src := engine.New(open(b, addr, tb.Database, clickhouse.Options{MaxExecutionTime: 300 * time.Second}), nil)
		ctx := context.Background()
		// At the sizes in RUNLENS_B10_STORE_SPANS (default 1000000), the same spans and records
		// are copied into an embedded store, and each call is made on both, interleaved.
		var local telemetry.Source
		if storeSizes[n] {
			t0 := time.Now()
			local = engine.New(store.NewBackend(copyToStore(b, e, tb, int(max(n/100_000, 1)))), nil)
			b.Logf("copied %d spans into the embedded store in %s", n, time.Since(t0).Round(time.Second))
		}
		var rows strings.Builder
		if local != nil {
			fmt.Fprintf(&rows, "| tool | window | p50 ms | p95 ms | limited | store p50 ms | store p95 ms | p95 ratio | same answer |\n|---|---|---:|---:|---|---:|---:|---:|---|\n")
		} else {
			fmt.Fprintf(&rows, "| tool | window | p50 ms | p95 ms | limited |\n|---|---|---:|---:|---|\n")
		}
		for _, win := range []struct {
			name string
			d    time.Duration
		}{{"1h", time.Hour}, {"24h", 24 * time.Hour}} {
			if !only("RUNLENS_B10_WINDOWS", win.name) {
				continue
			}
			w := telemetry.Window{StartMs: end.Add(-win.d).UnixMilli(), EndMs: end.UnixMilli()}
			failed, err := src.Runs(ctx, telemetry.RunsQuery{Window: w, Status: telemetry.StatusError, Limit: 1})
			if err != nil || len(failed.Runs) == 0 {
				b.Fatalf("no failed run to read (total %d, limited %v): %v", failed.Total, failed.Scan.Limited, err)
			}
			cases := []struct {
				tool string
				call func(src telemetry.Source) (any, bool, error)
			}{
				{"get_app_status", func(src telemetry.Source) (any, bool, error) {
					r, err := src.Status(ctx, telemetry.StatusQuery{Window: w})
					return r, r.Scan.Limited, err
				}},
				{"list_runs", func(src telemetry.Source) (any, bool, error) {
					r, err := src.Runs(ctx, telemetry.RunsQuery{Window: w})
					return r, r.Scan.Limited, err
				}},
				{"get_run", func(src telemetry.Source) (any, bool, error) {
					r, err := src.Run(ctx, telemetry.RunQuery{ID: failed.Runs[0].TraceID})
					return r, r.Limited, err
				}},
				{"get_recent_errors", func(src telemetry.Source) (any, bool, error) {
					r, err := src.Errors(ctx, telemetry.ErrorsQuery{Window: w})
					return r, r.Scan.Limited, err
				}},
				{"get_last_job_result", func(src telemetry.Source) (any, bool, error) {
					r, err := src.LastJob(ctx, telemetry.JobQuery{Window: w})
					return r, false, err
				}},
				{"analyze_service_performance", func(src telemetry.Source) (any, bool, error) {
					r, err := src.ServicePerformance(ctx, telemetry.PerformanceQuery{Window: w, Service: "svc-7"})
					return r, r.Scan.Limited, err
				}},
				// An agent working on one service asks about that service.
				{"get_app_status/service", func(src telemetry.Source) (any, bool, error) {
					r, err := src.Status(ctx, telemetry.StatusQuery{Window: w, Service: "svc-7"})
					return r, r.Scan.Limited, err
				}},
				{"get_recent_errors/service", func(src telemetry.Source) (any, bool, error) {
					r, err := src.Errors(ctx, telemetry.ErrorsQuery{Window: w, Service: "svc-7"})
					return r, r.Scan.Limited, err
				}},
				{"analyze_db_bottlenecks", func(src telemetry.Source) (any, bool, error) {
					r, err := src.DBOperations(ctx, telemetry.DBQuery{Window: w})
					return r, r.Scan.Limited, err
				}},
			}
			for _, c := range cases {
				if !only("RUNLENS_B10_TOOLS", c.tool) {
					continue
				}
				lat := make([]time.Duration, 0, iters)
				var slat []time.Duration
				limited := false
				same := "—"
				for i := 0; i <= iters; i++ { // the first call of each warms up
					t0 := time.Now()
					got, lim, err := c.call(src)
					if err != nil {
						b.Fatalf("%s %s: %v", c.tool, win.name, err)
					}
					if i > 0 {
						lat = append(lat, time.Since(t0))
					}
					limited = limited || lim
					if local == nil {
						continue
					}
					t0 = time.Now()
					want, _, err := c.call(local)
					if err != nil {
						b.Fatalf("%s %s on the store: %v", c.tool, win.name, err)
					}
					if i > 0 {
						slat = append(slat, time.Since(t0))
					} else if diff := cmp.Diff(want, got, sameAnswer(want)...); diff != "" {
						same = "no"
						b.Logf("%s %s: ClickHouse differs from the store (-store +clickhouse):\n%s", c.tool, win.name, diff)
					} else {
						same = "yes"
					}
				}
				if prof.on {
					prof.start()
					t0 := time.Now()
					if _, _, err := c.call(src); err != nil {
						b.Fatal(err)
					}
					b.Logf("profile %s %s at %d spans: %s", c.tool, win.name, n, prof.report(time.Since(t0)))
				}
				slices.Sort(lat)
				p50, p95 := lat[telemetry.RankIndex(len(lat), 0.5)], lat[telemetry.RankIndex(len(lat), 0.95)]
				fmt.Fprintf(&rows, "| %s | %s | %.0f | %.0f | %v |", c.tool, win.name, ms(p50), ms(p95), limited)
				if local != nil {
					slices.Sort(slat)
					sp50, sp95 := slat[telemetry.RankIndex(len(slat), 0.5)], slat[telemetry.RankIndex(len(slat), 0.95)]
					fmt.Fprintf(&rows, " %.1f | %.1f | %.0f× | %s |", ms(sp50), ms(sp95), float64(p95)/float64(max(sp95, time.Microsecond)), same)
				}
				rows.WriteString("\n")
				b.ReportMetric(ms(p95), fmt.Sprintf("%s-%s-%dM-p95-ms", c.tool, win.name, n/1_000_000))
			}
			uptimeLine(&rows)
		}
		if only("RUNLENS_B10_WINDOWS", "24h") && only("RUNLENS_B10_TOOLS", "floors") {
			b10Floors(b, e, tb, end, iters, &rows)
		}
		b.Logf("B10 at %d spans + %d log records (loaded in %s), %d calls per case after one warm-up:\n%s", n, n/5, load.Round(time.Second), iters, rows.String())
		if err := e.Exec("DROP DATABASE `" + tb.Database + "`"); err != nil {
			b.Fatal(err)
		}
	}
}

// b10Floors times, on the engine itself (no HTTP, no client, no Go), the one read each of the
// slowest answers cannot do without at 24 h, as a floor under their latency:
//
//   - the failing traces' spans: an occurrence's origin, folding and run depend on every span
//     of its trace, wherever the sort key put it, so get_app_status and get_recent_errors read
//     the spans of every trace with an error span in the window — TraceId of every granule,
//     checked against the failing traces' ids, since failing traces lie in every granule;
//     and the same with the attributes and events the rules read (every granule's, since
//     the kept rows lie in every granule);
//   - the database spans' operation fields: analyze_db_bottlenecks groups the window's
//     database spans by the conventions' system, statement, summary, operation and
//     collection, each the first non-empty value under its keys, one map lookup per key per
//     span (grouped here by a hash of those values, without the statements' normalization).
func b10Floors(b *testing.B, e *chfront.Engine, tb chfront.Tables, end time.Time, iters int, rows *strings.Builder) {
	t := "`" + tb.Database + "`.`" + tb.Traces + "`"
	day := fmt.Sprintf("Timestamp >= fromUnixTimestamp64Nano(%d) AND Timestamp < fromUnixTimestamp64Nano(%d)",
		end.Add(-24*time.Hour).UnixNano(), end.UnixNano())
	k := conventions.Default().DBKeys
	var values, present []string
	for _, key := range slices.Concat(k.SystemKeys, k.StatementKeys, k.SummaryKeys, k.OperationKeys, k.CollectionKeys) {
		values = append(values, fmt.Sprintf("SpanAttributes['%s']", key))
	}
	for _, key := range slices.Concat(k.StatementKeys, k.SummaryKeys, k.OperationKeys) {
		present = append(present, fmt.Sprintf("mapContains(SpanAttributes, '%s')", key))
	}
	floors := []struct{ name, tools, sql string }{
		{"the failing traces' spans", "get_app_status, get_recent_errors",
			"SELECT count() FROM " + t + " WHERE " + day + " AND TraceId IN (SELECT TraceId FROM " + t + " WHERE " + day + " AND StatusCode = 'Error')"},
		{"the failing traces' spans with their attributes and events", "get_app_status, get_recent_errors",
			"SELECT count() FROM " + t + " WHERE " + day + " AND TraceId IN (SELECT TraceId FROM " + t + " WHERE " + day + " AND StatusCode = 'Error')" +
				" AND cityHash64(mapKeys(SpanAttributes), mapValues(SpanAttributes), arrayMap(m -> mapValues(m), `Events.Attributes`)) != 0"},
		{"the database spans' operation fields", "analyze_db_bottlenecks",
			"SELECT count() FROM (SELECT cityHash64(" + strings.Join(values, ", ") + ") AS h, count() FROM " + t + " WHERE " + day +
				" AND (" + strings.Join(present, " OR ") + ") GROUP BY h)"},
	}
	fmt.Fprintf(rows, "\nFloors at 24 h, on the engine alone:\n\n| read | under | p50 ms | p95 ms |\n|---|---|---:|---:|\n")
	for _, f := range floors {
		var lat []time.Duration
		for i := 0; i <= iters; i++ {
			t0 := time.Now()
			out, err := e.Query(f.sql, "TSV")
			if err != nil {
				b.Fatalf("floor %s: %v", f.name, err)
			}
			if n, _ := strconv.Atoi(strings.TrimSpace(string(out))); n == 0 {
				b.Fatalf("floor %s read nothing", f.name)
			}
			if i > 0 {
				lat = append(lat, time.Since(t0))
			}
		}
		slices.Sort(lat)
		p50, p95 := lat[telemetry.RankIndex(len(lat), 0.5)], lat[telemetry.RankIndex(len(lat), 0.95)]
		fmt.Fprintf(rows, "| %s | %s | %.0f | %.0f |\n", f.name, f.tools, ms(p50), ms(p95))
	}
	uptimeLine(rows)
}

// profile records the queries one call sent (RUNLENS_B10_PROFILE=1): how many, and the
// engine's time for each, its parameters apart.
type profile struct {
	on      bool
	mu      sync.Mutex
	queries []profiled
}

type profiled struct {
	sql            string
	prelude, query time.Duration
}

func (p *profile) add(sql string, prelude, query time.Duration) {
	if !p.on {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.queries = append(p.queries, profiled{sql, prelude, query})
}

func (p *profile) start() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.queries = nil
}

func (p *profile) report(wall time.Duration) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var pre, q time.Duration
	var lines strings.Builder
	for _, x := range p.queries {
		pre, q = pre+x.prelude, q+x.query
		sql := strings.Join(strings.Fields(x.sql), " ")
		if len(sql) > 160 && os.Getenv("RUNLENS_B10_PROFILE") != "full" {
			sql = sql[:160] + "…"
		}
		fmt.Fprintf(&lines, "\n    params %5.1f ms, query %6.1f ms: %s", ms(x.prelude), ms(x.query), sql)
	}
	return fmt.Sprintf("%d queries, wall %.1f ms, params %.1f ms, engine %.1f ms, rest %.1f ms%s",
		len(p.queries), ms(wall), ms(pre), ms(q), ms(wall-pre-q), lines.String())
}

// uptimeLine notes the machine's load average under a table (the benchmark shares 2 cores).
func uptimeLine(w *strings.Builder) {
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		fmt.Fprintf(w, "(load average: %s)\n", strings.Join(strings.Fields(string(b))[:3], " "))
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// sameAnswer is what "the same answer" means between the store and ClickHouse: equal field by
// field, except the scanned counts and, where the store answered from its duration sketches,
// the percentiles, which must then agree within the relative error the store states
// (ClickHouse's are exact).
func sameAnswer(store any) []cmp.Option {
	opts := []cmp.Option{cmpopts.EquateEmpty(), cmpopts.IgnoreFields(telemetry.Scan{}, "Scanned")}
	var tol float64
	switch r := store.(type) {
	case telemetry.Performance:
		tol = r.PercentileError
		opts = append(opts, cmpopts.IgnoreFields(telemetry.Performance{}, "PercentileError"))
	case telemetry.DBReport:
		tol = r.PercentileError
		opts = append(opts, cmpopts.IgnoreFields(telemetry.DBReport{}, "PercentileError"))
	}
	if tol == 0 {
		return opts
	}
	percentile := func(p cmp.Path) bool {
		f, ok := p.Last().(cmp.StructField)
		return ok && (f.Name() == "P50Ms" || f.Name() == "P95Ms" || f.Name() == "P99Ms")
	}
	within := func(a, b float64) bool { return math.Abs(a-b) <= tol*math.Max(math.Abs(a), math.Abs(b))+1e-9 }
	return append(opts, cmp.FilterPath(percentile, cmp.Comparer(within)))
}
