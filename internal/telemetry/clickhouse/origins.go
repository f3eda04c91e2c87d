package clickhouse

import (
	"cmp"
	"strconv"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/conventions"
)

// The origin rule of TELEMETRY.md (telemetry.ShapeTrace: an error span none of whose
// descendants is an error span), computed by ClickHouse per failing trace, so the traces'
// spans do not come to Go. Per trace, a narrow skeleton — span id, parent id, error or not,
// start — is gathered into arrays (one copy per span id, the newest, as a scan keeps it), and
// every error span walks up its parents with arrayFold: the spans it passes have an error
// below them. An error span no walk passed is an origin; when every error span was passed
// (their parents form a cycle), the earliest stands for the failure. What leaves ClickHouse
// per trace is only what the folding of telemetry.TraceOccurrences reads: its error spans
// and their ancestors (id, parent, status, start; name, service, status message, the first
// exception message and type and error.type for the error spans), one row each, and the run
// of the trace read off its root. Every error span is an origin or an ancestor of one (or, in
// a cycle, below another), so Go running TraceOccurrences on those spans finds the same
// origins, chains and folded texts as on the whole trace; the run is replaced by the root's.
// The query's own origins come back too (a flag per row), for the tests that hold the SQL
// rule to ShapeTrace.
//
// The work is bounded: a trace of more than originMaxSpans spans, or one where a walk has not
// ended after originMaxSteps parents (a deeper tree), is marked unresolved and its spans are
// read as before, for the Go rule, for that trace only.
const (
	originMaxSpans = 2000
	originMaxSteps = 64
	// originResultRows bounds the rows of the answer (one per kept span; a failing trace
	// usually keeps its few error spans and their ancestors). Past it the answer is cut and
	// says so.
	originResultRows = 2_000_000
)

// originLimits are the bounds in force; tests lower them to send every trace to the Go rule.
var originLimits = struct{ spans, steps int }{originMaxSpans, originMaxSteps}

// originsQuery writes the query of the failing traces' origins: for each trace with an error
// span in the failing subquery (failing writes it), at most limit+1 traces newest first by
// their newest span, one row per kept span (or one without a span when it keeps none). The
// traces' spans are read within the window within (the zero window: the whole table).
//
// With counted set (a window), the answer is the origins counted instead: per service of the
// origins that started in counted, how many and the newest start (ns), in rows with
// unresolved 0; a row per unresolved trace (unresolved 1, its id); and, in every row, how many
// traces the query kept (at most limit+1). Nothing an origin's texts or its run need is read.
func (b *Backend) originsQuery(q *sqlText, conv *conventions.Conventions, failing func(*sqlText), within telemetry.Window, limit int, counted *telemetry.Window) {
	const a = "SpanAttributes"
	exec, dom := "''", "''"
	if counted == nil {
		exec, dom = executionIDExpr(q, conv, "rootAttrs"), domainExpr(q, conv, "rootAttrs")
	}
	maxSpans, steps := strconv.Itoa(originLimits.spans), strconv.Itoa(originLimits.steps)
	// exception event texts of a span: the first non-empty exception.message and
	// exception.type among its events named exception (telemetry's exceptionOf).
	exc := func(key string) string {
		return "arrayFirst(x -> x != '', arrayMap((en, ea) -> if(en = 'exception', ea['" + key + "'], ''), `Events.Name`, `Events.Attributes`))"
	}
	// Step by step, each a named subquery of a WITH clause that names only the columns the
	// next steps read (ClickHouse's analysis grows with the columns each step carries and with
	// every alias it inlines: written as nested subqueries, or over SELECT *, this query took
	// 100–200 ms to plan, longer than it ran on an hour of a million spans). rows: the traces'
	// spans, with the texts the folding reads only on error spans (it reads no text of the
	// other spans it keeps); g1: per trace, every copy of every span, as arrays (…1), and
	// byID, their positions by span id, newest first; g: sel, one copy per span id (the first
	// of each id in byID: the newest, as a scan keeps it), the kept arrays through it, and
	// the trace's root as telemetry.TraceRun reads it (the first root in scan order: newest
	// start, then greatest span id); p: the run's id and domain on the root's attributes,
	// once per trace (per span, they cost more than the rest of the query on 10M spans); ids,
	// empty for a trace over the bound (all after then works on empty arrays); pidx, each
	// span's parent position (0: no parent — no id, its own id, or not among the spans); and
	// errs, the error spans' positions; l: levels, the k-th ancestor of each error span for
	// k = 1..D (0 past a root: element 0 of an array is its default), D = the trace's size up
	// to originMaxSteps, which covers every ancestor, cycles included, unless a walk is still
	// going at the last level; o: marked, every span with an error below it (and 0), the
	// origins (or, when all are marked, the earliest error span) and keep, the error spans
	// and their ancestors.
	errOnly := func(col string) string { return "if(StatusCode = 'Error', " + col + ", '')" }
	if counted != nil {
		// Counting reads the error spans' services only.
		q.w("WITH rows AS (SELECT TraceId, SpanId, ParentSpanId, StatusCode, Timestamp, '' AS nm0, ", errOnly("ServiceName"),
			" AS svc0, '' AS smsg0, '' AS em0, '' AS et0, '' AS ert0, map() AS ra0 FROM ", b.traces, " WHERE ")
	} else {
		q.w("WITH rows AS (SELECT TraceId, SpanId, ParentSpanId, StatusCode, Timestamp, ",
			errOnly("SpanName"), " AS nm0, ", errOnly("ServiceName"), " AS svc0, ", errOnly("StatusMessage"), " AS smsg0, ",
			errOnly(exc("exception.message")), " AS em0, ", errOnly(exc("exception.type")), " AS et0, ",
			errOnly(a+"['error.type']"), " AS ert0, if(ParentSpanId = '', ", a, ", map()) AS ra0",
			" FROM ", b.traces, " WHERE ")
	}
	window(q, "Timestamp", within)
	q.w(" AND TraceId GLOBAL IN ")
	failing(q)
	cols := []struct{ from, copies, kept string }{
		{"SpanId", "ids1", "ids0"}, {"ParentSpanId", "par1", "par"}, {"StatusCode", "code1", "code"},
		{"toUnixTimestamp64Nano(Timestamp)", "st1", "st"},
		// The texts travel as one array of tuples, not six arrays: each array is one more
		// groupArray, arrayMap and column through every step for ClickHouse to analyze.
		{"(nm0, svc0, smsg0, em0, et0, ert0)", "tx1", "tx"},
	}
	// list writes the kept columns (as they are named after g) after the fixed ones.
	list := func(fixed string) {
		q.w(fixed)
		for _, c := range cols {
			q.w(", ", c.kept)
		}
	}
	q.w("), g1 AS (SELECT TraceId, max(Timestamp) AS newest, groupArray(ra0) AS ra1")
	for _, c := range cols {
		q.w(", groupArray(", c.from, ") AS ", c.copies)
	}
	q.w(", arraySort(i -> (ids1[i], -st1[i]), arrayEnumerate(ids1)) AS byID FROM rows GROUP BY TraceId ORDER BY newest DESC, TraceId LIMIT ", strconv.Itoa(limit+1), "), ",
		"g AS (SELECT TraceId, ra1")
	for _, c := range cols {
		q.w(", ", c.copies)
	}
	// sel is a column of g, not an alias the next step would write out in each of its uses.
	q.w(", arrayFilter((i, k) -> k = 1 OR ids1[byID[k - 1]] != ids1[i], byID, arrayEnumerate(byID)) AS sel FROM g1), ",
		"k AS (SELECT TraceId, toUInt64(length(sel)) AS n")
	for _, c := range cols {
		q.w(", arrayMap(i -> ", c.copies, "[i], sel) AS ", c.kept)
	}
	q.w(", arrayFilter(i -> par1[i] = '', sel) AS roots, toUInt8(notEmpty(roots)) AS known, ",
		// Element 0 (no root) of ra1 is its default, the empty map.
		"ra1[arrayReverseSort(i -> (st1[i], ids1[i]), roots)[1]] AS rootAttrs FROM g), p AS (")
	list("SELECT TraceId, n, known")
	q.w(", ", exec, " AS runExec, ", dom, " AS runDomain, if(n > ", maxSpans, ", CAST([] AS Array(String)), ids0) AS ids, ",
		"arrayMap((pa, s) -> if(pa = '' OR pa = s, toUInt32(0), toUInt32(indexOf(ids, pa))), arrayResize(par, length(ids)), ids) AS pidx, ",
		"arrayFilter((i, c) -> c = 'Error', arrayEnumerate(ids), arrayResize(code, length(ids))) AS errs FROM k), l AS (")
	list("SELECT TraceId, n, known, runExec, runDomain, ids, errs")
	q.w(", arrayFold((acc, k) -> arrayPushBack(acc, arrayMap(x -> pidx[x], acc[-1])), range(toUInt32(greatest(least(length(ids), ", steps, "), 1) - 1)), [arrayMap(x -> pidx[x], errs)]) AS levels FROM p), m AS (")
	list("SELECT TraceId, n, known, runExec, runDomain, ids, errs")
	q.w(", toUInt8(n > ", maxSpans, " OR (n > ", steps, " AND arraySum(levels[-1]) > 0)) AS unresolved, ",
		"arrayDistinct(arrayFlatten(levels)) AS marked FROM l), o AS (")
	list("SELECT TraceId, n, known, runExec, runDomain, unresolved, ids")
	q.w(", arrayFilter(x -> NOT has(marked, x), errs) AS orig0, ",
		"if(empty(orig0) AND notEmpty(errs), [arraySort(x -> (st[x], ids[x]), errs)[1]], orig0) AS origins, ",
		"if(unresolved = 1, CAST([] AS Array(UInt32)), arrayFilter(x -> x != 0, arrayDistinct(arrayConcat(errs, marked)))) AS keep")
	if counted != nil {
		startNs, endNs := q.i64(counted.StartMs*1e6), q.i64(counted.EndMs*1e6)
		q.w(", count() OVER () AS traces FROM m) SELECT unresolved, if(unresolved = 1, TraceId, '') AS t, if(unresolved = 1, '', tx[x].2) AS svc, ",
			"toInt64(count()), toInt64(max(st[x])), toUInt64(max(traces)) FROM o ARRAY JOIN if(unresolved = 1, [toUInt32(0)], origins) AS x ",
			"WHERE unresolved = 1 OR (st[x] >= ", startNs, " AND st[x] < ", endNs, ") GROUP BY unresolved, t, svc")
		return
	}
	q.w(" FROM m) ",
		// One row per kept span (arrays of strings decode slowly in the client: 2 s for 40,000
		// traces), or one row without a span (kk = 0) for a trace that keeps none.
		"SELECT TraceId, n, known, runExec, runDomain, unresolved, toUInt64(length(keep)), kk, has(origins, kk), ",
		"ids[kk], par[kk], code[kk], st[kk], tx[kk].1, tx[kk].2, tx[kk].3, tx[kk].4, tx[kk].5, tx[kk].6 ",
		"FROM o ARRAY JOIN if(empty(keep), [toUInt32(0)], keep) AS kk")
}

// originTrace is one trace of originsQuery's answer.
type originTrace struct {
	trace string
	// spans is the trace's span count; unresolved says the Go rule must decide.
	spans      int64
	unresolved bool
	run        telemetry.RunOfTrace
	// kept are the error spans and their ancestors, with what the folding reads; want is how
	// many the query kept (fewer arrived when the answer was cut); origins are the ids the
	// query found to be origins.
	kept    []telemetry.SpanRow
	want    int
	origins []string
}

// originRow reads a row of originsQuery into its trace in byTrace (added to order when new).
func originRow(rows driver.Rows, conv *conventions.Conventions, byTrace map[string]*originTrace, order *[]string) error {
	var trace, exec, dom string
	var n, nk uint64
	var known, unresolved, isOrigin uint8
	var kk uint32
	var s telemetry.SpanRow
	var emsg, etyp, errt string
	if err := rows.Scan(&trace, &n, &known, &exec, &dom, &unresolved, &nk, &kk, &isOrigin,
		&s.SpanID, &s.ParentSpanID, &s.StatusCode, &s.StartNs, &s.Name, &s.Service, &s.StatusMessage, &emsg, &etyp, &errt); err != nil {
		return err
	}
	t := byTrace[trace]
	if t == nil {
		t = &originTrace{trace: trace, spans: int64(min(n, 1<<62)), unresolved: unresolved == 1, want: int(min(nk, 1<<31)),
			run: telemetry.RunOfTrace{Domain: conv.DefaultDomain}}
		if known == 1 {
			t.run = telemetry.RunOfTrace{ID: cmp.Or(exec, trace), Domain: dom, Known: true}
		}
		t.kept = make([]telemetry.SpanRow, 0, min(t.want, 64))
		byTrace[trace] = t
		*order = append(*order, trace)
	}
	if kk == 0 {
		return nil
	}
	// The folding reads only error.type of the attributes (a nil map reads as empty).
	s.TraceID = trace
	if errt != "" {
		s.Attributes = conventions.Attributes{"error.type": errt}
	}
	if emsg != "" || etyp != "" {
		s.Events = []telemetry.SpanEvent{{Name: "exception", Attributes: conventions.Attributes{}}}
		if emsg != "" {
			s.Events[0].Attributes["exception.message"] = emsg
		}
		if etyp != "" {
			s.Events[0].Attributes["exception.type"] = etyp
		}
	}
	if isOrigin == 1 {
		t.origins = append(t.origins, s.SpanID)
	}
	t.kept = append(t.kept, s)
	return nil
}

// occurrencesOf is telemetry.TraceOccurrences on a trace's kept spans, with the run read off
// its root by ClickHouse.
func (t *originTrace) occurrencesOf(conv *conventions.Conventions, logs []telemetry.LogRow) []telemetry.Occurrence {
	occ := telemetry.TraceOccurrences(conv, t.kept, logs)
	for i := range occ {
		occ[i].Domain, occ[i].RunID = t.run.Domain, t.run.ID
	}
	return occ
}
