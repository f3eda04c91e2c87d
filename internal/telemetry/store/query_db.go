package store

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"github.com/runlens/runlens/internal/telemetry"
)

// maxSeekLabels bounds the database labels whose rows are read one index seek each; past it (a
// statement normalization that leaves values in) an edge is read in one pass over the index.
const maxSeekLabels = 500

// DBOperations groups the window's database spans by operation label. From the derived columns
// the window's whole hours come from the database rollup and its partial hours from the
// database index (one seek per label); only the labels that make the answer get a p95, from
// their durations in the window, and their newest span gives the system and collection.
func (q *Querier) DBOperations(ctx context.Context, dq telemetry.DBQuery) (telemetry.DBReport, error) {
	derived, err := q.derived(ctx)
	if err != nil {
		return telemetry.DBReport{}, err
	}
	if !derived {
		return q.dbOperationsDecoded(ctx, dq)
	}
	rep := telemetry.DBReport{}
	type group struct {
		stats telemetry.DBOperationStats
		sum   int64
	}
	byLabel := map[string]*group{}
	add := func(scan func(...any) error) error {
		var label string
		var n, sum, errs int64
		if err := scan(&label, &n, &sum, &errs); err != nil {
			return err
		}
		g := byLabel[label]
		if g == nil {
			g = &group{stats: telemetry.DBOperationStats{Label: label}}
			byLabel[label] = g
		}
		g.stats.Count += n
		g.sum += sum
		g.stats.ErrorCount += errs
		return nil
	}
	lo, hi, edges := splitHours(dq.Window)
	if lo < hi {
		var f filter
		f.add("Bucket >= ? AND Bucket < ?", lo, hi)
		f.service(dq.Service)
		if dq.System != "" {
			f.add("DbSystem = ?", dq.System)
		}
		if err := q.eachRow(ctx, `SELECT DbLabel, SUM(Spans), SUM(Duration), SUM(Errors) FROM `+DBActivityTable+f.where()+
			` GROUP BY DbLabel`, f.args, add); err != nil {
			return rep, fmt.Errorf("read database activity: %w", err)
		}
	}
	if len(edges) > 0 {
		labels, err := q.dbLabels(ctx, maxSeekLabels+1)
		if err != nil {
			return rep, err
		}
		for _, e := range edges {
			f := dbFilter(dq, e)
			if len(labels) <= maxSeekLabels {
				args := make([]any, len(labels))
				for i, l := range labels {
					args[i] = l
				}
				f.add("DbLabel IN ("+placeholders(len(labels))+")", args...)
			} else {
				f.conds[1] = "+Timestamp >= ? AND +Timestamp < ?" // one pass over the index
			}
			if err := q.eachRow(ctx, `SELECT DbLabel, COUNT(*), SUM(Duration), SUM(IsError) FROM `+TracesTable+f.where()+
				` GROUP BY DbLabel`, f.args, add); err != nil {
				return rep, fmt.Errorf("group database spans: %w", err)
			}
		}
	}
	var total int64
	groups := make([]*group, 0, len(byLabel))
	for _, g := range byLabel {
		if g.stats.Count == 0 {
			continue
		}
		rep.SampleCount += g.stats.Count
		total += g.sum
		g.stats.TotalMs = telemetry.Ms(g.sum)
		groups = append(groups, g)
	}
	rep.Scan = scanOf(dq.Window, int(rep.SampleCount), false)
	slices.SortFunc(groups, func(a, b *group) int {
		return cmp.Or(cmp.Compare(b.stats.TotalMs, a.stats.TotalMs), cmp.Compare(a.stats.Label, b.stats.Label))
	})
	n := cmp.Or(dq.TopN, 5)
	// The order's second key is the p95: compute it for every label that can make the answer,
	// the first n and any tied with the n-th on total time.
	candidates := groups
	if len(groups) > n {
		end := n
		for end < len(groups) && groups[end].stats.TotalMs == groups[n-1].stats.TotalMs {
			end++
		}
		candidates = groups[:end]
	}
	whole := dbFilter(dq, [2]int64{dq.Window.StartMs * 1e6, dq.Window.EndMs * 1e6})
	for _, g := range candidates {
		p95, err := q.labelP95(ctx, whole, g.stats.Label, g.stats.Count)
		if err != nil {
			return rep, err
		}
		g.stats.P95Ms = telemetry.Ms(p95)
		g.stats.ShareOfTotal = telemetry.Share(g.sum, total)
	}
	slices.SortFunc(candidates, func(a, b *group) int {
		return cmp.Or(cmp.Compare(b.stats.TotalMs, a.stats.TotalMs), cmp.Compare(b.stats.P95Ms, a.stats.P95Ms),
			cmp.Compare(a.stats.Label, b.stats.Label))
	})
	for _, g := range candidates[:min(n, len(candidates))] {
		if err := q.newestDBSpan(ctx, whole, &g.stats); err != nil {
			return rep, err
		}
		rep.Operations = append(rep.Operations, g.stats)
	}
	return rep, nil
}

// splitHours divides a window into whole hour buckets [lo, hi) and the partial ranges at its
// edges, in ns.
func splitHours(w telemetry.Window) (lo, hi int64, edges [][2]int64) {
	start, end := w.StartMs*1e6, w.EndMs*1e6
	if end <= start {
		return 0, 0, nil
	}
	lo, hi = (start+dbBucketNs-1)/dbBucketNs, end/dbBucketNs
	if lo >= hi {
		return 0, 0, [][2]int64{{start, end}}
	}
	if s := lo * dbBucketNs; start < s {
		edges = append(edges, [2]int64{start, s})
	}
	if e := hi * dbBucketNs; e < end {
		edges = append(edges, [2]int64{e, end})
	}
	return lo, hi, edges
}

// dbFilter selects the database spans of the query's service and system in [r[0], r[1]) ns,
// through the database index. Its second condition is the time range.
func dbFilter(dq telemetry.DBQuery, r [2]int64) filter {
	var f filter
	f.add("DbLabel != ''")
	f.add("Timestamp >= ? AND Timestamp < ?", r[0], r[1])
	f.service(dq.Service)
	if dq.System != "" {
		f.add("+DbSystem = ?", dq.System)
	}
	return f
}

// dbLabels lists up to limit distinct database labels, skipping from one to the next through
// the database index.
func (q *Querier) dbLabels(ctx context.Context, limit int) ([]string, error) {
	var out []string
	err := q.eachRow(ctx, `WITH RECURSIVE labels(label) AS (
		SELECT MIN(DbLabel) FROM `+TracesTable+` WHERE DbLabel != ''
		UNION ALL
		SELECT (SELECT MIN(DbLabel) FROM `+TracesTable+` WHERE DbLabel != '' AND DbLabel > labels.label)
		FROM labels WHERE labels.label IS NOT NULL
	) SELECT label FROM labels WHERE label IS NOT NULL LIMIT ?`, []any{limit}, func(scan func(...any) error) error {
		var l string
		err := scan(&l)
		out = append(out, l)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list database labels: %w", err)
	}
	return out, nil
}

// labelP95 is the nearest-rank p95 of the n durations of label among the spans passing f,
// read as one comma-separated text and selected without sorting.
func (q *Querier) labelP95(ctx context.Context, f filter, label string, n int64) (int64, error) {
	f.add("DbLabel = ?", label)
	var text string
	err := q.store.DB().QueryRowContext(ctx, `SELECT COALESCE(group_concat(Duration), '') FROM `+TracesTable+f.where(), f.args...).
		Scan(&text)
	if err != nil {
		return 0, fmt.Errorf("read database durations: %w", err)
	}
	ds, err := parseDurations(text, int(n))
	if err != nil {
		return 0, fmt.Errorf("read database durations of %q: %w", label, err)
	}
	return nthSmallest(ds, telemetry.RankIndex(len(ds), 0.95)), nil
}

// newestDBSpan fills the system and collection of op from its newest span passing f.
func (q *Querier) newestDBSpan(ctx context.Context, f filter, op *telemetry.DBOperationStats) error {
	f.add("DbLabel = ?", op.Label)
	var name, attrs string
	err := q.store.DB().QueryRowContext(ctx, `SELECT COALESCE(DbSystem, ''), SpanName, SpanAttributes FROM `+TracesTable+
		f.where()+` ORDER BY Timestamp DESC LIMIT 1`, f.args...).Scan(&op.System, &name, &attrs)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil
	case err != nil:
		return fmt.Errorf("read database span: %w", err)
	}
	d, _ := q.conv.DBOperation(name, decodeAttrs(attrs))
	op.Collection = d.Collection
	return nil
}

// parseDurations reads n non-negative integers separated by commas.
func parseDurations(text string, n int) ([]int64, error) {
	out := make([]int64, 0, n)
	for i := 0; i < len(text); i++ {
		v, next, ok := parseUint(text, i)
		if !ok || (next < len(text) && text[next] != ',') {
			return nil, fmt.Errorf("malformed duration list at byte %d", next)
		}
		out = append(out, v)
		i = next
	}
	if len(out) != n {
		return nil, fmt.Errorf("read %d durations, want %d", len(out), n)
	}
	return out, nil
}

// nthSmallest returns the k-th smallest (zero-based) of xs, reordering xs: quickselect with a
// median-of-three pivot, linear on average.
func nthSmallest(xs []int64, k int) int64 {
	lo, hi := 0, len(xs)-1
	for lo < hi {
		mid := lo + (hi-lo)/2
		if xs[mid] < xs[lo] {
			xs[mid], xs[lo] = xs[lo], xs[mid]
		}
		if xs[hi] < xs[lo] {
			xs[hi], xs[lo] = xs[lo], xs[hi]
		}
		if xs[hi] < xs[mid] {
			xs[hi], xs[mid] = xs[mid], xs[hi]
		}
		pivot := xs[mid]
		i, j := lo, hi
		for i <= j {
			for xs[i] < pivot {
				i++
			}
			for xs[j] > pivot {
				j--
			}
			if i <= j {
				xs[i], xs[j] = xs[j], xs[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return xs[k]
		}
	}
	return xs[k]
}
