package store

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/runlens/runlens/internal/telemetry"
)

// Status summarises the window: span, record and error counts per service and run counts per
// domain. The counts add the activity rollups of the window's whole buckets to counts of the
// partial buckets at its edges, so a day costs a few thousand rollup rows and at most ten
// minutes of rows; they do not depend on the conventions. The domains come from the run rollup
// too when the derived columns hold the querier's conventions, and from the window's root
// spans' attributes otherwise.
func (q *Querier) Status(ctx context.Context, sq telemetry.StatusQuery) (telemetry.Status, error) {
	derived, err := q.derived(ctx)
	if err != nil {
		return telemetry.Status{}, err
	}
	return q.status(ctx, sq, derived)
}

// windowSplit divides a window in ns into whole rollup buckets [lo, hi) and the partial ranges
// at its edges that must be counted from rows.
type windowSplit struct {
	lo, hi int64      // buckets; lo == hi when the window holds no whole bucket
	edges  [][2]int64 // [start, end) ns ranges, oldest first
}

func splitWindow(w telemetry.Window) windowSplit {
	start, end := w.StartMs*1e6, w.EndMs*1e6
	if end <= start {
		return windowSplit{}
	}
	lo := (start + bucketNs - 1) / bucketNs
	hi := end / bucketNs
	if lo >= hi {
		return windowSplit{edges: [][2]int64{{start, end}}}
	}
	sp := windowSplit{lo: lo, hi: hi}
	if s := lo * bucketNs; start < s {
		sp.edges = append(sp.edges, [2]int64{start, s})
	}
	if e := hi * bucketNs; e < end {
		sp.edges = append(sp.edges, [2]int64{e, end})
	}
	return sp
}

// serviceTally accumulates one service's counts in a window; the newest row of each table is
// either known exactly (from an edge) or known to lie in a bucket.
type serviceTally struct {
	telemetry.ServiceActivity
	logs, logErrors int64
	spanMax, logMax int64 // exact newest timestamps (ns) seen in edges; 0 when none
	spanBkt, logBkt int64 // newest whole bucket holding rows; -1 when none
}

func (q *Querier) status(ctx context.Context, sq telemetry.StatusQuery, derived bool) (telemetry.Status, error) {
	st := telemetry.Status{}
	sp := splitWindow(sq.Window)
	per := map[string]*serviceTally{}
	tally := func(svc string) *serviceTally {
		t := per[svc]
		if t == nil {
			t = &serviceTally{ServiceActivity: telemetry.ServiceActivity{Service: serviceOut(svc)}, spanBkt: -1, logBkt: -1}
			per[svc] = t
		}
		return t
	}
	var scanned int64
	if sp.lo < sp.hi {
		var f filter
		f.add("Bucket >= ? AND Bucket < ?", sp.lo, sp.hi)
		f.service(sq.Service)
		rows, err := q.store.DB().QueryContext(ctx, `SELECT ServiceName, SUM(Spans), SUM(SpanErrors), SUM(Logs), SUM(LogErrors),
			COALESCE(MAX(CASE WHEN Spans > 0 THEN Bucket END), -1), COALESCE(MAX(CASE WHEN Logs > 0 THEN Bucket END), -1)
			FROM `+ActivityTable+f.where()+` GROUP BY ServiceName`, f.args...)
		if err != nil {
			return st, fmt.Errorf("read activity: %w", err)
		}
		for rows.Next() {
			var svc string
			var spans, spanErrs, logs, logErrs, spanBkt, logBkt int64
			if err := rows.Scan(&svc, &spans, &spanErrs, &logs, &logErrs, &spanBkt, &logBkt); err != nil {
				rows.Close()
				return st, fmt.Errorf("read activity: %w", err)
			}
			if spans == 0 && logs == 0 {
				continue
			}
			t := tally(svc)
			t.Spans += spans
			t.Errors += spanErrs
			t.logs += logs
			t.logErrors += logErrs
			t.spanBkt, t.logBkt = spanBkt, logBkt
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return st, fmt.Errorf("read activity: %w", err)
		}
	}
	spanServices, err := q.serviceNames(ctx, sq.Service)
	if err != nil {
		return st, err
	}
	for _, e := range sp.edges {
		for _, table := range []string{TracesTable, LogsTable} {
			var f filter
			f.add("Timestamp >= ? AND Timestamp < ?", e[0], e[1])
			if table == TracesTable {
				f.services(spanServices)
			} else {
				f.service(sq.Service)
			}
			rows, err := q.store.DB().QueryContext(ctx, `SELECT ServiceName, COUNT(*), SUM(IsError), MAX(Timestamp) FROM `+
				table+f.where()+` GROUP BY ServiceName`, f.args...)
			if err != nil {
				return st, fmt.Errorf("count %s: %w", table, err)
			}
			for rows.Next() {
				var svc string
				var n, errs, newest int64
				if err := rows.Scan(&svc, &n, &errs, &newest); err != nil {
					rows.Close()
					return st, fmt.Errorf("count %s: %w", table, err)
				}
				t := tally(svc)
				if table == TracesTable {
					t.Spans += n
					t.Errors += errs
					t.spanMax = max(t.spanMax, newest)
				} else {
					t.logs += n
					t.logErrors += errs
					t.logMax = max(t.logMax, newest)
				}
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return st, fmt.Errorf("count %s: %w", table, err)
			}
		}
	}
	if err := q.newestInBuckets(ctx, per); err != nil {
		return st, err
	}
	for _, t := range per {
		st.Spans += t.Spans
		st.Logs += t.logs
		st.Errors += t.Errors + t.logErrors
		scanned += t.Spans + t.logs
		st.NewestSpanMs = max(st.NewestSpanMs, telemetry.NsToMs(t.spanMax))
		t.LastSeenMs = telemetry.NsToMs(max(t.spanMax, t.logMax))
		t.Errors += t.logErrors
		st.ServiceActivity = append(st.ServiceActivity, t.ServiceActivity)
	}
	st.Services = int64(len(per))
	slices.SortFunc(st.ServiceActivity, func(a, b telemetry.ServiceActivity) int {
		return cmp.Or(cmp.Compare(b.Spans, a.Spans), cmp.Compare(a.Service, b.Service))
	})
	if n := cmp.Or(sq.MaxServices, 20); len(st.ServiceActivity) > n {
		st.ServiceActivity = st.ServiceActivity[:n]
	}
	if !derived {
		domains, runs, limited, err := q.domainActivity(ctx, sq)
		if err != nil {
			return st, err
		}
		st.Domains = domains
		st.Scan = scanOf(sq.Window, int(scanned)+runs, limited)
		return st, nil
	}
	domains, runs, err := q.domainsDerived(ctx, sq, sp)
	if err != nil {
		return st, err
	}
	st.Domains = domains
	st.Scan = scanOf(sq.Window, int(scanned+runs), false)
	return st, nil
}

// newestInBuckets finds the exact newest span and record of each service whose newest row lies
// in a whole bucket after any edge row: one query per table and bucket over that bucket's rows.
func (q *Querier) newestInBuckets(ctx context.Context, per map[string]*serviceTally) error {
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
		var f filter
		f.add("Timestamp >= ? AND Timestamp < ?", k.bucket*bucketNs, (k.bucket+1)*bucketNs)
		if k.table == TracesTable {
			f.services(services) // through (ServiceName, Timestamp, …): one seek each
		} else {
			args := make([]any, len(services))
			for i, s := range services {
				args[i] = s
			}
			f.add("+ServiceName IN ("+placeholders(len(services))+")", args...)
		}
		rows, err := q.store.DB().QueryContext(ctx, `SELECT ServiceName, MAX(Timestamp) FROM `+k.table+f.where()+
			` GROUP BY ServiceName`, f.args...)
		if err != nil {
			return fmt.Errorf("find newest %s: %w", k.table, err)
		}
		for rows.Next() {
			var svc string
			var newest int64
			if err := rows.Scan(&svc, &newest); err != nil {
				rows.Close()
				return fmt.Errorf("find newest %s: %w", k.table, err)
			}
			if t := per[svc]; k.table == TracesTable {
				t.spanMax = max(t.spanMax, newest)
			} else {
				t.logMax = max(t.logMax, newest)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("find newest %s: %w", k.table, err)
		}
	}
	return nil
}

// domainsDerived counts the runs of each configured domain whose root started in the window,
// from the run rollup and the edges' roots; runs is how many roots that covers.
func (q *Querier) domainsDerived(ctx context.Context, sq telemetry.StatusQuery, sp windowSplit) ([]telemetry.DomainActivity, int64, error) {
	names := q.conv.DomainNames()
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
		f.service(sq.Service)
		if err := q.eachRow(ctx, `SELECT Domain, SUM(Runs), SUM(ErroredRuns), COALESCE(MAX(CASE WHEN Runs > 0 THEN Bucket END), -1)
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
		f.service(sq.Service)
		if err := q.eachRow(ctx, `SELECT COALESCE(Domain, ''), COUNT(*), SUM(TraceErrored), MAX(Timestamp) FROM `+TracesTable+
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
			var f filter
			f.add("IsRoot = 1")
			f.add("Timestamp >= ? AND Timestamp < ?", b*bucketNs, (b+1)*bucketNs)
			f.add("Domain = ?", acts[i].Domain)
			f.service(sq.Service)
			var newest int64
			if err := q.store.DB().QueryRowContext(ctx, `SELECT COALESCE(MAX(Timestamp), 0) FROM `+TracesTable+f.where(), f.args...).
				Scan(&newest); err != nil {
				return nil, 0, fmt.Errorf("find newest run: %w", err)
			}
			newestNs[i] = max(newestNs[i], newest)
		}
		acts[i].MostRecentMs = telemetry.NsToMs(newestNs[i])
	}
	return acts, runs, nil
}

// maxSeekServices bounds the services whose spans are read one index seek each; past it the
// time index is read instead.
const maxSeekServices = 1000

// serviceNames lists the stored service names to read spans of: the one asked for, or every
// one stored (nil when there are too many to seek one by one).
func (q *Querier) serviceNames(ctx context.Context, service string) ([]string, error) {
	if service != "" {
		return []string{storedService(service)}, nil
	}
	var out []string
	err := q.eachRow(ctx, `WITH RECURSIVE services(name) AS (
		SELECT MIN(ServiceName) FROM `+TracesTable+`
		UNION ALL
		SELECT (SELECT MIN(ServiceName) FROM `+TracesTable+` WHERE ServiceName > services.name)
		FROM services WHERE services.name IS NOT NULL
	) SELECT name FROM services WHERE name IS NOT NULL LIMIT ?`, []any{maxSeekServices + 1}, func(scan func(...any) error) error {
		var s string
		err := scan(&s)
		out = append(out, s)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list services: %w", err)
	}
	if len(out) > maxSeekServices {
		return nil, nil
	}
	return out, nil
}

// eachRow runs query and calls fn for every row with a Scan function.
func (q *Querier) eachRow(ctx context.Context, query string, args []any, fn func(scan func(...any) error) error) error {
	rows, err := q.store.DB().QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows.Scan); err != nil {
			return err
		}
	}
	return rows.Err()
}
