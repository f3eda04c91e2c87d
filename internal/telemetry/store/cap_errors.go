package store

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/conventions"
)

// IndexOccurrences implements telemetry.OccurrenceIndexer: the window's occurrences — the
// origin spans' stored occurrences, those of deferred traces computed from scans, and the lone
// error records with the run of their trace's root — indexed by telemetry.IndexOccurrences, or
// per group from the stored groups (groupedErrors). A pinned query (AsOf) computes the traces
// that changed after its snapshot from what it saw.
func (b *Backend) IndexOccurrences(ctx context.Context, q telemetry.ErrorsQuery, ask telemetry.Ask) (telemetry.OccurrenceIndex, bool, error) {
	conv := ask.Conv
	var idx telemetry.OccurrenceIndex
	handled, err := b.snapshot(ctx, conv, func(tx *sql.Tx) error {
		d, err := dirtyTraces(ctx, tx, q.AsOf)
		if err != nil {
			return err
		}
		var done bool
		if idx, done, err = groupedErrors(ctx, tx, q, conv, d); err != nil || done {
			return err
		}
		list, limited, err := occurrences(ctx, tx, q, ask, d)
		if err != nil {
			return err
		}
		idx = telemetry.IndexOccurrences(list, q.Service, q.Domain)
		idx.Scan = windowScan(q.Window, int64(len(list)))
		idx.Scan.Limited = limited
		return nil
	})
	return idx, handled, err
}

// occurrences lists the window's occurrences in an order telemetry.IndexOccurrences turns into
// the engine's: occurrences that tie on time, trace and origin (duplicates) in scan order.
func occurrences(ctx context.Context, tx *sql.Tx, q telemetry.ErrorsQuery, ask telemetry.Ask, d dirty) ([]telemetry.Occurrence, bool, error) {
	conv := ask.Conv
	// Stored occurrences of the traces the snapshot saw whole.
	var f filter
	f.add("IsOrigin = 1")
	f.window(q.Window)
	serviceOrEntry(&f, TracesTable, q.Service)
	if q.Domain != "" {
		f.add("OccDomain = ?", q.Domain)
	}
	if len(d.traces) > 0 {
		f.add("TraceId NOT IN ("+placeholders(len(d.traces))+")", anys(d.list())...)
	}
	list, err := storedOccurrences(ctx, tx, f)
	if err != nil {
		return nil, false, err
	}
	if err := withRuns(ctx, tx, list, q.AsOf); err != nil {
		return nil, false, err
	}
	// Traces whose occurrences are computed here: the deferred ones, and the dirty ones with an
	// error span the snapshot saw in the window.
	deferred, err := deferredInWindow(ctx, tx, q.Window)
	if err != nil {
		return nil, false, err
	}
	compute := slices.DeleteFunc(deferred, d.has)
	if len(d.traces) > 0 {
		err := eachRow(ctx, tx, `SELECT DISTINCT TraceId FROM `+TracesTable+` INDEXED BY otel_traces_error_traces
			WHERE IsError = 1 AND TraceId IN (`+placeholders(len(d.traces))+`) AND Seq <= ? AND Timestamp >= ? AND Timestamp < ?`,
			append(anys(d.list()), q.AsOf, q.Window.StartMs*1e6, q.Window.EndMs*1e6), func(scan func(...any) error) error {
				var t string
				err := scan(&t)
				compute = append(compute, t)
				return err
			})
		if err != nil {
			return nil, false, fmt.Errorf("read changed traces: %w", err)
		}
	}
	computed, limited, err := computedOccurrences(ctx, tx, ask, compute, q.AsOf)
	if err != nil {
		return nil, false, err
	}
	for _, o := range computed {
		if q.Window.ContainsNs(o.TimeNs) {
			list = append(list, o)
		}
	}
	lone, err := loneLogs(ctx, tx, q, conv, d)
	if err != nil {
		return nil, false, err
	}
	return append(list, lone...), limited, nil
}

// occurrenceFields are the columns of a stored occurrence, in storedOccurrences' order;
// occurrenceText is them as one text, separated by ASCII unit separators.
const (
	occurrenceFields = `Timestamp, ServiceName, TraceId, SpanId, Seq, COALESCE(ErrorMessage, ''), COALESCE(ExceptionType, ''),
	COALESCE(Fingerprint, ''), COALESCE(OccRunId, ''), COALESCE(OccDomain, '')`
	occurrenceText = `Timestamp || char(31) || ServiceName || char(31) || TraceId || char(31) || SpanId || char(31) || Seq ||
	char(31) || COALESCE(ErrorMessage, '') || char(31) || COALESCE(ExceptionType, '') || char(31) || COALESCE(Fingerprint, '') ||
	char(31) || COALESCE(OccRunId, '') || char(31) || COALESCE(OccDomain, '')`
)

// storedOccurrences reads the origin spans passing f as occurrences, ordered by trace, start,
// span id and ingest order. SQLite hands them over as one text (a row per origin through
// database/sql costs more than SQLite's own work); a message holding the text's separators is
// read row by row instead.
func storedOccurrences(ctx context.Context, tx *sql.Tx, f filter) ([]telemetry.Occurrence, error) {
	from := ` FROM ` + TracesTable + ` INDEXED BY otel_traces_origins` + f.where()
	var n int
	var text string
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(group_concat(`+occurrenceText+`, char(30)), '')`+from, f.args...).
		Scan(&n, &text); err != nil {
		return nil, fmt.Errorf("read occurrences: %w", err)
	}
	type stored struct {
		o   telemetry.Occurrence
		seq int64
	}
	recs := make([]stored, 0, n)
	ok := true
	for rec := range strings.SplitSeq(text, "\x1e") {
		if n == 0 {
			break
		}
		parts := strings.Split(rec, "\x1f")
		if len(parts) != 10 {
			ok = false
			break
		}
		var r stored
		var err1, err2 error
		r.o.TimeNs, err1 = strconv.ParseInt(parts[0], 10, 64)
		r.seq, err2 = strconv.ParseInt(parts[4], 10, 64)
		if err1 != nil || err2 != nil {
			ok = false
			break
		}
		r.o.Service, r.o.TraceID, r.o.OriginSpanID = telemetry.ServiceOf(parts[1]), parts[2], parts[3]
		r.o.Message, r.o.ExceptionType, r.o.Fingerprint, r.o.RunID, r.o.Domain = parts[5], parts[6], parts[7], parts[8], parts[9]
		recs = append(recs, r)
	}
	if !ok || len(recs) != n {
		recs = recs[:0]
		err := eachRow(ctx, tx, `SELECT `+occurrenceFields+from, f.args, func(scan func(...any) error) error {
			var r stored
			if err := scan(&r.o.TimeNs, &r.o.Service, &r.o.TraceID, &r.o.OriginSpanID, &r.seq, &r.o.Message, &r.o.ExceptionType,
				&r.o.Fingerprint, &r.o.RunID, &r.o.Domain); err != nil {
				return err
			}
			r.o.Service = telemetry.ServiceOf(r.o.Service)
			recs = append(recs, r)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("read occurrences: %w", err)
		}
	}
	slices.SortFunc(recs, func(a, b stored) int {
		return cmp.Or(cmp.Compare(a.o.TraceID, b.o.TraceID), cmp.Compare(a.o.TimeNs, b.o.TimeNs),
			cmp.Compare(a.o.OriginSpanID, b.o.OriginSpanID), cmp.Compare(a.seq, b.seq))
	})
	out := make([]telemetry.Occurrence, len(recs))
	for i := range recs {
		out[i] = recs[i].o
	}
	return out, nil
}

// loneLogs are the window's error records outside any failing trace, newest first (ties in
// ingest order), each with the run of its trace's newest root.
func loneLogs(ctx context.Context, tx *sql.Tx, q telemetry.ErrorsQuery, conv *conventions.Conventions, d dirty) ([]telemetry.Occurrence, error) {
	type lone struct {
		o   telemetry.Occurrence
		seq int64
	}
	var recs []lone
	read := func(query string, args []any) error {
		return eachRow(ctx, tx, query, args, func(scan func(...any) error) error {
			var l lone
			if err := scan(&l.o.TimeNs, &l.o.Service, &l.o.TraceID, &l.seq, &l.o.Message, &l.o.ExceptionType, &l.o.Fingerprint); err != nil {
				return err
			}
			l.o.Service = telemetry.ServiceOf(l.o.Service)
			recs = append(recs, l)
			return nil
		})
	}
	const columns = `SELECT Timestamp, ServiceName, TraceId, Seq, COALESCE(ErrorMessage, ''), COALESCE(ExceptionType, ''),
		COALESCE(Fingerprint, '') FROM ` + LogsTable
	var f filter
	f.add("IsError = 1 AND TraceFailing = 0")
	f.window(q.Window)
	serviceOrEntry(&f, LogsTable, q.Service)
	f.asOf(q.AsOf)
	if len(d.traces) > 0 {
		f.add("TraceId NOT IN ("+placeholders(len(d.traces))+")", anys(d.list())...)
	}
	if err := read(columns+` INDEXED BY otel_logs_lone`+f.where(), f.args); err != nil {
		return nil, fmt.Errorf("read error records: %w", err)
	}
	if len(d.traces) > 0 {
		// Records of changed traces: lone when the trace had no error span the snapshot saw.
		var g filter
		g.add("IsError = 1")
		g.window(q.Window)
		serviceOrEntry(&g, LogsTable, q.Service)
		g.asOf(q.AsOf)
		g.in("TraceId", d.list())
		g.add(`NOT EXISTS (SELECT 1 FROM `+TracesTable+` e WHERE e.TraceId = `+LogsTable+`.TraceId AND e.IsError = 1 AND e.Seq <= ?)`, q.AsOf)
		if err := read(columns+g.where(), g.args); err != nil {
			return nil, fmt.Errorf("read error records: %w", err)
		}
	}
	slices.SortFunc(recs, func(a, b lone) int { return cmp.Or(cmp.Compare(b.o.TimeNs, a.o.TimeNs), cmp.Compare(a.seq, b.seq)) })
	runs, err := rootRuns(ctx, tx, conv, recs, q.AsOf, func(l lone) string { return l.o.TraceID })
	if err != nil {
		return nil, err
	}
	out := make([]telemetry.Occurrence, len(recs))
	for i, l := range recs {
		out[i] = l.o
		r := runs[l.o.TraceID]
		out[i].Domain, out[i].RunID, out[i].Handled, out[i].EntryService = r.Domain, r.RunID, r.Handled, r.EntryService
	}
	return out, nil
}

// rootRuns reads, for the trace of each record, the run LogOccurrence gives a record of it: of
// the trace's newest root (as of asOf), or none.
func rootRuns[T any](ctx context.Context, tx *sql.Tx, conv *conventions.Conventions, recs []T, asOf int64, trace func(T) string) (
	map[string]telemetry.Occurrence, error) {
	seen := map[string]bool{}
	var traces []string
	for _, r := range recs {
		if t := trace(r); !seen[t] {
			seen[t] = true
			traces = append(traces, t)
		}
	}
	runs, err := traceRuns(ctx, tx, traces, asOf)
	if err != nil {
		return nil, err
	}
	// What LogOccurrence makes of each run (the domain of an unknown one, its id or none).
	out := make(map[string]telemetry.Occurrence, len(traces))
	for _, t := range traces {
		out[t] = telemetry.LogOccurrence(conv, &telemetry.LogRow{TraceID: t}, runs[t])
	}
	return out, nil
}

// traceRuns reads the run of each trace off its newest root (as of asOf): id, domain, service
// and whether its verdict is ok (RunErrored: the root's own verdict, docs/semantics.md R5). A
// trace without a stored root is missing from the map.
func traceRuns(ctx context.Context, tx *sql.Tx, traces []string, asOf int64) (map[string]telemetry.RunOfTrace, error) {
	runs := make(map[string]telemetry.RunOfTrace, len(traces))
	const chunk = 500
	for lo := 0; lo < len(traces); lo += chunk {
		var f filter
		f.add("IsRoot = 1")
		f.in("TraceId", traces[lo:min(lo+chunk, len(traces))])
		f.asOf(asOf)
		err := eachRow(ctx, tx, `SELECT TraceId, COALESCE(RunId, ''), COALESCE(Domain, ''), ServiceName, RunErrored FROM `+TracesTable+
			f.where()+spansNewest, f.args, func(scan func(...any) error) error {
			var t, id, domain, svc string
			var errored int64
			if err := scan(&t, &id, &domain, &svc, &errored); err != nil {
				return err
			}
			if _, ok := runs[t]; !ok {
				runs[t] = telemetry.RunOfTrace{ID: cmp.Or(id, t), Domain: domain, Known: true, OK: errored == 0, Service: telemetry.ServiceOf(svc)}
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("read the runs of error records: %w", err)
		}
	}
	return runs, nil
}

// withRuns sets each stored occurrence's handled flag and entry service from its run's root. It
// restates docs/semantics.md R8, R12 in SQL.
func withRuns(ctx context.Context, tx *sql.Tx, list []telemetry.Occurrence, asOf int64) error {
	traces := make([]string, 0, len(list))
	for i := range list {
		traces = append(traces, list[i].TraceID)
	}
	slices.Sort(traces)
	runs, err := traceRuns(ctx, tx, slices.Compact(traces), asOf)
	if err != nil {
		return err
	}
	for i := range list {
		if r, ok := runs[list[i].TraceID]; ok {
			list[i].Handled, list[i].EntryService = r.OK, r.Service
		}
	}
	return nil
}

// serviceOrEntry restricts rows of table (with TraceId and ServiceName columns) to those of
// service svc or of a trace whose root is of svc: the occurrences a service filter finds. It
// restates docs/semantics.md R12 in SQL.
func serviceOrEntry(f *filter, table, svc string) {
	if svc == "" {
		return
	}
	var own, root filter
	own.service(table+".ServiceName", svc)
	root.service("r.ServiceName", svc)
	f.add("("+own.conds[0]+" OR EXISTS (SELECT 1 FROM "+TracesTable+" r WHERE r.TraceId = "+table+".TraceId AND r.IsRoot = 1 AND "+
		root.conds[0]+"))", append(own.args, root.args...)...)
}

// groupRuns is, per stored group, how many of its occurrences are handled and its runs'
// entry services.
type groupRuns struct {
	handled int64
	entries []string
}

// storedGroupRuns reads the handled share and entry services of the stored occurrences of the
// window (of domain, when set), per group (service, domain, fingerprint), off the roots of
// their traces: one pass over the window's origins.
func storedGroupRuns(ctx context.Context, tx *sql.Tx, w telemetry.Window, domain string) (map[[3]string]*groupRuns, error) {
	out := map[[3]string]*groupRuns{}
	args := []any{w.StartMs * 1e6, w.EndMs * 1e6}
	cond := ""
	if domain != "" {
		cond, args = " AND o.OccDomain = ?", append(args, domain)
	}
	// Each origin with its trace's newest root (as traceRuns reads it): the root from the
	// covering index of roots, the first in its order; an origin without a root is neither
	// handled nor entered anywhere.
	err := eachRow(ctx, tx, `SELECT o.ServiceName, COALESCE(o.OccDomain, ''), COALESCE(o.Fingerprint, ''), r.ServiceName, r.RunErrored,
		COUNT(*) FROM `+TracesTable+` o INDEXED BY otel_traces_origins
		JOIN `+TracesTable+` r INDEXED BY otel_traces_trace_roots ON r.TraceId = o.TraceId AND r.IsRoot = 1 AND r.Seq = (
			SELECT x.Seq FROM `+TracesTable+` x INDEXED BY otel_traces_trace_roots WHERE x.TraceId = o.TraceId AND x.IsRoot = 1
			ORDER BY x.Timestamp DESC, x.SpanId DESC, x.Seq LIMIT 1)
		WHERE o.IsOrigin = 1 AND o.Timestamp >= ? AND o.Timestamp < ?`+cond+` GROUP BY 1, 2, 3, 4, 5`, args,
		func(scan func(...any) error) error {
			var svc, dom, fp, entry string
			var errored, n int64
			if err := scan(&svc, &dom, &fp, &entry, &errored, &n); err != nil {
				return err
			}
			k := [3]string{telemetry.ServiceOf(svc), dom, fp}
			g := out[k]
			if g == nil {
				g = &groupRuns{}
				out[k] = g
			}
			if errored == 0 {
				g.handled += n
			}
			if e := telemetry.ServiceOf(entry); e != k[0] {
				g.entries = append(g.entries, e)
			}
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("read the runs of occurrences: %w", err)
	}
	return out, nil
}

// groupPage is how many of a group's newest stored occurrences groupedErrors reads at a time;
// a variable so tests can page through small groups.
var groupPage = 16

// groupedErrors indexes the occurrences without reading every one when no trace of the window
// needs its occurrences computed here (no deferred trace, nothing ingested after a pinned
// snapshot): SQLite counts the stored occurrences per group (service, domain, fingerprint) from
// the origins index, and only each group's newest occurrences are read — until its sample,
// exception type and related ids are settled — together with the lone error records. The index
// is telemetry.IndexOccurrences' over every occurrence but for the groups past q.Settle, whose
// newest occurrences it leaves out; done is false when the full path must answer.
func groupedErrors(ctx context.Context, tx *sql.Tx, q telemetry.ErrorsQuery, conv *conventions.Conventions, d dirty) (telemetry.OccurrenceIndex, bool, error) {
	var idx telemetry.OccurrenceIndex
	if len(d.traces) > 0 || q.Service != "" {
		// A service filter also finds the occurrences of runs that entered there (R12): the
		// full path reads them with their runs.
		return idx, false, nil
	}
	if deferred, err := deferredInWindow(ctx, tx, q.Window); err != nil || len(deferred) > 0 {
		return idx, false, err
	}
	groups := map[[3]string]*groupTally{}
	at := func(service, domain, fingerprint string) *groupTally {
		k := [3]string{service, domain, fingerprint}
		g := groups[k]
		if g == nil {
			g = &groupTally{service: service, domain: domain, fingerprint: fingerprint, first: math.MaxInt64, last: math.MinInt64}
			groups[k] = g
		}
		return g
	}
	// The stored occurrences per group: the rollup's whole buckets (a range of its key per
	// group), the edges' origin spans from their index, then each group's first and last
	// sighting, two seeks in the group index.
	type stored struct{ service, domain, fp string }
	counts := map[stored]int64{}
	want := func(service, domain string) bool {
		return (q.Service == "" || telemetry.ServiceOf(service) == q.Service) && (q.Domain == "" || domain == q.Domain)
	}
	sp, err := liveSplit(ctx, tx, q.Window)
	if err != nil {
		return idx, false, err
	}
	if sp.lo < sp.hi {
		err := eachRow(ctx, tx, `WITH RECURSIVE g(k) AS (
			SELECT MIN(GroupKey) FROM `+GroupActivityTable+`
			UNION ALL
			SELECT (SELECT MIN(GroupKey) FROM `+GroupActivityTable+` WHERE GroupKey > g.k) FROM g WHERE g.k IS NOT NULL
		) SELECT k, COALESCE((SELECT SUM(Occurrences) FROM `+GroupActivityTable+` r WHERE r.GroupKey = g.k AND r.Bucket >= ? AND
			r.Bucket < ?), 0) FROM g WHERE k IS NOT NULL`, []any{sp.lo, sp.hi}, func(scan func(...any) error) error {
			var k string
			var n int64
			if err := scan(&k, &n); err != nil {
				return err
			}
			parts := strings.SplitN(k, "\x1f", 3)
			if len(parts) != 3 {
				return errors.New("unexpected occurrence rollup key")
			}
			if n != 0 && want(parts[2], parts[1]) {
				counts[stored{parts[2], parts[1], parts[0]}] += n
			}
			return nil
		})
		if err != nil {
			return idx, false, fmt.Errorf("read occurrence rollup: %w", err)
		}
	}
	for _, e := range sp.edges {
		var f filter
		f.add("IsOrigin = 1")
		f.add("Timestamp >= ? AND Timestamp < ?", e[0], e[1])
		f.service("ServiceName", q.Service)
		if q.Domain != "" {
			f.add("OccDomain = ?", q.Domain)
		}
		err := eachRow(ctx, tx, `SELECT ServiceName, COALESCE(OccDomain, ''), COALESCE(Fingerprint, ''), COUNT(*) FROM `+TracesTable+
			` INDEXED BY otel_traces_origins`+f.where()+` GROUP BY 1, 2, 3`, f.args, func(scan func(...any) error) error {
			var k stored
			var n int64
			if err := scan(&k.service, &k.domain, &k.fp, &n); err != nil {
				return err
			}
			counts[k] += n
			return nil
		})
		if err != nil {
			return idx, false, fmt.Errorf("count occurrences: %w", err)
		}
	}
	for k, n := range counts {
		var lo, hi int64
		const seek = ` FROM ` + TracesTable + ` INDEXED BY otel_traces_origin_groups WHERE IsOrigin = 1 AND Fingerprint IS ? AND
			OccDomain IS ? AND ServiceName = ? AND Timestamp >= ? AND Timestamp < ?`
		args := []any{nullIfEmpty(k.fp), nullIfEmpty(k.domain), k.service, q.Window.StartMs * 1e6, q.Window.EndMs * 1e6}
		if err := tx.QueryRowContext(ctx, `SELECT (SELECT MIN(Timestamp)`+seek+`), (SELECT MAX(Timestamp)`+seek+`)`,
			append(slices.Clone(args), args...)...).Scan(&lo, &hi); err != nil {
			return idx, false, fmt.Errorf("read occurrences: %w", err)
		}
		g := at(telemetry.ServiceOf(k.service), k.domain, k.fp)
		g.count += n
		g.first, g.last = min(g.first, lo), max(g.last, hi)
		g.stored = true
	}
	lone, err := loneLogs(ctx, tx, q, conv, d)
	if err != nil {
		return idx, false, err
	}
	for _, o := range lone {
		if (q.Service != "" && o.Service != q.Service) || (q.Domain != "" && o.Domain != q.Domain) {
			continue
		}
		g := at(o.Service, o.Domain, o.Fingerprint)
		g.count++
		g.first, g.last = min(g.first, o.TimeNs), max(g.last, o.TimeNs)
		g.lone = append(g.lone, o)
		if o.Handled {
			g.handled++
		}
		if o.EntryService != "" && o.EntryService != o.Service {
			g.entries = append(g.entries, o.EntryService)
		}
	}
	runs, err := storedGroupRuns(ctx, tx, q.Window, q.Domain)
	if err != nil {
		return idx, false, err
	}
	for k, r := range runs {
		if g := groups[k]; g != nil {
			g.handled += r.handled
			g.entries = append(g.entries, r.entries...)
		}
	}
	// The groups in the order telemetry.IndexOccurrences meets them: by their newest occurrence,
	// stored before lone records.
	type ranked struct {
		g      telemetry.OccurrenceGroup
		newest telemetry.Occurrence
		lone   bool
	}
	var out []ranked
	var events int64
	for _, g := range needSettling(groups, q.Settle) {
		og := telemetry.OccurrenceGroup{Service: g.service, Domain: g.domain, Fingerprint: g.fingerprint}
		newest := telemetry.Occurrence{TimeNs: g.last}
		var fromLone bool
		if g.settle {
			var err error
			if og, newest, fromLone, err = settleGroup(ctx, tx, q, g.service, g.domain, g.fingerprint, g.stored, g.last, g.lone); err != nil {
				return idx, false, err
			}
		}
		og.Count, og.FirstNs, og.LastNs = g.count, g.first, g.last
		og.Handled, og.EntryServices = g.handled, g.entries
		events += g.count
		out = append(out, ranked{og, newest, fromLone})
	}
	slices.SortFunc(out, func(a, b ranked) int {
		return cmp.Or(telemetry.CompareOccurrences(&a.newest, &b.newest), cmp.Compare(boolInt(a.lone), boolInt(b.lone)))
	})
	for i := range out {
		idx.Groups = append(idx.Groups, out[i].g)
	}
	idx.Scan = windowScan(q.Window, events)
	return idx, true, nil
}

// groupTally is one error group of groupedErrors before its fields are settled.
type groupTally struct {
	service, domain, fingerprint string
	count, first, last           int64
	handled                      int64
	entries                      []string
	stored                       bool
	lone                         []telemetry.Occurrence
	settle                       bool // its sample, type and related ids are read
}

// needSettling returns the groups, marking those to settle: every one when n is 0, else the
// first n in the answer's order (telemetry.CompareGroups) and any tied with the n-th on that
// order, whose place among them only their settled occurrences decide.
func needSettling(groups map[[3]string]*groupTally, n int) []*groupTally {
	list := make([]*groupTally, 0, len(groups))
	for _, g := range groups {
		list = append(list, g)
	}
	key := func(a, b *groupTally) int {
		return telemetry.CompareGroups(telemetry.NsToMs(a.last), a.count, a.fingerprint, telemetry.NsToMs(b.last), b.count, b.fingerprint)
	}
	slices.SortFunc(list, key)
	for i, g := range list {
		g.settle = n <= 0 || i < n || key(g, list[n-1]) == 0
	}
	return list
}

// settleGroup indexes one group's newest occurrences (the fields of its index group but its
// count, sightings, handled share and entry services): the stored ones read a page at a time
// from its newest (last, ns) down, whole timestamps at once so ties keep their order, merged
// with its lone records as new or newer than the page, until telemetry.IndexOccurrences' group
// cannot change with older ones. newest is the group's newest occurrence, fromLone whether it
// is a lone record.
func settleGroup(ctx context.Context, tx *sql.Tx, q telemetry.ErrorsQuery, service, domain, fingerprint string, stored bool, last int64,
	lone []telemetry.Occurrence) (og telemetry.OccurrenceGroup, newest telemetry.Occurrence, fromLone bool, err error) {
	type rec struct {
		o   telemetry.Occurrence
		seq int64
	}
	var recs []rec
	// read reads the group's stored occurrences at or before cur: the groupPage newest and
	// every other one at the oldest of their timestamps, so a page never splits a timestamp.
	page := groupPage
	read := func(cur int64) (n int, oldest int64, err error) {
		var f filter
		f.add("IsOrigin = 1")
		f.add("Fingerprint IS ?", nullIfEmpty(fingerprint))
		f.add("OccDomain IS ?", nullIfEmpty(domain))
		f.service("ServiceName", service)
		f.add("Timestamp <= ? AND Timestamp >= ?", cur, q.Window.StartMs*1e6)
		from := ` FROM ` + TracesTable + ` INDEXED BY otel_traces_origin_groups` + f.where()
		args := append(append(slices.Clone(f.args), f.args...), q.Window.StartMs*1e6)
		err = eachRow(ctx, tx, `SELECT `+occurrenceFields+from+` AND Timestamp >= COALESCE((SELECT Timestamp`+from+
			` ORDER BY Timestamp DESC LIMIT 1 OFFSET `+strconv.Itoa(page-1)+`), ?)`, args, func(scan func(...any) error) error {
			var r rec
			if err := scan(&r.o.TimeNs, &r.o.Service, &r.o.TraceID, &r.o.OriginSpanID, &r.seq, &r.o.Message, &r.o.ExceptionType,
				&r.o.Fingerprint, &r.o.RunID, &r.o.Domain); err != nil {
				return err
			}
			r.o.Service = telemetry.ServiceOf(r.o.Service)
			recs = append(recs, r)
			if n == 0 || r.o.TimeNs < oldest {
				oldest = r.o.TimeNs
			}
			n++
			return nil
		})
		if err != nil {
			return 0, 0, fmt.Errorf("read occurrences: %w", err)
		}
		return n, oldest, nil
	}
	cur, bound := last, int64(math.MinInt64)
	for {
		more := false
		if stored {
			n, oldest, err := read(cur)
			if err != nil {
				return og, newest, false, err
			}
			if n >= page {
				bound, cur, more = oldest, oldest-1, true
				page *= 2 // an unsettled group is read in O(log n) pages
			}
		}
		if !more {
			bound = math.MinInt64
		}
		// What GroupOccurrences is given: the stored occurrences in storedOccurrences' order,
		// then the lone records, as new or newer than bound.
		slices.SortFunc(recs, func(a, b rec) int {
			return cmp.Or(cmp.Compare(a.o.TraceID, b.o.TraceID), cmp.Compare(a.o.TimeNs, b.o.TimeNs),
				cmp.Compare(a.o.OriginSpanID, b.o.OriginSpanID), cmp.Compare(a.seq, b.seq))
		})
		list := make([]telemetry.Occurrence, 0, len(recs)+len(lone))
		for _, r := range recs {
			list = append(list, r.o)
		}
		nStored := len(list)
		for _, o := range lone {
			if o.TimeNs >= bound {
				list = append(list, o)
			}
		}
		gi := telemetry.IndexOccurrences(list, "", "")
		rep := gi.Report()
		if len(rep.Groups) != 1 {
			return og, newest, false, fmt.Errorf("read occurrences: %d groups of one", len(rep.Groups))
		}
		g := rep.Groups[0]
		settled := len(g.RunIDs) == telemetry.MaxRelated && len(g.TraceIDs) == telemetry.MaxRelated && g.SampleSpanID != ""
		if settled && g.ExceptionType == "" && more {
			// The fingerprint holds the trimmed exception type: the group's older occurrences
			// have none either, unless one's is blank space. Lone records older than bound
			// are in memory; the stored ones are checked in the group index.
			for _, o := range lone {
				settled = settled && (o.TimeNs >= bound || o.ExceptionType == "")
			}
			if settled {
				var f filter
				f.add("IsOrigin = 1")
				f.add("Fingerprint IS ?", nullIfEmpty(fingerprint))
				f.add("OccDomain IS ?", nullIfEmpty(domain))
				f.service("ServiceName", service)
				f.add("Timestamp < ? AND Timestamp >= ?", bound, q.Window.StartMs*1e6)
				f.add("ExceptionType IS NOT NULL")
				var typed bool
				if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM `+TracesTable+` INDEXED BY otel_traces_origin_groups`+
					f.where()+`)`, f.args...).Scan(&typed); err != nil {
					return og, newest, false, fmt.Errorf("read occurrences: %w", err)
				}
				settled = !typed
			}
		} else if g.ExceptionType == "" {
			settled = false
		}
		if !more || settled {
			// The newest occurrence, as GroupOccurrences orders them (stable: stored first).
			for i, o := range list {
				if i == 0 || o.TimeNs > newest.TimeNs || (o.TimeNs == newest.TimeNs && (o.TraceID < newest.TraceID ||
					(o.TraceID == newest.TraceID && o.OriginSpanID < newest.OriginSpanID))) {
					newest, fromLone = o, i >= nStored
				}
			}
			return gi.Groups[0], newest, fromLone, nil
		}
	}
}
