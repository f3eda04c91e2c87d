package clickhouse

import (
	"context"
	"slices"
	"strings"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/conventions"
)

// dbRaws writes the subquery of the window's raw database operations: each distinct
// (system, statement, summary, operation, collection) of its database spans (the conventions'
// key prefixes, compiled), named raw by a hash of all five, with its spans' count (n), errors
// (e), total time (d) and a state of their durations (st) that merges into the nearest-rank
// p95 of any set of raw operations (dbStats).
func (b *Backend) dbRaws(s *sqlText, q telemetry.DBQuery, conv *conventions.Conventions) {
	k := conv.DBKeys
	s.w("(SELECT raw, any(sys) AS sys, any(stmt) AS stmt, any(summary) AS summary, ",
		"any(op) AS op, any(coll) AS coll, count() AS n, countIf(StatusCode = 'Error') AS e, sum(Duration) AS d, ",
		rankFunc("quantilesExactState", "Duration", []float64{0.95}), " AS st FROM (SELECT *, cityHash64(sys, stmt, summary, op, coll) AS raw FROM (SELECT ",
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
	// too, so the skip index drops the granules without any. The scan's rule (a non-empty
	// attribute under the key prefixes) is written only when a statement, summary or
	// operation key can lie outside them: otherwise the outer condition implies it (a pass
	// over every attribute of every database span, ~10% of the query).
	s.w(" AND ", anyKey(s, "SpanAttributes", k.StatementKeys, k.SummaryKeys, k.OperationKeys))
	if !dbKeysWithinPrefixes(conv) {
		s.w(" AND (", attrCondition(s, "SpanAttributes", telemetry.DBAttrKeys(conv), ""), ")")
	}
	s.w(") WHERE stmt != '' OR summary != '' OR op != '') GROUP BY raw)")
}

// dbKeysWithinPrefixes says whether every statement, summary and operation key lies under
// the database key prefixes (telemetry.DBAttrKeys), as the presets' do.
func dbKeysWithinPrefixes(conv *conventions.Conventions) bool {
	prefixes := telemetry.DBAttrKeys(conv)
	k := conv.DBKeys
	for _, key := range slices.Concat(k.StatementKeys, k.SummaryKeys, k.OperationKeys) {
		if !slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(key, p) }) {
			return false
		}
	}
	return true
}

// dbStats are a set of raw operations' counts, errors, total time and nearest-rank p95.
var dbStats = "toInt64(sum(n)), toInt64(sum(e)), toInt64(sum(d)), toInt64(" + rankFunc("quantilesExactMerge", "st", []float64{0.95}) + "[1])"

// IndexDB implements telemetry.DBIndexer, in one query when it can and two when it
// must. Operations are the conventions' (conventions.NormalizeStatement is a small SQL lexer
// — quotes, comments, hex, IN lists — ClickHouse cannot reproduce exactly), so Go reads every
// distinct raw operation (system, statement, summary, operation, collection) of the window's
// database spans. The first query lists them (dbRaws), each with the group ClickHouse's
// normalizedQueryHash puts it in — computed once per raw operation, not per span — and
// computes counts, errors, total time and the nearest-rank p95 of each such group (two
// grouping sets over the raw operations, their duration states merged). When ClickHouse's
// groups are the conventions' operations — every raw operation of a group is one operation,
// and no operation has raw operations in two groups — those are the answer. Otherwise (a
// statement the two normalizations read differently) the second query maps every raw
// operation to its operation (a bound array) and computes them per operation. No duration
// and no span crosses the wire.
func (b *Backend) IndexDB(ctx context.Context, q telemetry.DBQuery, ask telemetry.Ask) (telemetry.DBOperations, bool, error) {
	conv := ask.Conv
	k := conv.DBKeys
	if len(k.KeyPrefixes) == 0 {
		return telemetry.DBOperations{}, false, nil
	}
	if err := b.ready(ctx); err != nil {
		return telemetry.DBOperations{}, false, err
	}
	rep := telemetry.DBOperations{Scan: telemetry.Scan{WindowStartMs: q.Window.StartMs, WindowEndMs: q.Window.EndMs}}
	s := &sqlText{}
	// Grouped by the hash that names a raw operation (one fixed-size key per span) rather than
	// over its five texts. Standard GROUPING semantics: 1 for the set without raw.
	s.w("SELECT grouping(raw), raw, cityHash64(sys, normalizedQueryHash(stmt), summary, op, coll) AS norm, ",
		"any(sys), any(stmt), any(summary), any(op), any(coll), ", dbStats, " FROM ")
	b.dbRaws(s, q, conv)
	s.w(" GROUP BY GROUPING SETS ((raw, norm), (norm))")
	var raws []uint64
	var keyOf []uint32
	var ops []conventions.DBOperation // per operation index (1-based in keyOf)
	index := map[string]uint32{}
	systems := map[string]bool{}
	// Whether ClickHouse's groups are the operations: the operation of each group's raw
	// operations (0: none, as for a system filtered out), the group of each operation.
	opOfNorm, normOfOp := map[uint64]uint32{}, map[uint32]uint64{}
	same := true
	type stats struct{ n, errs, sum, p95 int64 }
	groups := map[uint64]stats{}
	rawRows, cut := 0, false
	limited, err := b.r.query(ctx, s, 2*b.o.MaxGroups, func(rows driver.Rows) error {
		var byNorm uint64
		var sys, stmt, summary, op, coll string
		var raw, norm uint64
		var st stats
		if err := rows.Scan(&byNorm, &raw, &norm, &sys, &stmt, &summary, &op, &coll, &st.n, &st.errs, &st.sum, &st.p95); err != nil {
			return err
		}
		if byNorm == 1 {
			groups[norm] = st
			return nil
		}
		if rawRows++; rawRows > b.o.MaxGroups {
			cut = true // the raw operations are bounded as any aggregate's groups
			return nil
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
		var i uint32
		if dbop, ok := conv.DBOperation("", attrs); ok {
			systems[dbop.System] = true
			if q.System == "" || dbop.System == q.System {
				var seen bool
				i, seen = index[dbop.Key]
				if !seen {
					ops = append(ops, dbop)
					i = uint32(len(ops))
					index[dbop.Key] = i
				}
				raws, keyOf = append(raws, raw), append(keyOf, i)
			}
		}
		if j, seen := opOfNorm[norm]; seen && j != i {
			same = false
		}
		opOfNorm[norm] = i
		if i != 0 {
			if n, seen := normOfOp[i]; seen && n != norm {
				same = false
			}
			normOfOp[i] = norm
		}
		return nil
	})
	if err != nil {
		return rep, false, err
	}
	limited = limited || cut
	rep.Scan.Limited = limited
	var spans int64
	if same && !limited {
		for i, op := range ops {
			st := groups[normOfOp[uint32(i+1)]]
			spans += st.n
			rep.Operations = append(rep.Operations, telemetry.DBOperationFacts{Op: op, Count: st.n, Errors: st.errs, SumNs: st.sum, P95Ns: st.p95})
		}
		raws = nil
	}
	if len(raws) > 0 {
		s := &sqlText{}
		s.w("SELECT transform(raw, ", s.bind("Array(UInt64)", raws), ", ", s.bind("Array(UInt32)", keyOf), ", toUInt32(0)) AS k, ",
			dbStats, " FROM ")
		b.dbRaws(s, q, conv)
		s.w(" WHERE k != 0 GROUP BY k")
		lim, err := b.r.query(ctx, s, len(ops)+1, func(rows driver.Rows) error {
			var i uint32
			var n, errs, sum int64
			var p95 int64
			if err := rows.Scan(&i, &n, &errs, &sum, &p95); err != nil {
				return err
			}
			spans += n
			rep.Operations = append(rep.Operations, telemetry.DBOperationFacts{Op: ops[i-1], Count: n, Errors: errs, SumNs: sum, P95Ns: p95})
			return nil
		})
		if err != nil {
			return rep, false, err
		}
		rep.Scan.Limited = rep.Scan.Limited || lim
	}
	rep.Scan.Scanned = spans
	rep.Systems = telemetry.Keys(systems)
	return rep, true, nil
}
