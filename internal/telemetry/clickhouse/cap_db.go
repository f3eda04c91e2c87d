package clickhouse

import (
	"cmp"
	"context"
	"slices"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/conventions"
)

// dbFields writes the subquery of the window's database spans (the conventions' key prefixes,
// compiled) with their raw fields and raw, a hash of all five (system, statement, summary,
// operation, collection) that names the raw operation in the second query.
func (b *Backend) dbFields(s *sqlText, q telemetry.DBQuery, conv *conventions.Conventions) {
	k := conv.DBKeys
	s.w("(SELECT sys, stmt, summary, op, coll, cityHash64(sys, stmt, summary, op, coll) AS raw, Duration, StatusCode FROM (SELECT ",
		first(s, "SpanAttributes", k.SystemKeys), " AS sys, ",
		first(s, "SpanAttributes", k.StatementKeys), " AS stmt, ",
		first(s, "SpanAttributes", k.SummaryKeys), " AS summary, ",
		first(s, "SpanAttributes", k.OperationKeys), " AS op, ",
		first(s, "SpanAttributes", k.CollectionKeys), " AS coll, toUInt64(Duration) AS Duration, StatusCode FROM ", b.traces, " WHERE ")
	window(s, "Timestamp", q.Window)
	if q.Service != "" {
		service(s, q.Service)
	}
	// The outer condition needs a statement, summary or operation key: the inner one says so
	// too, so the skip index drops the granules without any.
	s.w(" AND ", anyKey(s, "SpanAttributes", k.StatementKeys, k.SummaryKeys, k.OperationKeys),
		" AND (", attrCondition(s, "SpanAttributes", telemetry.DBAttrKeys(conv), ""), ")) WHERE stmt != '' OR summary != '' OR op != '')")
}

// AggregateDB implements telemetry.DBAggregator in two queries. The first lists the distinct
// raw operations (system, statement, summary, operation, collection) of the window's database
// spans. Go then reads each as the conventions do — conventions.NormalizeStatement is a small
// SQL lexer (quotes, comments, hex, IN lists) ClickHouse's regular expressions cannot
// reproduce exactly — so statements that differ only in literals share one operation. The
// second query maps every raw operation to its operation (a bound array) and computes counts,
// errors, total time and the nearest-rank p95 per operation in ClickHouse: no duration and
// no span crosses the wire.
func (b *Backend) AggregateDB(ctx context.Context, q telemetry.DBQuery, conv *conventions.Conventions) (telemetry.DBReport, bool, error) {
	k := conv.DBKeys
	if len(k.KeyPrefixes) == 0 {
		return telemetry.DBReport{}, false, nil
	}
	if err := b.ready(ctx); err != nil {
		return telemetry.DBReport{}, false, err
	}
	rep := telemetry.DBReport{Scan: telemetry.Scan{WindowStartMs: q.Window.StartMs, WindowEndMs: q.Window.EndMs}}
	s := &sqlText{}
	// Grouped by the hash that names a raw operation (one fixed-size key per span) rather than
	// DISTINCT over its five texts.
	s.w("SELECT any(sys), any(stmt), any(summary), any(op), any(coll), raw FROM ")
	b.dbFields(s, q, conv)
	s.w(" GROUP BY raw")
	var raws []uint64
	var keyOf []uint32
	var ops []conventions.DBOperation // per operation index (1-based in keyOf)
	index := map[string]uint32{}
	systems := map[string]bool{}
	limited, err := b.r.query(ctx, s, b.o.MaxGroups, func(rows driver.Rows) error {
		var sys, stmt, summary, op, coll string
		var raw uint64
		if err := rows.Scan(&sys, &stmt, &summary, &op, &coll, &raw); err != nil {
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
		systems[dbop.System] = true
		if q.System != "" && dbop.System != q.System {
			return nil
		}
		i, seen := index[dbop.Key]
		if !seen {
			ops = append(ops, dbop)
			i = uint32(len(ops))
			index[dbop.Key] = i
		}
		raws, keyOf = append(raws, raw), append(keyOf, i)
		return nil
	})
	if err != nil {
		return rep, false, err
	}
	rep.Scan.Limited = limited
	if len(raws) > 0 {
		s := &sqlText{}
		s.w("SELECT transform(raw, ", s.bind("Array(UInt64)", raws), ", ", s.bind("Array(UInt32)", keyOf), ", toUInt32(0)) AS k, toInt64(count()), ",
			"toInt64(countIf(StatusCode = 'Error')), toInt64(sum(Duration)), toInt64(", nearestRank("Duration", 0.95), "[1]) FROM ")
		b.dbFields(s, q, conv)
		s.w(" WHERE k != 0 GROUP BY k")
		var total int64
		var sums []int64
		lim, err := b.r.query(ctx, s, len(ops)+1, func(rows driver.Rows) error {
			var i uint32
			var n, errs, sum int64
			var p95 int64
			if err := rows.Scan(&i, &n, &errs, &sum, &p95); err != nil {
				return err
			}
			op := ops[i-1]
			rep.SampleCount += n
			total += sum
			sums = append(sums, sum)
			rep.Operations = append(rep.Operations, telemetry.DBOperationStats{Key: op.Key, Label: op.Label, Statement: op.Statement,
				System: op.System, Collection: op.Collection, Count: n, ErrorCount: errs, TotalMs: telemetry.Ms(sum), P95Ms: telemetry.Ms(p95),
			})
			return nil
		})
		if err != nil {
			return rep, false, err
		}
		rep.Scan.Limited = rep.Scan.Limited || lim
		for i := range rep.Operations {
			rep.Operations[i].ShareOfTotal = telemetry.Share(sums[i], total)
		}
	}
	rep.Scan.Scanned = rep.SampleCount
	telemetry.SortDBOperations(rep.Operations)
	rep.Total = len(rep.Operations)
	if n := cmp.Or(q.TopN, telemetry.DefaultDBTopN); len(rep.Operations) > n {
		rep.Operations = rep.Operations[:n]
	}
	if q.System != "" && rep.SampleCount == 0 {
		delete(systems, "")
		names := make([]string, 0, len(systems))
		for n := range systems {
			names = append(names, n)
		}
		slices.Sort(names)
		if len(names) > telemetry.DefaultLimits.MaxHints {
			names = names[:telemetry.DefaultLimits.MaxHints]
		}
		rep.KnownSystems = names
	}
	return rep, true, nil
}
