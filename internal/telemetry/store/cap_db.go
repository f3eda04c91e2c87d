package store

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/conventions"
)

// maxSeekKeys bounds the database operations whose rows are read one index seek each; past it
// (a statement normalization that leaves values in) an edge is read in one pass over the index.
const maxSeekKeys = 500

// IndexDB implements telemetry.DBIndexer. The window's whole hours come from the database
// rollup and its partial hours from the database index (one seek per operation); only the
// operations that can make the answer get a p95, from their durations in the window, and
// their label, statement and collection from their newest span, read with DBOperationOf as
// DBOperationsOf reads its first sample; the others are Partial.
func (b *Backend) IndexDB(ctx context.Context, q telemetry.DBQuery, ask telemetry.Ask) (telemetry.DBOperations, bool, error) {
	var d telemetry.DBOperations
	handled, err := b.snapshot(ctx, ask.Conv, func(tx *sql.Tx) error {
		var err error
		d, err = dbOperations(ctx, tx, q, ask.Conv)
		return err
	})
	return d, handled, err
}

// dbGroup is one operation's totals in the window.
type dbGroup struct {
	key, system            string
	count, sum, errorCount int64
}

func dbOperations(ctx context.Context, tx *sql.Tx, q telemetry.DBQuery, conv *conventions.Conventions) (telemetry.DBOperations, error) {
	rep := telemetry.DBOperations{}
	groups := map[string]*dbGroup{}
	add := func(scan func(...any) error) error {
		var g dbGroup
		if err := scan(&g.key, &g.system, &g.count, &g.sum, &g.errorCount); err != nil {
			return err
		}
		t := groups[g.key]
		if t == nil {
			t = &dbGroup{key: g.key, system: g.system}
			groups[g.key] = t
		}
		t.count += g.count
		t.sum += g.sum
		t.errorCount += g.errorCount
		return nil
	}
	sp, err := liveSplit(ctx, tx, q.Window)
	if err != nil {
		return telemetry.DBOperations{}, err
	}
	lo, hi, edges := sp.lo, sp.hi, sp.edges
	if lo < hi {
		// Each operation's whole buckets, one range of the rollup's key each (skipping from
		// one operation to the next), summed by SQLite into one text per operation.
		var f filter
		f.add("r.DbKey = ops.k")
		f.add("r.Bucket >= ? AND r.Bucket < ?", lo, hi)
		f.service("r.ServiceName", q.Service)
		if err := eachRow(ctx, tx, `WITH RECURSIVE ops(k) AS (
			SELECT MIN(DbKey) FROM `+DBActivityTable+`
			UNION ALL
			SELECT (SELECT MIN(DbKey) FROM `+DBActivityTable+` WHERE DbKey > ops.k) FROM ops WHERE ops.k IS NOT NULL
		) SELECT ops.k, (SELECT COALESCE(SUM(r.Spans) || char(31) || SUM(r.Duration) || char(31) || SUM(r.Errors) || char(31) ||
			MAX(r.DbSystem), '') FROM `+DBActivityTable+` r`+f.where()+`) FROM ops WHERE ops.k IS NOT NULL`, f.args,
			func(scan func(...any) error) error {
				var key, sums string
				if err := scan(&key, &sums); err != nil || sums == "" {
					return err
				}
				parts := strings.SplitN(sums, "\x1f", 4)
				if len(parts) != 4 {
					return errors.New("unexpected database rollup sums")
				}
				var n [3]int64
				for i := range n {
					v, err := strconv.ParseInt(parts[i], 10, 64)
					if err != nil {
						return err
					}
					n[i] = v
				}
				return add(func(dest ...any) error {
					*dest[0].(*string), *dest[1].(*string) = key, parts[3]
					*dest[2].(*int64), *dest[3].(*int64), *dest[4].(*int64) = n[0], n[1], n[2]
					return nil
				})
			}); err != nil {
			return rep, fmt.Errorf("read database activity: %w", err)
		}
	}
	if len(edges) > 0 {
		opKeys, err := dbKeys(ctx, tx, maxSeekKeys+1)
		if err != nil {
			return rep, err
		}
		for _, e := range edges {
			f := dbFilter(q, e)
			if len(opKeys) <= maxSeekKeys {
				f.in("DbKey", opKeys)
			} else {
				f.conds[1] = "+Timestamp >= ? AND +Timestamp < ?" // one pass over the index
			}
			if err := eachRow(ctx, tx, `SELECT DbKey, COALESCE(DbSystem, ''), COUNT(*), SUM(Duration), SUM(IsError) FROM `+TracesTable+
				f.where()+` GROUP BY DbKey, DbSystem`, f.args, add); err != nil {
				return rep, fmt.Errorf("group database spans: %w", err)
			}
		}
	}
	systems := map[string]bool{}
	var kept []*dbGroup
	var spans int64
	for _, g := range groups {
		if g.count == 0 {
			continue
		}
		systems[g.system] = true
		if q.System != "" && g.system != q.System {
			continue
		}
		kept = append(kept, g)
		spans += g.count
	}
	rep.Systems = telemetry.Keys(systems)
	rep.Scan = windowScan(q.Window, spans)
	// The order's first key is the total time: only operations at least as long in total as
	// the n-th longest can make the answer; they get the p95 and label the rest of it needs.
	slices.SortFunc(kept, func(a, b *dbGroup) int { return cmp.Compare(telemetry.Ms(b.sum), telemetry.Ms(a.sum)) })
	n := cmp.Or(q.TopN, telemetry.DefaultDBTopN)
	candidates := kept
	if len(kept) > n {
		end := n
		for end < len(kept) && telemetry.Ms(kept[end].sum) == telemetry.Ms(kept[n-1].sum) {
			end++
		}
		candidates = kept[:end]
	}
	for _, g := range kept[len(candidates):] {
		rep.Operations = append(rep.Operations, telemetry.DBOperationFacts{Op: conventions.DBOperation{Key: g.key, System: g.system},
			Count: g.count, Errors: g.errorCount, SumNs: g.sum, Partial: true})
	}
	whole := dbFilter(q, [2]int64{q.Window.StartMs * 1e6, q.Window.EndMs * 1e6})
	var sketched []string
	for _, g := range candidates {
		if g.count > sketchExactMax && lo < hi {
			sketched = append(sketched, g.key)
		}
	}
	sketches, err := keySketches(ctx, tx, q, sketched, lo, hi, edges)
	if err != nil {
		return rep, err
	}
	for _, g := range candidates {
		op, err := newestOperation(ctx, tx, whole, g.key, conv)
		if err != nil {
			return rep, err
		}
		var p95 int64
		if sk, ok := sketches[g.key]; ok {
			p95 = sk.quantile(0.95)
			rep.PercentileError = SketchRelativeError
		} else if p95, err = keyP95(ctx, tx, whole, g.key, g.count); err != nil {
			return rep, err
		}
		rep.Operations = append(rep.Operations, telemetry.DBOperationFacts{Op: op, Count: g.count, Errors: g.errorCount, SumNs: g.sum, P95Ns: p95})
	}
	return rep, nil
}

// dbFilter selects the database operation spans of the query's service in [r[0], r[1]) ns,
// through the database index. Its second condition is the time range.
func dbFilter(q telemetry.DBQuery, r [2]int64) filter {
	var f filter
	f.add("DbKey != ''")
	f.add("Timestamp >= ? AND Timestamp < ?", r[0], r[1])
	f.service("ServiceName", q.Service)
	return f
}

// dbKeys lists up to limit distinct operation keys, skipping from one to the next through the
// database index.
func dbKeys(ctx context.Context, tx *sql.Tx, limit int) ([]string, error) {
	var out []string
	err := eachRow(ctx, tx, `WITH RECURSIVE ops(k) AS (
		SELECT MIN(DbKey) FROM `+TracesTable+` WHERE DbKey != ''
		UNION ALL
		SELECT (SELECT MIN(DbKey) FROM `+TracesTable+` WHERE DbKey != '' AND DbKey > ops.k)
		FROM ops WHERE ops.k IS NOT NULL
	) SELECT k FROM ops WHERE k IS NOT NULL LIMIT ?`, []any{limit}, func(scan func(...any) error) error {
		var k string
		err := scan(&k)
		out = append(out, k)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list database operations: %w", err)
	}
	return out, nil
}

// keyP95 is the nearest-rank p95 of the n durations of operation key among the spans passing
// f, read as one comma-separated text and selected without sorting.
func keyP95(ctx context.Context, tx *sql.Tx, f filter, key string, n int64) (int64, error) {
	f = f.clone()
	f.add("DbKey = ?", key)
	var text string
	err := tx.QueryRowContext(ctx, `SELECT COALESCE(group_concat(Duration), '') FROM `+TracesTable+f.where(), f.args...).Scan(&text)
	if err != nil {
		return 0, fmt.Errorf("read database durations: %w", err)
	}
	ds, err := parseDurations(text, int(n))
	if err != nil {
		return 0, fmt.Errorf("read database durations: %w", err)
	}
	return nthSmallest(ds, telemetry.RankIndex(len(ds), 0.95)), nil
}

// keySketches are the sketches of the durations of operations keys in the window: their
// whole buckets [lo, hi) merged in one pass over the rollup, plus the exact durations of the
// window's edges. A percentile read from one is within SketchRelativeError of the exact one.
func keySketches(ctx context.Context, tx *sql.Tx, q telemetry.DBQuery, keys []string, lo, hi int64, edges [][2]int64) (map[string]sketch, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	out := make(map[string]sketch, len(keys))
	for _, k := range keys {
		out[k] = sketch{}
	}
	var f filter
	f.add("Bucket >= ? AND Bucket < ?", lo, hi)
	f.in("DbKey", keys)
	f.service("ServiceName", q.Service)
	err := eachRow(ctx, tx, `SELECT DbKey, `+sketchSumFunc+`(Sketch) FROM `+DBActivityTable+f.where()+` GROUP BY DbKey`, f.args, func(scan func(...any) error) error {
		var k string
		var b []byte
		if err := scan(&k, &b); err != nil {
			return err
		}
		return out[k].mergeBlob(b)
	})
	if err != nil {
		return nil, fmt.Errorf("read database sketches: %w", err)
	}
	for _, e := range edges {
		f := dbFilter(q, e)
		f.in("DbKey", keys)
		err := eachRow(ctx, tx, `SELECT DbKey, Duration FROM `+TracesTable+f.where(), f.args, func(scan func(...any) error) error {
			var k string
			var d int64
			err := scan(&k, &d)
			out[k].add(d, 1)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("read database durations: %w", err)
		}
	}
	return out, nil
}

// newestOperation reads the operation of key's newest span passing f (in scan order).
func newestOperation(ctx context.Context, tx *sql.Tx, f filter, key string, conv *conventions.Conventions) (conventions.DBOperation, error) {
	f = f.clone()
	f.add("DbKey = ?", key)
	rows, err := tx.QueryContext(ctx, `SELECT `+spanColumns+fieldColumns(telemetry.FieldAttributes, TracesTable, "SpanAttributes", "EventsJSON")+
		` FROM `+TracesTable+f.where()+spansNewest+` LIMIT 1`, f.args...)
	if err != nil {
		return conventions.DBOperation{}, fmt.Errorf("read database span: %w", err)
	}
	defer rows.Close()
	if !rows.Next() {
		return conventions.DBOperation{}, errors.Join(errors.New("read database span: none"), rows.Err())
	}
	r, _, err := scanSpanRow(rows, telemetry.FieldAttributes)
	if err != nil {
		return conventions.DBOperation{}, fmt.Errorf("read database span: %w", err)
	}
	op, _ := telemetry.DBOperationOf(conv, &r)
	return op, nil
}
