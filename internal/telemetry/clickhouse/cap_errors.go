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
// TraceOccurrences, TraceRun and LogOccurrence decide; an occurrence's origin is a rule over
// the trace tree, which stays in Go), from four queries instead of a scan per chunk of traces:
// every span of the traces with an error span in the window, those traces' error records, the
// window's error records, and, for records of other traces, whether their trace failed
// anywhere and its root. The trace sets are GLOBAL subqueries, read once.
func (b *Backend) occurrences(ctx context.Context, conv *conventions.Conventions, w telemetry.Window) (list []telemetry.Occurrence, limited bool, scanned int64, err error) {
	maxRows := telemetry.DefaultLimits.MaxScanRows
	failingSub := func(q *sqlText) {
		q.w("(SELECT TraceId FROM ", b.traces, " WHERE ")
		window(q, "Timestamp", w)
		q.w(" AND StatusCode = 'Error')")
	}
	// The failing traces' spans, newest first as a scan returns them.
	s := &sqlText{}
	s.w("SELECT ", spanColumns, ", SpanAttributes, arrayMap(t -> toUnixTimestamp64Nano(t), `Events.Timestamp`), `Events.Name`, `Events.Attributes`",
		" FROM ", b.traces, " WHERE TraceId GLOBAL IN ")
	failingSub(s)
	s.w(" ORDER BY Timestamp DESC, SpanId DESC LIMIT 1 BY TraceId, SpanId LIMIT ", strconv.Itoa(maxRows+1))
	spans := map[string][]telemetry.SpanRow{}
	var order []string
	n := 0
	lim, err := b.r.query(ctx, s, maxRows+1, func(rows driver.Rows) error {
		r, err := scanSpan(rows, telemetry.FieldAttributes|telemetry.FieldEvents)
		if err != nil {
			return err
		}
		if n++; n > maxRows {
			limited = true
			return nil
		}
		if _, ok := spans[r.TraceID]; !ok {
			order = append(order, r.TraceID)
		}
		spans[r.TraceID] = append(spans[r.TraceID], r)
		return nil
	})
	if err != nil {
		return nil, false, 0, err
	}
	limited, scanned = limited || lim, int64(n)
	// Their error records.
	l := &sqlText{}
	l.w("SELECT toUnixTimestamp64Nano(Timestamp), TraceId, SpanId, ServiceName, toUInt8(SeverityNumber), SeverityText, Body, LogAttributes FROM ", b.logs,
		" WHERE ", errorLogExpr, " AND TraceId GLOBAL IN ")
	failingSub(l)
	l.w(" ORDER BY Timestamp DESC LIMIT ", strconv.Itoa(maxRows+1))
	logs := map[string][]telemetry.LogRow{}
	lim, err = b.r.query(ctx, l, maxRows+1, func(rows driver.Rows) error {
		r, err := scanLog(rows)
		if err != nil {
			return err
		}
		logs[r.TraceID] = append(logs[r.TraceID], r)
		return nil
	})
	if err != nil {
		return nil, false, 0, err
	}
	limited = limited || lim
	slices.Sort(order) // the engine reads failing traces in id order
	for _, t := range order {
		for _, o := range telemetry.TraceOccurrences(conv, spans[t], logs[t]) {
			if w.ContainsNs(o.TimeNs) {
				list = append(list, o)
			}
		}
	}
	// The window's error records; those of no failing trace are occurrences of their own.
	errLogs, err := b.ScanLogs(ctx, telemetry.LogScan{Window: w, ErrorsOnly: true, Fields: telemetry.FieldAttributes, Limit: maxRows})
	if err != nil {
		return nil, false, 0, err
	}
	limited, scanned = limited || errLogs.Limited, scanned+errLogs.Scanned
	var probe []string
	seen := map[string]bool{}
	for _, r := range errLogs.Logs {
		if r.TraceID != "" && spans[r.TraceID] == nil && !seen[r.TraceID] {
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
	for i := range errLogs.Logs {
		r := &errLogs.Logs[i]
		if r.TraceID != "" && (spans[r.TraceID] != nil || failedElsewhere[r.TraceID]) {
			continue
		}
		list = append(list, telemetry.LogOccurrence(conv, r, roots[r.TraceID]))
	}
	return list, limited, scanned, nil
}

// scanLog reads a row of time, trace, span, service, severity number and text, body and
// attributes.
func scanLog(rows driver.Rows) (telemetry.LogRow, error) {
	var r telemetry.LogRow
	var sev uint8
	var attrs map[string]string
	if err := rows.Scan(&r.TimeNs, &r.TraceID, &r.SpanID, &r.Service, &sev, &r.SeverityText, &r.Body, &attrs); err != nil {
		return r, err
	}
	r.SeverityNumber, r.Attributes = int32(sev), nonNil(attrs)
	return r, nil
}
