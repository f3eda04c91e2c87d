package clickhouse

import (
	"context"
	"slices"
	"strconv"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/conventions"
)

var _ telemetry.ErrorAggregator = (*Backend)(nil)

// AggregateErrors implements telemetry.ErrorAggregator: the window's error occurrences
// grouped by the engine's GroupOccurrences.
func (b *Backend) AggregateErrors(ctx context.Context, q telemetry.ErrorsQuery, conv *conventions.Conventions) (telemetry.ErrorReport, bool, error) {
	if err := b.ready(ctx); err != nil {
		return telemetry.ErrorReport{}, false, err
	}
	occ, limited, scanned, err := b.occurrences(ctx, conv, q.Window)
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
func (b *Backend) occurrences(ctx context.Context, conv *conventions.Conventions, w telemetry.Window) (list []telemetry.Occurrence, limited bool, scanned int64, err error) {
	maxRows := telemetry.DefaultLimits.MaxScanRows
	failingSub := func(q *sqlText) {
		q.w("(SELECT TraceId FROM ", b.traces, " WHERE ")
		window(q, "Timestamp", w)
		q.w(" AND StatusCode = 'Error')")
	}
	// The failing traces' origins; and, in a second query run at the same time, the error
	// records of the window or of those traces (one read of the logs table for both).
	within, err := b.failingSpan(ctx, w, failingSub)
	if err != nil {
		return nil, false, 0, err
	}
	s := &sqlText{}
	b.originsQuery(s, conv, failingSub, within, maxRows)
	l := &sqlText{}
	l.w("SELECT toUnixTimestamp64Nano(Timestamp), TraceId, SpanId, ServiceName, toUInt8(SeverityNumber), SeverityText, Body, LogAttributes, ")
	window(l, "Timestamp", w)
	l.w(" AS inWindow FROM ", b.logs, " WHERE ", errorLogExpr, " AND (inWindow OR TraceId GLOBAL IN ")
	failingSub(l)
	l.w(") ORDER BY Timestamp DESC LIMIT ", strconv.Itoa(2*maxRows+1))
	traces := map[string]*originTrace{}
	var order []string
	var spans int64
	var tracesLimited, logsLimited bool
	var recs []telemetry.LogRow
	var inWindow []bool
	err = parallel(func() error {
		var err error
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
	failedElsewhere := map[string]bool{}
	roots := map[string]telemetry.RunOfTrace{}
	if len(probe) > 0 {
		p := &sqlText{}
		p.w("SELECT DISTINCT TraceId FROM ", b.traces, " WHERE StatusCode = 'Error' AND TraceId IN ", p.strs(probe))
		if _, err := b.r.query(ctx, p, len(probe), func(rows driver.Rows) error {
			var t string
			if err := rows.Scan(&t); err != nil {
				return err
			}
			failedElsewhere[t] = true
			return nil
		}); err != nil {
			return nil, false, 0, err
		}
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

// failingSpan is the time the spans of the window's failing traces lie in, read from the
// exporter's trace-id lookup table (its Start and End per trace and insert), so the read of
// those traces' spans prunes partitions and granules outside it instead of reading every
// TraceId of the table: a window of an hour in a table kept for days reads about that hour.
// It is the zero window (no narrowing) when there is no lookup table, when the table holds
// fewer than narrowMinSpans spans or the window covers all of it already (the narrowing
// could only cost), or when the lookup table does not know every failing trace (its rows
// could have been dropped by a shorter TTL).
// narrowMinSpans is the table size from which failingSpan narrows: below it, reading every
// TraceId of the table costs less than the two small queries that find the traces' time
// (on a million spans, ~30–60 ms against ~90 ms, most of it the queries' fixed cost). Tests
// lower it to narrow small tables.
var narrowMinSpans uint64 = 1_000_000

func (b *Backend) failingSpan(ctx context.Context, w telemetry.Window, failing func(*sqlText)) (telemetry.Window, error) {
	if !b.hasLookup.Load() || w == (telemetry.Window{}) {
		return telemetry.Window{}, nil
	}
	var oldest, newest int64
	var spans uint64
	e := &sqlText{}
	e.w("SELECT toInt64(intDiv(toUnixTimestamp64Nano(min(Timestamp)), 1000000)), toInt64(intDiv(toUnixTimestamp64Nano(max(Timestamp)), 1000000)), toUInt64(count()) FROM ", b.traces)
	// ClickHouse answers this from the parts' metadata (min-max indexes, row counts), reading
	// no rows.
	limited, err := b.r.query(ctx, e, 1, func(rows driver.Rows) error { return rows.Scan(&oldest, &newest, &spans) })
	if err != nil || limited || spans < narrowMinSpans || (oldest >= w.StartMs && newest < w.EndMs) {
		return telemetry.Window{}, err
	}
	var traces, known uint64
	var start, end int64
	q := &sqlText{}
	q.w("SELECT toUInt64((SELECT uniqExact(TraceId) FROM ")
	failing(q)
	q.w(")), toUInt64(uniqExact(TraceId)), toInt64(toUnixTimestamp(min(Start))), toInt64(toUnixTimestamp(max(End))) FROM ", b.lookup, " WHERE TraceId GLOBAL IN ")
	failing(q)
	limited, err = b.r.query(ctx, q, 1, func(rows driver.Rows) error { return rows.Scan(&traces, &known, &start, &end) })
	if err != nil || limited || traces == 0 || known < traces {
		return telemetry.Window{}, err
	}
	// End is the newest span's second: the span of time ends after it.
	return telemetry.Window{StartMs: start * 1000, EndMs: (end + 1) * 1000}, nil
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
