package clickhouse

import (
	"context"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/conventions"
)

// AggregateDB implements telemetry.DBAggregator. ClickHouse selects the window's database
// spans (the conventions' key prefixes, compiled) and groups them by their raw system,
// statement, summary, operation and collection, with each group's durations. The statement
// is then normalized in Go — conventions.NormalizeStatement is a small SQL lexer (quotes,
// comments, hex, IN lists) that ClickHouse's regular expressions cannot reproduce exactly —
// and groups whose statements differ only in literals merge before their p95 is taken. Only
// durations cross the wire, never spans.
func (b *Backend) AggregateDB(ctx context.Context, q telemetry.DBQuery, conv *conventions.Conventions) (telemetry.DBReport, bool, error) {
	k := conv.DBKeys
	if len(k.KeyPrefixes) == 0 {
		return telemetry.DBReport{}, false, nil
	}
	if err := b.ready(ctx); err != nil {
		return telemetry.DBReport{}, false, err
	}
	s := &sqlText{}
	s.w("SELECT sys, stmt, summary, op, coll, countIf(StatusCode = 'Error'), groupArray(toUInt64(Duration)) FROM (SELECT ",
		first(s, "SpanAttributes", k.SystemKeys), " AS sys, ",
		first(s, "SpanAttributes", k.StatementKeys), " AS stmt, ",
		first(s, "SpanAttributes", k.SummaryKeys), " AS summary, ",
		first(s, "SpanAttributes", k.OperationKeys), " AS op, ",
		first(s, "SpanAttributes", k.CollectionKeys), " AS coll, Duration, StatusCode FROM ", b.traces, " WHERE ")
	window(s, "Timestamp", q.Window)
	if q.Service != "" {
		service(s, q.Service)
	}
	s.w(" AND (", attrCondition(s, "SpanAttributes", telemetry.DBAttrKeys(conv), ""), ")) WHERE stmt != '' OR summary != '' OR op != ''",
		" GROUP BY sys, stmt, summary, op, coll")
	var samples []telemetry.DBSample
	limited, err := b.r.query(ctx, s, b.o.MaxGroups, func(rows driver.Rows) error {
		var sys, stmt, summary, op, coll string
		var errs uint64
		var ds []uint64
		if err := rows.Scan(&sys, &stmt, &summary, &op, &coll, &errs, &ds); err != nil {
			return err
		}
		attrs := conventions.Attributes{k.KeyPrefixes[0]: "1"}
		set := func(keys []string, v string) {
			if len(keys) > 0 && v != "" {
				attrs[keys[0]] = v
			}
		}
		set(k.SystemKeys, sys)
		set(k.StatementKeys, stmt)
		set(k.SummaryKeys, summary)
		set(k.OperationKeys, op)
		set(k.CollectionKeys, coll)
		dbop, ok := conv.DBOperation("", attrs)
		if !ok {
			return nil
		}
		for i, d := range ds {
			samples = append(samples, telemetry.DBSample{Op: dbop, DurationNs: int64(min(d, 1<<63-1)), Error: uint64(i) < errs})
		}
		return nil
	})
	if err != nil {
		return telemetry.DBReport{}, false, err
	}
	rep := telemetry.SummarizeDB(q, samples, telemetry.DefaultLimits.MaxHints)
	rep.Scan = telemetry.Scan{WindowStartMs: q.Window.StartMs, WindowEndMs: q.Window.EndMs, Scanned: int64(len(samples)), Limited: limited}
	return rep, true, nil
}
