package store

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/conventions"
)

// ListRuns implements telemetry.RunLister. Every filter is a condition on the runs index
// (RunErrored is the normalized status), so the total is one COUNT over index entries and the
// page one ordered walk — in SortRuns' order, ties in scan order; the page's runs are read off
// their roots with RunFromRoot. A pinned query (AsOf) computes the status of the runs whose
// trace changed after its snapshot from the error spans it saw.
func (b *Backend) ListRuns(ctx context.Context, q telemetry.RunsQuery, conv *conventions.Conventions) (telemetry.RunPage, bool, error) {
	var page telemetry.RunPage
	handled, err := b.snapshot(ctx, conv, func(tx *sql.Tx) error {
		var err error
		page, err = listRuns(ctx, tx, q, conv)
		return err
	})
	return page, handled, err
}

// runOrder is SortRuns' order (start ms desc, trace id, run id), ties in the order of the
// engine's root scan.
const runOrder = ` ORDER BY Timestamp / 1000000 DESC, TraceId, COALESCE(RunId, TraceId), Timestamp DESC, SpanId DESC, Seq`

func listRuns(ctx context.Context, tx *sql.Tx, q telemetry.RunsQuery, conv *conventions.Conventions) (telemetry.RunPage, error) {
	page := telemetry.RunPage{Scan: windowScan(q.Window, 0)}
	d, err := dirtyTraces(ctx, tx, q.AsOf)
	if err != nil {
		return page, err
	}
	var f filter
	f.add("IsRoot = 1")
	f.window(q.Window)
	f.service("ServiceName", q.Service)
	f.asOf(q.AsOf)
	if q.Domain != "" {
		f.add("Domain = ?", q.Domain)
	}
	switch q.Status {
	case "":
	case telemetry.StatusError, telemetry.StatusOK:
		errored, args := "RunErrored", []any{}
		if len(d.traces) > 0 {
			// As of the snapshot: the verdict over whether the trace had an error span then.
			errored = `(CASE WHEN TraceId IN (` + placeholders(len(d.traces)) + `) THEN ((COALESCE(RunVerdict, 0) >> EXISTS (
				SELECT 1 FROM ` + TracesTable + ` e WHERE e.TraceId = ` + TracesTable + `.TraceId AND e.IsError = 1 AND e.Seq <= ?)) & 1)
				ELSE RunErrored END)`
			args = append(anys(d.list()), q.AsOf)
		}
		f.add(errored+" = ?", append(args, boolInt(q.Status == telemetry.StatusError))...)
	default:
		return page, nil // no run has another status
	}
	var total int64
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+TracesTable+f.where(), f.args...).Scan(&total); err != nil {
		return page, fmt.Errorf("count runs: %w", err)
	}
	page.Total, page.Scan.Scanned = int(total), total
	if page.Total <= q.Offset {
		return page, nil
	}
	rows, err := tx.QueryContext(ctx, `SELECT `+spanColumns+fieldColumns(telemetry.FieldAttributes, "SpanAttributes", "''")+
		` FROM `+TracesTable+f.where()+runOrder+` LIMIT ? OFFSET ?`, append(f.args, cmp.Or(q.Limit, 20), max(q.Offset, 0))...)
	if err != nil {
		return page, fmt.Errorf("list runs: %w", err)
	}
	var roots []telemetry.SpanRow
	for rows.Next() {
		r, _, err := scanSpanRow(rows, telemetry.FieldAttributes)
		if err != nil {
			rows.Close()
			return page, fmt.Errorf("list runs: %w", err)
		}
		roots = append(roots, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return page, fmt.Errorf("list runs: %w", err)
	}
	traces := make([]string, 0, len(roots))
	for _, r := range roots {
		traces = append(traces, r.TraceID)
	}
	counts, err := traceCounts(ctx, tx, traces, q.AsOf)
	if err != nil {
		return page, err
	}
	for i := range roots {
		c := counts[roots[i].TraceID]
		r := telemetry.RunFromRoot(conv, &roots[i], c[1] > 0)
		r.SpanCount, r.ErrorCount = c[0], c[1]
		page.Runs = append(page.Runs, r)
	}
	return page, nil
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
func (b *Backend) ResolveRun(ctx context.Context, id string, conv *conventions.Conventions) (string, bool, error) {
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
