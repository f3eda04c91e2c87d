package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/conventions"
)

// CountActivity implements telemetry.ActivityCounter. Counts of spans and records add the
// activity rollup's whole buckets to counts of the partial buckets at the window's edges; run
// counts per domain come from the run rollup likewise.
func (b *Backend) CountActivity(ctx context.Context, q telemetry.StatusQuery, ask telemetry.Ask) (telemetry.Activity, bool, error) {
	var act telemetry.Activity
	handled, err := b.snapshot(ctx, ask.Conv, func(tx *sql.Tx) error {
		var err error
		act, err = activity(ctx, tx, q, ask.Conv)
		return err
	})
	return act, handled, err
}

// serviceTally accumulates one stored service name's counts in a window; the newest row of
// each table is either known exactly (from an edge) or known to lie in a bucket.
type serviceTally struct {
	spans, logs     int64
	spanMax, logMax int64 // exact newest timestamps (ns) seen in edges; 0 when none
	spanBkt, logBkt int64 // newest whole bucket holding rows; -1 when none
}

func activity(ctx context.Context, tx *sql.Tx, q telemetry.StatusQuery, conv *conventions.Conventions) (telemetry.Activity, error) {
	act := telemetry.Activity{Services: telemetry.ServiceTallies{}}
	sp, err := liveSplit(ctx, tx, q.Window)
	if err != nil {
		return act, err
	}
	per := map[string]*serviceTally{}
	tally := func(svc string) *serviceTally {
		t := per[svc]
		if t == nil {
			t = &serviceTally{spanBkt: -1, logBkt: -1}
			per[svc] = t
		}
		return t
	}
	if sp.lo < sp.hi {
		var f filter
		f.add("Bucket >= ? AND Bucket < ?", sp.lo, sp.hi)
		f.service("ServiceName", q.Service)
		err := eachRow(ctx, tx, `SELECT ServiceName, SUM(Spans), SUM(Logs),
			COALESCE(MAX(CASE WHEN Spans > 0 THEN Bucket END), -1), COALESCE(MAX(CASE WHEN Logs > 0 THEN Bucket END), -1)
			FROM `+ActivityTable+f.where()+` GROUP BY ServiceName`, f.args, func(scan func(...any) error) error {
			var svc string
			var spans, logs, spanBkt, logBkt int64
			if err := scan(&svc, &spans, &logs, &spanBkt, &logBkt); err != nil {
				return err
			}
			if spans == 0 && logs == 0 {
				return nil
			}
			t := tally(svc)
			t.spans += spans
			t.logs += logs
			t.spanBkt, t.logBkt = spanBkt, logBkt
			return nil
		})
		if err != nil {
			return act, fmt.Errorf("read activity: %w", err)
		}
	}
	spanServices, err := seekServices(ctx, tx, q.Service)
	if err != nil {
		return act, err
	}
	for _, e := range sp.edges {
		edge := func() filter {
			var f filter
			f.add("Timestamp >= ? AND Timestamp < ?", e[0], e[1])
			return f
		}
		f := edge()
		f.in("ServiceName", spanServices) // one seek per service in the index that starts with it
		if spanServices == nil {
			f.service("+ServiceName", q.Service)
		}
		if err := eachRow(ctx, tx, `SELECT ServiceName, COUNT(*), MAX(Timestamp) FROM `+TracesTable+f.where()+` GROUP BY ServiceName`,
			f.args, func(scan func(...any) error) error {
				var svc string
				var n, newest int64
				if err := scan(&svc, &n, &newest); err != nil {
					return err
				}
				t := tally(svc)
				t.spans += n
				t.spanMax = max(t.spanMax, newest)
				return nil
			}); err != nil {
			return act, fmt.Errorf("count spans: %w", err)
		}
		f = edge()
		f.service("ServiceName", q.Service)
		if err := eachRow(ctx, tx, `SELECT ServiceName, COUNT(*), MAX(Timestamp) FROM `+LogsTable+f.where()+` GROUP BY ServiceName`,
			f.args, func(scan func(...any) error) error {
				var svc string
				var n, newest int64
				if err := scan(&svc, &n, &newest); err != nil {
					return err
				}
				t := tally(svc)
				t.logs += n
				t.logMax = max(t.logMax, newest)
				return nil
			}); err != nil {
			return act, fmt.Errorf("count log records: %w", err)
		}
	}
	if err := newestInBuckets(ctx, tx, per); err != nil {
		return act, err
	}
	// Reported names: the stored empty name and a service named "unknown" are one service.
	for svc, t := range per {
		act.Services.Touch(telemetry.ServiceOf(svc), telemetry.NsToMs(max(t.spanMax, t.logMax))).Spans += t.spans
		act.Spans += t.spans
		act.Logs += t.logs
		act.NewestSpanMs = max(act.NewestSpanMs, telemetry.NsToMs(t.spanMax))
	}
	domains, runs, err := domainActivity(ctx, tx, q, conv, sp)
	if err != nil {
		return act, err
	}
	act.Domains = domains
	act.Scan = windowScan(q.Window, act.Spans+act.Logs+runs)
	return act, nil
}

// newestInBuckets finds the exact newest span and record of each service whose newest row lies
// in a whole bucket after any edge row: one query per table and bucket over that bucket's rows.
func newestInBuckets(ctx context.Context, tx *sql.Tx, per map[string]*serviceTally) error {
	type need struct {
		table  string
		bucket int64
	}
	wanted := map[need][]string{}
	for svc, t := range per {
		if t.spanBkt >= 0 && t.spanBkt*bucketNs > t.spanMax {
			k := need{TracesTable, t.spanBkt}
			wanted[k] = append(wanted[k], svc)
		}
		if t.logBkt >= 0 && t.logBkt*bucketNs > t.logMax {
			k := need{LogsTable, t.logBkt}
			wanted[k] = append(wanted[k], svc)
		}
	}
	for k, services := range wanted {
		// One MAX per service: a single seek to the end of its range in the index that starts
		// with the service (a GROUP BY over the services would read the bucket's every row).
		index := ` INDEXED BY otel_traces_service`
		if k.table == LogsTable {
			index = ``
		}
		for _, svc := range services {
			var newest sql.NullInt64
			if err := tx.QueryRowContext(ctx, `SELECT MAX(Timestamp) FROM `+k.table+index+` WHERE ServiceName = ? AND Timestamp >= ? AND
				Timestamp < ?`, svc, k.bucket*bucketNs, (k.bucket+1)*bucketNs).Scan(&newest); err != nil {
				return fmt.Errorf("find newest %s: %w", k.table, err)
			}
			if !newest.Valid {
				continue
			}
			if t := per[svc]; k.table == TracesTable {
				t.spanMax = max(t.spanMax, newest.Int64)
			} else {
				t.logMax = max(t.logMax, newest.Int64)
			}
		}
	}
	return nil
}

// domainActivity counts the runs of each configured domain whose root started in the window,
// from the run rollup and the edges' roots (the domains with runs); runs is how many roots
// that covers.
func domainActivity(ctx context.Context, tx *sql.Tx, q telemetry.StatusQuery, conv *conventions.Conventions, sp windowSplit) (
	map[string]telemetry.DomainActivity, int64, error) {
	names := conv.DomainNames()
	acts := make([]telemetry.DomainActivity, len(names))
	pos := make(map[string]int, len(names))
	for i, n := range names {
		acts[i].Domain = n
		pos[n] = i
	}
	newestBkt := make([]int64, len(names))
	newestNs := make([]int64, len(names))
	for i := range newestBkt {
		newestBkt[i] = -1
	}
	var runs int64
	add := func(domain string, seen, errored, bkt, ns int64) {
		runs += seen
		i, ok := pos[domain]
		if !ok {
			return
		}
		acts[i].SeenCount += seen
		acts[i].ErrorCount += errored
		newestBkt[i] = max(newestBkt[i], bkt)
		newestNs[i] = max(newestNs[i], ns)
	}
	if sp.lo < sp.hi {
		var f filter
		f.add("Bucket >= ? AND Bucket < ?", sp.lo, sp.hi)
		f.service("ServiceName", q.Service)
		if err := eachRow(ctx, tx, `SELECT Domain, SUM(Runs), SUM(ErroredRuns), COALESCE(MAX(CASE WHEN Runs > 0 THEN Bucket END), -1)
			FROM `+RunActivityTable+f.where()+` GROUP BY Domain`, f.args, func(scan func(...any) error) error {
			var domain string
			var seen, errored, bkt int64
			if err := scan(&domain, &seen, &errored, &bkt); err != nil {
				return err
			}
			add(domain, seen, errored, bkt, 0)
			return nil
		}); err != nil {
			return nil, 0, fmt.Errorf("read run activity: %w", err)
		}
	}
	for _, e := range sp.edges {
		var f filter
		f.add("IsRoot = 1")
		f.add("Timestamp >= ? AND Timestamp < ?", e[0], e[1])
		f.service("ServiceName", q.Service)
		if err := eachRow(ctx, tx, `SELECT COALESCE(Domain, ''), COUNT(*), SUM(RunErrored), MAX(Timestamp) FROM `+TracesTable+
			f.where()+` GROUP BY 1`, f.args, func(scan func(...any) error) error {
			var domain string
			var seen, errored, newest int64
			if err := scan(&domain, &seen, &errored, &newest); err != nil {
				return err
			}
			add(domain, seen, errored, -1, newest)
			return nil
		}); err != nil {
			return nil, 0, fmt.Errorf("count runs: %w", err)
		}
	}
	for i := range acts {
		if b := newestBkt[i]; b >= 0 && b*bucketNs > newestNs[i] {
			query, args := newestRunQuery(acts[i].Domain, q.Service, b)
			var newest int64
			err := tx.QueryRowContext(ctx, query, args...).Scan(&newest)
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return nil, 0, fmt.Errorf("find newest run: %w", err)
			}
			newestNs[i] = max(newestNs[i], newest)
		}
		acts[i].MostRecentMs = telemetry.NsToMs(newestNs[i])
	}
	seen := map[string]telemetry.DomainActivity{}
	for _, a := range acts {
		if a.SeenCount > 0 {
			seen[a.Domain] = a
		}
	}
	return seen, runs, nil
}

// newestRunQuery is the query of domain's newest root in bucket b (of service's, when set):
// one seek to the end of the domain's range of the bucket in the index that orders each
// domain's roots by time, walked back from there to the service's newest root when one is
// named.
func newestRunQuery(domain, service string, b int64) (string, []any) {
	var f filter
	f.add("IsRoot = 1")
	f.add("Domain = ?", domain)
	f.add("Timestamp >= ? AND Timestamp < ?", b*bucketNs, (b+1)*bucketNs)
	f.service("ServiceName", service)
	return `SELECT Timestamp FROM ` + TracesTable + ` INDEXED BY otel_traces_domain_runs` + f.where() +
		` ORDER BY Timestamp DESC LIMIT 1`, f.args
}

// seekServices lists the stored service names whose spans an edge reads one index seek each:
// those q.Service stands for, or every stored one; nil when there are too many to seek.
func seekServices(ctx context.Context, q queryer, service string) ([]string, error) {
	switch service {
	case "":
	case telemetry.UnknownService:
		return []string{"", telemetry.UnknownService}, nil
	default:
		return []string{service}, nil
	}
	names, err := storedServices(ctx, q, maxSeekServices)
	if err != nil {
		return nil, fmt.Errorf("list services: %w", err)
	}
	if len(names) > maxSeekServices {
		return nil, nil
	}
	return names, nil
}
