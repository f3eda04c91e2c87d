package store

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/conventions"
)

// ListRuns implements telemetry.RunLister. Every filter is a condition on the runs index
// (RunErrored is the normalized status), so the total is one COUNT over index entries and the
// page one ordered walk — in SortRuns' order, ties in scan order; the page's runs are read off
// their roots with RunFromRoot. A pinned query (AsOf) computes the status of the runs whose
// trace changed after its snapshot from the error spans it saw.
func (b *Backend) ListRuns(ctx context.Context, q telemetry.RunsQuery, ask telemetry.Ask) (telemetry.RunPage, bool, error) {
	conv := ask.Conv
	var page telemetry.RunPage
	handled, err := b.snapshot(ctx, conv, func(tx *sql.Tx) error {
		var err error
		page, err = listRuns(ctx, tx, q, conv)
		return err
	})
	return page, handled, err
}

func listRuns(ctx context.Context, tx *sql.Tx, q telemetry.RunsQuery, conv *conventions.Conventions) (telemetry.RunPage, error) {
	page := telemetry.RunPage{Scan: windowScan(q.Window, 0)}
	var wantErrored *bool
	switch q.Status {
	case "":
	case telemetry.StatusError, telemetry.StatusOK:
		e := q.Status == telemetry.StatusError
		wantErrored = &e
	default:
		return page, nil // no run has another status
	}
	d, err := dirtyTraces(ctx, tx, q.AsOf)
	if err != nil {
		return page, err
	}
	// A root's normalized status as the snapshot saw it: for the traces that changed after it,
	// the verdict over whether the trace had an error span then.
	errored, erroredArgs := "RunErrored", []any(nil)
	if len(d.traces) > 0 {
		errored = `(CASE WHEN TraceId IN (` + placeholders(len(d.traces)) + `) THEN ((COALESCE(RunVerdict, 0) >> EXISTS (
			SELECT 1 FROM ` + TracesTable + ` e WHERE e.TraceId = ` + TracesTable + `.TraceId AND e.IsError = 1 AND e.Seq <= ?)) & 1)
			ELSE RunErrored END)`
		erroredArgs = append(anys(d.list()), q.AsOf)
	}
	// roots selects the roots in [r[0], r[1]) ns matching the query: as the snapshot saw them,
	// or as they are now.
	roots := func(r [2]int64, pinned bool) filter {
		var f filter
		f.add("IsRoot = 1")
		f.add("Timestamp >= ? AND Timestamp < ?", r[0], r[1])
		f.service("ServiceName", q.Service)
		if q.Domain != "" {
			f.add("Domain = ?", q.Domain)
		}
		if pinned {
			f.asOf(q.AsOf)
			if wantErrored != nil {
				f.add(errored+" = ?", append(slices.Clone(erroredArgs), boolInt(*wantErrored))...)
			}
		} else if wantErrored != nil {
			f.add("RunErrored = ?", boolInt(*wantErrored))
		}
		return f
	}
	total, err := runTotal(ctx, tx, q, wantErrored, d, roots)
	if err != nil {
		return page, err
	}
	page.Total, page.Scan.Scanned = int(total), total
	if page.Total <= q.Offset {
		return page, nil
	}
	whole := [2]int64{q.Window.StartMs * 1e6, q.Window.EndMs * 1e6}
	seqs, err := pageOfRuns(ctx, tx, roots(whole, true), max(q.Offset, 0), cmp.Or(q.Limit, telemetry.DefaultRunsLimit))
	if err != nil || len(seqs) == 0 {
		return page, err
	}
	rows, err := tx.QueryContext(ctx, `SELECT `+spanColumns+fieldColumns(telemetry.FieldAttributes, TracesTable, "SpanAttributes", "EventsJSON")+
		` FROM `+TracesTable+` WHERE Seq IN (`+placeholders(len(seqs))+`)`, int64s(seqs)...)
	if err != nil {
		return page, fmt.Errorf("list runs: %w", err)
	}
	bySeq := make(map[int64]telemetry.SpanRow, len(seqs))
	for rows.Next() {
		r, seq, err := scanSpanRow(rows, telemetry.FieldAttributes)
		if err != nil {
			rows.Close()
			return page, fmt.Errorf("list runs: %w", err)
		}
		bySeq[seq] = r
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return page, fmt.Errorf("list runs: %w", err)
	}
	traces := make([]string, 0, len(seqs))
	for _, seq := range seqs {
		traces = append(traces, bySeq[seq].TraceID)
	}
	counts, err := traceCounts(ctx, tx, traces, q.AsOf)
	if err != nil {
		return page, err
	}
	for _, seq := range seqs {
		root := bySeq[seq]
		c := counts[root.TraceID]
		r := telemetry.RunFromRoot(conv, &root)
		r.SpanCount, r.ErrorCount = c[0], c[1]
		page.Runs = append(page.Runs, r)
	}
	return page, nil
}

// runTotal counts the window's runs matching the query: the run rollup's whole buckets (the
// roots of traces that changed after a pinned snapshot counted again as it saw them), and the
// window's edges from the runs index.
func runTotal(ctx context.Context, tx *sql.Tx, q telemetry.RunsQuery, wantErrored *bool, d dirty,
	roots func(r [2]int64, pinned bool) filter) (int64, error) {
	count := func(f filter) (int64, error) {
		var n int64
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+TracesTable+f.where(), f.args...).Scan(&n); err != nil {
			return 0, fmt.Errorf("count runs: %w", err)
		}
		return n, nil
	}
	sp, err := liveSplit(ctx, tx, q.Window)
	if err != nil {
		return 0, err
	}
	var total int64
	if sp.lo < sp.hi {
		var f filter
		f.add("Bucket >= ? AND Bucket < ?", sp.lo, sp.hi)
		f.service("ServiceName", q.Service)
		if q.Domain != "" {
			f.add("Domain = ?", q.Domain)
		}
		var runs, erroredRuns int64
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(SUM(Runs), 0), COALESCE(SUM(ErroredRuns), 0) FROM `+RunActivityTable+
			f.where(), f.args...).Scan(&runs, &erroredRuns); err != nil {
			return 0, fmt.Errorf("count runs: %w", err)
		}
		switch {
		case wantErrored == nil:
			total = runs
		case *wantErrored:
			total = erroredRuns
		default:
			total = runs - erroredRuns
		}
		if len(d.traces) > 0 {
			whole := [2]int64{sp.lo * bucketNs, sp.hi * bucketNs}
			now, then := roots(whole, false), roots(whole, true)
			now.in("TraceId", d.list())
			then.in("TraceId", d.list())
			n, err := count(now)
			if err != nil {
				return 0, err
			}
			m, err := count(then)
			if err != nil {
				return 0, err
			}
			total += m - n
		}
	}
	for _, e := range sp.edges {
		n, err := count(roots(e, true))
		if err != nil {
			return 0, err
		}
		total += n
	}
	return total, nil
}

// pageOfRuns returns the sequence numbers of runs [offset, offset+limit) passing f in SortRuns'
// order — start ms descending, trace id, run id — ties in the engine's scan order. It walks the
// runs index newest first, which orders by start already, and sorts the rows read, which end
// with the whole millisecond the page ends in.
func pageOfRuns(ctx context.Context, tx *sql.Tx, f filter, offset, limit int) ([]int64, error) {
	type key struct {
		ms, ns, seq     int64
		trace, id, span string
	}
	need := offset + limit
	var got []key
	rows, err := tx.QueryContext(ctx, `SELECT Seq, Timestamp, TraceId, COALESCE(RunId, TraceId), SpanId FROM `+TracesTable+
		` INDEXED BY otel_traces_runs`+f.where()+` ORDER BY Timestamp DESC`, f.args...)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	for rows.Next() {
		var k key
		if err := rows.Scan(&k.seq, &k.ns, &k.trace, &k.id, &k.span); err != nil {
			rows.Close()
			return nil, fmt.Errorf("list runs: %w", err)
		}
		k.ms = telemetry.NsToMs(k.ns)
		if len(got) >= need && k.ms != got[need-1].ms {
			break
		}
		got = append(got, k)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	slices.SortFunc(got, func(a, b key) int {
		return cmp.Or(cmp.Compare(b.ms, a.ms), cmp.Compare(a.trace, b.trace), cmp.Compare(a.id, b.id),
			cmp.Compare(b.ns, a.ns), cmp.Compare(b.span, a.span), cmp.Compare(a.seq, b.seq))
	})
	out := make([]int64, 0, limit)
	for _, k := range got[min(offset, len(got)):min(need, len(got))] {
		out = append(out, k.seq)
	}
	return out, nil
}

// int64s converts numbers to query arguments.
func int64s(v []int64) []any {
	out := make([]any, len(v))
	for i, x := range v {
		out[i] = x
	}
	return out
}

// traceCounts returns, per trace, its span count and error span count (as of asOf).
func traceCounts(ctx context.Context, q queryer, traces []string, asOf int64) (map[string][2]int64, error) {
	out := make(map[string][2]int64, len(traces))
	if len(traces) == 0 {
		return out, nil
	}
	var f filter
	f.in("TraceId", traces)
	f.asOf(asOf)
	err := eachRow(ctx, q, `SELECT TraceId, COUNT(*), SUM(IsError) FROM `+TracesTable+f.where()+` GROUP BY TraceId`, f.args,
		func(scan func(...any) error) error {
			var t string
			var c [2]int64
			if err := scan(&t, &c[0], &c[1]); err != nil {
				return err
			}
			out[t] = c
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("count run spans: %w", err)
	}
	return out, nil
}

// ResolveRun implements telemetry.RunResolver: the newest root whose execution id is id,
// through the index of run ids.
func (b *Backend) ResolveRun(ctx context.Context, id string, ask telemetry.Ask) (string, bool, error) {
	conv := ask.Conv
	var trace string
	handled, err := b.snapshot(ctx, conv, func(tx *sql.Tx) error {
		if len(conv.ExecutionIDKeys) == 0 || id == "" {
			return nil
		}
		err := tx.QueryRowContext(ctx, `SELECT TraceId FROM `+TracesTable+` WHERE IsRoot = 1 AND RunId != '' AND RunId = ?`+
			spansNewest+` LIMIT 1`, id).Scan(&trace)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		return err
	})
	return trace, handled, err
}
