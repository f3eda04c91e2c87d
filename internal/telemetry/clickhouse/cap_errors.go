package clickhouse

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/conventions"
)

// AggregateErrors is the window's error occurrences as ClickHouse's SQL restates the origin
// rule, grouped by the engine's GroupOccurrences. It is not the engine's ErrorAggregator: it
// does not restate one occurrence per cause per run, the handled share or the entry services
// (docs/semantics.md R7–R12), so the engine answers Errors over ClickHouse from the failing
// traces it reads.
func (b *Backend) AggregateErrors(ctx context.Context, q telemetry.ErrorsQuery, conv *conventions.Conventions) (telemetry.ErrorReport, bool, error) {
	if err := b.ready(ctx); err != nil {
		return telemetry.ErrorReport{}, false, err
	}
	at, err := b.extents(ctx)
	if err != nil {
		return telemetry.ErrorReport{}, false, err
	}
	occ, limited, scanned, err := b.occurrences(ctx, conv, q.Window, q.Service, at)
	if err != nil {
		return telemetry.ErrorReport{}, false, err
	}
	rep := telemetry.GroupOccurrences(occ, q.Service, q.Domain)
	rep.Scan = telemetry.Scan{WindowStartMs: q.Window.StartMs, WindowEndMs: q.Window.EndMs, Scanned: scanned, Limited: limited}
	return rep, true, nil
}

// occurrences computes the window's error occurrences as the engine does (its
// TraceOccurrences, TraceRun and LogOccurrence decide), from two queries run at once instead
// of a scan per chunk of traces — the origins of the traces with an error span in the window,
// computed by ClickHouse (origins.go: only the origins and their ancestors come back, not the
// traces' spans); the error records of the window or of those traces — and, only for records
// of other traces, two more: whether their trace failed anywhere, and its root. A trace the
// origin query leaves unresolved (over its bounds) has its spans read for the Go rule. The
// trace sets are GLOBAL subqueries, read once.
//
// With svc set, only what the occurrences of that service need is read: the traces with an
// error span of svc in the window (an origin is an error span, so every trace holding an
// origin of svc is among them; each is still read whole, so its origins and folding are the
// same), the records of those traces, and svc's own records of the window (the candidates for
// occurrences of their own). The occurrences of other services this finds are dropped by the
// caller's filter.
func (b *Backend) occurrences(ctx context.Context, conv *conventions.Conventions, w telemetry.Window, svc string, at tableExtents) (list []telemetry.Occurrence, limited bool, scanned int64, err error) {
	maxRows := telemetry.DefaultLimits.MaxScanRows
	// The failing traces' origins; and, in a second query run at the same time, the error
	// records of the window and those of the failing traces outside it within lookupReach — the
	// second part only when the logs table holds records outside the window (the parts'
	// metadata say). With no failing trace, neither the origins nor any record of a failing
	// trace are asked for.
	f, _, err := b.failingOf(ctx, w, svc, at, nil)
	if err != nil {
		return nil, false, 0, err
	}
	failingSub, within, none := f.sub, f.within, f.none
	s := &sqlText{}
	b.originsQuery(s, conv, failingSub, within, maxRows, nil)
	l := &sqlText{}
	const logCols = "toUnixTimestamp64Nano(Timestamp) AS ns, TraceId, SpanId, ServiceName, toUInt8(SeverityNumber), SeverityText, Body, LogAttributes, "
	l.w("SELECT * FROM (SELECT ", logCols, "toUInt8(1) AS inWindow FROM ", b.logs, " WHERE ", errorLogExpr, " AND ")
	window(l, "Timestamp", w)
	switch {
	case svc != "" && none:
		service(l, svc)
	case svc != "":
		// svc's records, and those of other services that fold into svc's failing traces.
		l.w(" AND (ServiceName = ", serviceName(l, svc), " OR TraceId GLOBAL IN ")
		failingSub(l)
		l.w(")")
	}
	if !none && (!at.known || !at.logs.within(w)) {
		// Two parts, not "in the window OR of a failing trace": ClickHouse reads the window's
		// part through the partition and sort keys, and the rest without building the
		// condition's OR for every record (771 against 189 + 269 ms on 2 M records).
		// Only within lookupReach of the window, as the traces' spans are narrowed: the logs
		// table's other days are not read.
		l.w(" UNION ALL SELECT ", logCols, "toUInt8(0) AS inWindow FROM ", b.logs, " WHERE ", errorLogExpr, " AND ")
		window(l, "Timestamp", reach(w))
		l.w(" AND NOT (")
		window(l, "Timestamp", w)
		l.w(") AND TraceId GLOBAL IN ")
		failingSub(l)
	}
	l.w(") ORDER BY ns DESC LIMIT ", strconv.Itoa(2*maxRows+1))
	traces := map[string]*originTrace{}
	var order []string
	var spans int64
	var tracesLimited, logsLimited bool
	var recs []telemetry.LogRow
	var inWindow []bool
	err = parallel(func() error {
		var err error
		if none {
			return nil
		}
		// At most maxRows+1 traces (the query's own limit), each with its kept spans.
		tracesLimited, err = b.r.query(ctx, s, originResultRows, func(rows driver.Rows) error {
			return originRow(rows, conv, traces, &order)
		})
		if len(order) > maxRows {
			delete(traces, order[maxRows])
			order, tracesLimited = order[:maxRows], true
		}
		for _, t := range order {
			// Fewer kept spans than the query kept: the answer was cut at its row limit.
			if tr := traces[t]; len(tr.kept) < tr.want {
				tr.unresolved, tracesLimited = true, true
			}
			spans += traces[t].spans
		}
		return err
	}, func() error {
		var err error
		logsLimited, err = b.r.query(ctx, l, 2*maxRows+1, func(rows driver.Rows) error {
			r, in, err := scanLog(rows, true)
			if err != nil {
				return err
			}
			recs, inWindow = append(recs, r), append(inWindow, in)
			return nil
		})
		return err
	})
	if err != nil {
		return nil, false, 0, err
	}
	limited, scanned = tracesLimited || logsLimited || len(recs) > 2*maxRows, spans
	// The records of the failing traces go with their traces; those of the window (at most
	// maxRows, newest first, as a scan of them) are checked below.
	logs := map[string][]telemetry.LogRow{}
	var errLogs []telemetry.LogRow
	for i, r := range recs {
		if traces[r.TraceID] != nil {
			logs[r.TraceID] = append(logs[r.TraceID], r)
		}
		if inWindow[i] {
			if len(errLogs) == maxRows {
				limited = true
				continue
			}
			errLogs = append(errLogs, r)
		}
	}
	// The traces beyond the origin query's bounds: their spans, for the Go rule.
	var unresolved []string
	for _, t := range order {
		if traces[t].unresolved {
			unresolved = append(unresolved, t)
		}
	}
	full := map[string][]telemetry.SpanRow{}
	if len(unresolved) > 0 {
		slices.Sort(unresolved)
		rb, err := b.ScanSpans(ctx, telemetry.SpanScan{TraceIDs: unresolved, Fields: telemetry.FieldAttributes | telemetry.FieldEvents, Limit: maxRows})
		if err != nil {
			return nil, false, 0, err
		}
		limited = limited || rb.Limited
		for _, r := range rb.Spans {
			full[r.TraceID] = append(full[r.TraceID], r)
		}
	}
	slices.Sort(order) // the engine reads failing traces in id order
	for _, t := range order {
		occ := traces[t].occurrencesOf(conv, logs[t])
		if traces[t].unresolved {
			occ = telemetry.TraceOccurrences(conv, full[t], logs[t])
		}
		for _, o := range occ {
			if w.ContainsNs(o.TimeNs) {
				list = append(list, o)
			}
		}
	}
	scanned += int64(len(errLogs))
	var probe []string
	seen := map[string]bool{}
	for _, r := range errLogs {
		if r.TraceID != "" && traces[r.TraceID] == nil && !seen[r.TraceID] {
			seen[r.TraceID] = true
			probe = append(probe, r.TraceID)
		}
	}
	roots := map[string]telemetry.RunOfTrace{}
	failedElsewhere, err := b.failedAnywhere(ctx, probe)
	if err != nil {
		return nil, false, 0, err
	}
	if len(probe) > 0 {
		var lone []string
		for _, t := range probe {
			if !failedElsewhere[t] {
				lone = append(lone, t)
			}
		}
		if len(lone) > 0 {
			rb, err := b.ScanSpans(ctx, telemetry.SpanScan{TraceIDs: lone, RootsOnly: true, Fields: telemetry.FieldAttributes, Limit: maxRows})
			if err != nil {
				return nil, false, 0, err
			}
			limited = limited || rb.Limited
			for _, s := range rb.Spans {
				if _, ok := roots[s.TraceID]; !ok {
					roots[s.TraceID] = telemetry.TraceRun(conv, []telemetry.SpanRow{s})
				}
			}
		}
	}
	for i := range errLogs {
		r := &errLogs[i]
		if r.TraceID != "" && (traces[r.TraceID] != nil || failedElsewhere[r.TraceID]) {
			continue
		}
		list = append(list, telemetry.LogOccurrence(conv, r, roots[r.TraceID]))
	}
	return list, limited, scanned, nil
}

// failingOf is the window's failing traces of svc (failingTraces), whether there is none —
// found by reading up to the first error span of the window: the origin query (whose analysis
// alone takes ClickHouse 150–200 ms) is then not sent; most windows of a working app have
// none — and otherwise the time within which the origin query reads their spans (tracesSpan).
// With also set (the status: its runs' traces), the same read of the lookup table says the
// time also's traces span too, as alsoWithin.
func (b *Backend) failingOf(ctx context.Context, w telemetry.Window, svc string, at tableExtents, also func(*sqlText)) (f failing, alsoWithin telemetry.Window, err error) {
	f.sub = b.failingTraces(w, svc)
	if f.none, err = b.noneFailing(ctx, f.sub); err != nil {
		return f, alsoWithin, err
	}
	var sets []func(*sqlText)
	if also != nil {
		sets = append(sets, also)
	}
	if !f.none {
		sets = append(sets, f.sub)
	}
	spans, err := b.tracesSpans(ctx, w, sets, at.spans, at.known)
	if err != nil {
		return f, alsoWithin, err
	}
	if also != nil {
		alsoWithin, spans = spans[0], spans[1:]
	}
	if !f.none {
		f.within = spans[0]
	}
	return f, alsoWithin, nil
}

// noneFailing says the subquery failingSub finds no trace, reading up to its first row.
func (b *Backend) noneFailing(ctx context.Context, failingSub func(*sqlText)) (bool, error) {
	q := &sqlText{}
	q.w("SELECT toUInt64(count()) FROM (SELECT 1 FROM ")
	failingSub(q)
	q.w(" LIMIT 1)")
	var n uint64
	if _, err := b.r.query(ctx, q, 1, func(rows driver.Rows) error { return rows.Scan(&n) }); err != nil {
		return false, err
	}
	return n == 0, nil
}

// failing is what the origin query of a window needs first: the subquery of its failing
// traces, the time their spans lie in (the zero window: the whole table), and whether there is
// none (then nothing of a failing trace is asked for).
type failing struct {
	sub    func(*sqlText)
	within telemetry.Window
	none   bool
}

// failingTraces writes the subquery of the traces with an error span in w (of service svc,
// when set: the sort key's first column, so only that service's granules are read).
func (b *Backend) failingTraces(w telemetry.Window, svc string) func(*sqlText) {
	return func(q *sqlText) {
		q.w("(SELECT TraceId FROM ", b.traces, " WHERE ")
		window(q, "Timestamp", w)
		if svc != "" {
			service(q, svc)
		}
		q.w(" AND StatusCode = 'Error')")
	}
}

// lookupReach is how far before and after a window the lookup table is read for the time its
// traces span. The lookup holds a row per trace and insert for the table's whole retention,
// and a set of many traces (an hour's runs: tens of thousands) finds some in every granule, so
// an unbounded read grows with the retention, not the window: on a day of 10 M spans, the
// default hour's status took 0.9 s with one day of lookup rows and 3.6–4.0 s with nineteen.
// Bounded, a trace's spans exported more than a day before (or after) the window are not read
// with it: its root, when it started that long before, is not found for its run. Its error
// records outside the window are read within the same reach. When a trace of the set has no
// lookup row within the reach (a span of the window exported in one batch with spans of its
// trace from days before), the set's spans are read across the table, as when the lookup does
// not know every trace.
const lookupReach = 24 * time.Hour

// reach is w widened by lookupReach on both sides.
func reach(w telemetry.Window) telemetry.Window {
	r := lookupReach.Milliseconds()
	return telemetry.Window{StartMs: w.StartMs - r, EndMs: w.EndMs + r}
}

// narrowMinSpans is the table size from which tracesSpan narrows: below it, the query that
// finds the traces' time costs more than it saves. Measured at 1 h on B10's day of spans
// (ms, the narrowed read plus the lookup query against the read across the table): the
// failing traces' origins 1M 1,030 against 860, 3M 1,050 against 880, 5M 1,100 against
// 1,180, 10M 1,150 against 1,920; the runs' error spans lose at every size measured (1M 410
// against 250, 5M 560 against 440, 10M 830 against 750) but keep the read to the window's
// time, so one bound serves both. Tests lower it to narrow small tables.
var narrowMinSpans uint64 = 5_000_000

// extent is what the parts' metadata say of a table: the times of its oldest and newest rows
// (ms) and how many rows it holds.
type extent struct {
	oldest, newest int64
	rows           uint64
}

// within says every row of the table lies in w.
func (x extent) within(w telemetry.Window) bool {
	return x.rows == 0 || (x.oldest >= w.StartMs && x.newest < w.EndMs)
}

// tableExtents is what the metadata say of both tables; known is false when the server did not
// answer within the read limit (then nothing is narrowed or left out).
type tableExtents struct {
	spans, logs extent
	known       bool
}

// extents reads the traces and logs tables' extents in one query that ClickHouse answers from
// the parts' metadata (min-max indexes, row counts), reading no rows.
func (b *Backend) extents(ctx context.Context) (tableExtents, error) {
	const of = "toInt64(intDiv(toUnixTimestamp64Nano(min(Timestamp)), 1000000)), toInt64(intDiv(toUnixTimestamp64Nano(max(Timestamp)), 1000000)), toUInt64(count())"
	q := &sqlText{}
	q.w("SELECT ", of, ", (SELECT tuple(", of, ") FROM ", b.logs, ") FROM ", b.traces)
	var x tableExtents
	limited, err := b.r.query(ctx, q, 1, func(rows driver.Rows) error {
		var l []any
		if err := rows.Scan(&x.spans.oldest, &x.spans.newest, &x.spans.rows, &l); err != nil {
			return err
		}
		var ok bool
		if len(l) == 3 {
			x.logs.oldest, ok = l[0].(int64)
			if ok {
				x.logs.newest, ok = l[1].(int64)
			}
			if ok {
				x.logs.rows, ok = l[2].(uint64)
			}
		}
		if !ok {
			return fmt.Errorf("the logs table's extent came back as %v", l)
		}
		x.known = true
		return nil
	})
	if err != nil || limited {
		return tableExtents{}, err
	}
	return x, nil
}

// tracesSpan is the time the spans of the traces in the subquery ids (written by ids) lie
// in, read from the exporter's trace-id lookup table (its Start and End per trace and insert,
// within lookupReach of w), so a read of those traces' spans prunes partitions and granules
// outside it instead of reading every TraceId of the table: a window of an hour in a table
// kept for days reads about that hour. It is the zero window (no narrowing) when there is no
// lookup table, when the traces table (its extent spans, known when the metadata answered)
// holds fewer than narrowMinSpans spans or lies in the window w already (the narrowing could
// only cost), or when the lookup table does not know every trace within the reach (its rows
// could have been dropped by a shorter TTL).
func (b *Backend) tracesSpan(ctx context.Context, w telemetry.Window, ids func(*sqlText), spans extent, known bool) (telemetry.Window, error) {
	within, err := b.tracesSpans(ctx, w, []func(*sqlText){ids}, spans, known)
	if err != nil {
		return telemetry.Window{}, err
	}
	return within[0], nil
}

// tracesSpans is tracesSpan for several subqueries of trace ids at once, in one read of the
// lookup table (its TraceId column, a ZSTD-compressed string per trace and insert, is most of
// what each asking costs: the status asks for the window's runs' traces and its failing ones).
// Each window is narrowed or not on its own, as tracesSpan says.
func (b *Backend) tracesSpans(ctx context.Context, w telemetry.Window, sets []func(*sqlText), spans extent, known bool) ([]telemetry.Window, error) {
	out := make([]telemetry.Window, len(sets))
	if len(sets) == 0 || !b.hasLookup.Load() || w == (telemetry.Window{}) || !known || spans.rows < narrowMinSpans || spans.within(w) {
		return out, nil
	}
	q := &sqlText{}
	q.w("SELECT ")
	for i, ids := range sets {
		in := "s" + strconv.Itoa(i)
		if i > 0 {
			q.w(", ")
		}
		q.w("toUInt64((SELECT uniqExact(TraceId) FROM ")
		ids(q)
		q.w(")), toUInt64(uniqExactIf(TraceId, ", in, ")), toInt64(toUnixTimestamp(minIf(Start, ", in, "))), toInt64(toUnixTimestamp(maxIf(End, ", in, ")))")
	}
	q.w(" FROM (SELECT TraceId, Start, End")
	for i, ids := range sets {
		q.w(", TraceId GLOBAL IN ")
		ids(q)
		q.w(" AS s", strconv.Itoa(i))
	}
	// Only the lookup rows within lookupReach of the window: the table is partitioned by the
	// day of Start, so the read is the window's days and the reach's, not the table's.
	r := reach(w)
	lo, hi := q.i64(r.StartMs/1000), q.i64((r.EndMs+999)/1000)
	q.w(" FROM ", b.lookup, " WHERE Start >= toDateTime(", lo, ") AND Start <= toDateTime(", hi,
		") AND toDate(Start) >= toDate(toDateTime(", lo, ")) AND toDate(Start) <= toDate(toDateTime(", hi, ")) AND (")
	for i := range sets {
		if i > 0 {
			q.w(" OR ")
		}
		q.w("s", strconv.Itoa(i))
	}
	q.w("))")
	traces, found := make([]uint64, len(sets)), make([]uint64, len(sets))
	start, end := make([]int64, len(sets)), make([]int64, len(sets))
	limited, err := b.r.query(ctx, q, 1, func(rows driver.Rows) error {
		dest := make([]any, 0, 4*len(sets))
		for i := range sets {
			dest = append(dest, &traces[i], &found[i], &start[i], &end[i])
		}
		return rows.Scan(dest...)
	})
	if err != nil || limited {
		return out, err
	}
	for i := range sets {
		if traces[i] == 0 || found[i] < traces[i] {
			continue
		}
		// End is the newest span's second: the span of time ends after it.
		out[i] = telemetry.Window{StartMs: start[i] * 1000, EndMs: (end[i] + 1) * 1000}
	}
	return out, nil
}

// scanLog reads a row of time, trace, span, service, severity number and text, body and
// attributes, and, when flag is set, a last boolean column.
func scanLog(rows driver.Rows, flag bool) (telemetry.LogRow, bool, error) {
	var r telemetry.LogRow
	var sev uint8
	var attrs map[string]string
	var f uint8
	dest := []any{&r.TimeNs, &r.TraceID, &r.SpanID, &r.Service, &sev, &r.SeverityText, &r.Body, &attrs}
	if flag {
		dest = append(dest, &f)
	}
	if err := rows.Scan(dest...); err != nil {
		return r, false, err
	}
	r.SeverityNumber, r.Attributes = int32(sev), nonNil(attrs)
	return r, f == 1, nil
}

// serviceErrors is how many error occurrences of a service get_app_status counts, and the
// newest one's time (ns).
type serviceErrors struct {
	n, newestNs int64
}

// occurrenceCounts counts the window's error occurrences per service (telemetry.ServiceOf), as
// occurrences would list them, without their texts or runs: the status needs no more. The
// origins of the failing traces are counted by ClickHouse (originsQuery with counted), which
// reads neither attribute maps nor events; the error records of no failing trace (in the
// window or elsewhere) are counted in a second query at the same time; only the traces over
// the origin query's bounds have their spans read, for the Go rule. f is the window's failing
// traces of svc as the caller found them (failingOf).
//
// With svc set, only svc's occurrences are counted right (the map may hold others, counted
// short): the traces with an error span of svc in the window, and svc's records of the window
// in none of them (whether their trace failed through another service's span is asked by id,
// as for a failure outside the window).
func (b *Backend) occurrenceCounts(ctx context.Context, conv *conventions.Conventions, w telemetry.Window, svc string, f failing) (map[string]*serviceErrors, bool, error) {
	maxRows := telemetry.DefaultLimits.MaxScanRows
	failingSub, within, none := f.sub, f.within, f.none
	out := map[string]*serviceErrors{}
	add := func(svc string, n, newest int64) {
		svc = telemetry.ServiceOf(svc)
		c := out[svc]
		if c == nil {
			c = &serviceErrors{}
			out[svc] = c
		}
		c.n += n
		c.newestNs = max(c.newestNs, newest)
	}
	s := &sqlText{}
	b.originsQuery(s, conv, failingSub, within, maxRows, &w)
	// The error records of the window in no failing trace of the window: per service those
	// without a trace, per trace the others (bounded: past loneTracesMax traces, loneLogs
	// counts them in one statement instead).
	l := &sqlText{}
	l.w("SELECT ServiceName, TraceId, toInt64(count()), toInt64(max(toUnixTimestamp64Nano(Timestamp))) FROM ", b.logs, " WHERE ", errorLogExpr, " AND ")
	window(l, "Timestamp", w)
	if svc != "" {
		service(l, svc)
	}
	if !none {
		l.w(" AND (TraceId = '' OR TraceId GLOBAL NOT IN ")
		failingSub(l)
		l.w(")")
	}
	l.w(" GROUP BY ServiceName, TraceId")
	var lone []loneCount
	var unresolved []string
	var tracesLimited, logsLimited bool
	var originCounts []loneCount // a service's origins (trace unused)
	err := parallel(func() error {
		if none {
			return nil
		}
		var err error
		tracesLimited, err = b.r.query(ctx, s, b.o.MaxGroups+maxRows+1, func(rows driver.Rows) error {
			var u uint8
			var c loneCount
			var traces uint64
			if err := rows.Scan(&u, &c.trace, &c.svc, &c.n, &c.newest, &traces); err != nil {
				return err
			}
			if traces > uint64(maxRows) {
				tracesLimited = true
			}
			if u == 1 {
				unresolved = append(unresolved, c.trace)
				return nil
			}
			originCounts = append(originCounts, c)
			return nil
		})
		return err
	}, func() error {
		var err error
		logsLimited, err = b.r.query(ctx, l, loneTracesMax+b.o.MaxGroups, func(rows driver.Rows) error {
			var c loneCount
			if err := rows.Scan(&c.svc, &c.trace, &c.n, &c.newest); err != nil {
				return err
			}
			lone = append(lone, c)
			return nil
		})
		return err
	})
	if err != nil {
		return nil, false, err
	}
	for _, c := range originCounts {
		add(c.svc, c.n, c.newest)
	}
	// The records' traces that failed outside the window: their records are not lone.
	var probe []string
	for _, c := range lone {
		if c.trace != "" {
			probe = append(probe, c.trace)
		}
	}
	if logsLimited || len(probe) > loneTracesMax {
		counts, limited, err := b.loneLogs(ctx, w, svc, failingSub)
		if err != nil {
			return nil, false, err
		}
		lone, probe, logsLimited = counts, nil, limited
	}
	failedElsewhere, err := b.failedAnywhere(ctx, probe)
	if err != nil {
		return nil, false, err
	}
	for _, c := range lone {
		if !failedElsewhere[c.trace] {
			add(c.svc, c.n, c.newest)
		}
	}
	limited := tracesLimited || logsLimited
	if len(unresolved) > 0 {
		slices.Sort(unresolved)
		rb, err := b.ScanSpans(ctx, telemetry.SpanScan{TraceIDs: unresolved, Fields: telemetry.FieldAttributes | telemetry.FieldEvents, Limit: maxRows})
		if err != nil {
			return nil, false, err
		}
		limited = limited || rb.Limited
		full := map[string][]telemetry.SpanRow{}
		for _, r := range rb.Spans {
			full[r.TraceID] = append(full[r.TraceID], r)
		}
		for _, t := range unresolved {
			for _, o := range telemetry.TraceOccurrences(conv, full[t], nil) {
				if w.ContainsNs(o.TimeNs) {
					add(o.Service, 1, o.TimeNs)
				}
			}
		}
	}
	return out, limited, nil
}

// loneTracesMax bounds the traces of error records whose failure elsewhere occurrenceCounts
// asks about by id (a bound list); past it, loneLogs asks in one statement. Most windows have
// none: the error records lie in failing traces, and the statement's second read of the
// table's error spans (its TraceId column: 0.3 s a day at 10 M spans) is then saved.
var loneTracesMax = 10_000

// loneCount is a count of a service's error occurrences or records (and, when it is not
// empty, of one trace's) and the newest one's time.
type loneCount struct {
	svc, trace string
	n, newest  int64
}

// loneLogs counts per service, in one statement, the error records of window w whose trace
// has no error span anywhere: those of no failing trace of w (failingSub), less those whose
// trace failed outside it (or, with svc set, through another service's span). occurrenceCounts
// uses it when the records' traces are too many to ask about by id.
func (b *Backend) loneLogs(ctx context.Context, w telemetry.Window, svc string, failingSub func(*sqlText)) (counts []loneCount, limited bool, err error) {
	l := &sqlText{}
	lone := func(l *sqlText) {
		l.w(" FROM ", b.logs, " WHERE ", errorLogExpr, " AND ")
		window(l, "Timestamp", w)
		if svc != "" {
			service(l, svc)
		}
	}
	l.w("SELECT ServiceName, toInt64(count()), toInt64(max(toUnixTimestamp64Nano(Timestamp)))")
	lone(l)
	l.w(" AND (TraceId = '' OR (TraceId GLOBAL NOT IN ")
	failingSub(l)
	l.w(" AND TraceId GLOBAL NOT IN (SELECT TraceId FROM ", b.traces, " WHERE StatusCode = 'Error' AND TraceId GLOBAL IN (SELECT TraceId")
	lone(l)
	l.w(" AND TraceId != '' AND TraceId GLOBAL NOT IN ")
	failingSub(l)
	l.w(")))) GROUP BY ServiceName")
	limited, err = b.r.query(ctx, l, b.o.MaxGroups, func(rows driver.Rows) error {
		var c loneCount
		if err := rows.Scan(&c.svc, &c.n, &c.newest); err != nil {
			return err
		}
		counts = append(counts, c)
		return nil
	})
	return counts, limited, err
}

// askByIDMax bounds the trace ids one statement of failedAnywhere binds: they travel in the
// request's URL over HTTP (about 45 bytes each), which proxies in front of ClickHouse often
// limit to a few hundred kilobytes or less.
var askByIDMax = 2_000

// failedAnywhere says which of traces have an error span anywhere in the table.
func (b *Backend) failedAnywhere(ctx context.Context, traces []string) (map[string]bool, error) {
	failed := map[string]bool{}
	for lo := 0; lo < len(traces); lo += askByIDMax {
		part := traces[lo:min(lo+askByIDMax, len(traces))]
		p := &sqlText{}
		p.w("SELECT DISTINCT TraceId FROM ", b.traces, " WHERE StatusCode = 'Error' AND TraceId IN ", p.strs(part))
		if _, err := b.r.query(ctx, p, len(part), func(rows driver.Rows) error {
			var t string
			if err := rows.Scan(&t); err != nil {
				return err
			}
			failed[t] = true
			return nil
		}); err != nil {
			return nil, err
		}
	}
	return failed, nil
}
