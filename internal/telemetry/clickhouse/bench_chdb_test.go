//go:build chdb

package clickhouse_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/clickhouse"
	"github.com/runlens/runlens/internal/telemetry/clickhouse/chfront"
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
	e := engine(b)
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
		src := telemetry.NewEngine(open(b, addr, tb.Database, clickhouse.Options{MaxExecutionTime: 60 * time.Second}), nil)
		ctx := context.Background()
		var rows strings.Builder
		fmt.Fprintf(&rows, "| tool | window | p50 ms | p95 ms | limited |\n|---|---|---:|---:|---|\n")
		for _, win := range []struct {
			name string
			d    time.Duration
		}{{"1h", time.Hour}, {"24h", 24 * time.Hour}} {
			w := telemetry.Window{StartMs: end.Add(-win.d).UnixMilli(), EndMs: end.UnixMilli()}
			failed, err := src.Runs(ctx, telemetry.RunsQuery{Window: w, Status: telemetry.StatusError, Limit: 1})
			if err != nil || len(failed.Runs) == 0 {
				b.Fatalf("no failed run to read (total %d, limited %v): %v", failed.Total, failed.Scan.Limited, err)
			}
			cases := []struct {
				tool string
				call func() (bool, error)
			}{
				{"get_app_status", func() (bool, error) {
					r, err := src.Status(ctx, telemetry.StatusQuery{Window: w})
					return r.Scan.Limited, err
				}},
				{"list_runs", func() (bool, error) {
					r, err := src.Runs(ctx, telemetry.RunsQuery{Window: w})
					return r.Scan.Limited, err
				}},
				{"get_run", func() (bool, error) {
					r, err := src.Run(ctx, telemetry.RunQuery{ID: failed.Runs[0].TraceID})
					return r.Limited, err
				}},
				{"get_recent_errors", func() (bool, error) {
					r, err := src.Errors(ctx, telemetry.ErrorsQuery{Window: w})
					return r.Scan.Limited, err
				}},
				{"get_last_job_result", func() (bool, error) { _, err := src.LastJob(ctx, telemetry.JobQuery{Window: w}); return false, err }},
				{"analyze_service_performance", func() (bool, error) {
					r, err := src.ServicePerformance(ctx, telemetry.PerformanceQuery{Window: w, Service: "svc-7"})
					return r.Scan.Limited, err
				}},
				{"analyze_db_bottlenecks", func() (bool, error) {
					r, err := src.DBOperations(ctx, telemetry.DBQuery{Window: w})
					return r.Scan.Limited, err
				}},
			}
			for _, c := range cases {
				lat := make([]time.Duration, 0, iters)
				limited := false
				for i := 0; i <= iters; i++ {
					t0 := time.Now()
					lim, err := c.call()
					if err != nil {
						b.Fatalf("%s %s: %v", c.tool, win.name, err)
					}
					if i > 0 { // the first call warms up
						lat = append(lat, time.Since(t0))
					}
					limited = limited || lim
				}
				if prof.on {
					prof.start()
					t0 := time.Now()
					if _, err := c.call(); err != nil {
						b.Fatal(err)
					}
					b.Logf("profile %s %s at %d spans: %s", c.tool, win.name, n, prof.report(time.Since(t0)))
				}
				slices.Sort(lat)
				p50, p95 := lat[telemetry.RankIndex(len(lat), 0.5)], lat[telemetry.RankIndex(len(lat), 0.95)]
				fmt.Fprintf(&rows, "| %s | %s | %.0f | %.0f | %v |\n", c.tool, win.name, ms(p50), ms(p95), limited)
				b.ReportMetric(ms(p95), fmt.Sprintf("%s-%s-%dM-p95-ms", c.tool, win.name, n/1_000_000))
			}
		}
		b.Logf("B10 at %d spans + %d log records (loaded in %s), %d calls per case after one warm-up:\n%s", n, n/5, load.Round(time.Second), iters, rows.String())
		if err := e.Exec("DROP DATABASE `" + tb.Database + "`"); err != nil {
			b.Fatal(err)
		}
	}
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
		if len(sql) > 160 {
			sql = sql[:160] + "…"
		}
		fmt.Fprintf(&lines, "\n    params %5.1f ms, query %6.1f ms: %s", ms(x.prelude), ms(x.query), sql)
	}
	return fmt.Sprintf("%d queries, wall %.1f ms, params %.1f ms, engine %.1f ms, rest %.1f ms%s",
		len(p.queries), ms(wall), ms(pre), ms(q), ms(wall-pre-q), lines.String())
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
