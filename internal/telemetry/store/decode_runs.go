package store

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/conventions"
)

// A run's head is its trace's root span: the run id is the first execution-id attribute the
// root carries, else the trace id; name, status, outcome and domain come from the root too.

const rootColumns = `TraceId, SpanId, SpanName, ServiceName, Timestamp, Duration, StatusCode, SpanAttributes`

// rootRow is a root span as the run classification needs it.
type rootRow struct {
	traceID, spanID, name, service string
	startNs, durNs                 int64
	status                         string
	attrs                          conventions.Attributes
}

func scanRoot(rows *sql.Rows) (rootRow, error) {
	var r rootRow
	var attrs string
	err := rows.Scan(&r.traceID, &r.spanID, &r.name, &r.service, &r.startNs, &r.durNs, &r.status, &attrs)
	r.attrs = decodeAttrs(attrs)
	return r, err
}

// summarize classifies a run from its root span; errored says whether any span of the trace
// has status Error.
func (q *Querier) summarize(r rootRow, errored bool) telemetry.RunSummary {
	s := telemetry.RunSummary{
		ID: r.traceID, Domain: q.conv.Domain(r.attrs), Name: r.name, Status: telemetry.StatusOK,
		StartMs: telemetry.NsToMs(r.startNs), DurationMs: telemetry.Ms(r.durNs), HasDuration: true,
		Service: serviceOut(r.service), TraceID: r.traceID,
	}
	if id := q.conv.ExecutionID(r.attrs); id != "" {
		s.ID = id
	}
	if errored || r.status == "Error" {
		s.Status = telemetry.StatusError
	}
	if j, ok := q.conv.Job(r.attrs); ok {
		if j.Name != "" {
			s.Name = j.Name
		}
		if j.Status != "" {
			s.Status = j.Status
		}
		s.Outcome = j.OutcomeText
	}
	return s
}

// errorTraces returns the traces with an error span started at or after start (children may
// start after the window that holds their root, never before their root).
func (q *Querier) errorTraces(ctx context.Context, startMs, asOf int64) (map[string]bool, error) {
	var f filter
	f.add("IsError = 1")
	f.add("Timestamp >= ?", startMs*1e6)
	f.asOf(asOf)
	rows, err := q.store.DB().QueryContext(ctx, `SELECT DISTINCT TraceId FROM `+TracesTable+f.where(), f.args...)
	if err != nil {
		return nil, fmt.Errorf("read error traces: %w", err)
	}
	defer rows.Close()
	set := map[string]bool{}
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			return nil, fmt.Errorf("read error traces: %w", err)
		}
		set[t] = true
	}
	return set, rows.Err()
}

// runsDecoded lists runs whose root span started in the window, newest first (then by trace
// id), classifying each root from its attributes.
func (q *Querier) runsDecoded(ctx context.Context, rq telemetry.RunsQuery) (telemetry.RunPage, error) {
	limit := cmp.Or(rq.Limit, 20)
	var f filter
	f.add("IsRoot = 1")
	f.window(rq.Window)
	f.service(rq.Service)
	f.asOf(rq.AsOf)
	db := q.store.DB()
	page := telemetry.RunPage{}

	if rq.Domain == "" && rq.Status == "" {
		// Nothing to classify before paging: count and page in SQL.
		if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+TracesTable+f.where(), f.args...).Scan(&page.Total); err != nil {
			return page, fmt.Errorf("count runs: %w", err)
		}
		rows, err := db.QueryContext(ctx, `SELECT `+rootColumns+` FROM `+TracesTable+f.where()+
			` ORDER BY Timestamp DESC, TraceId LIMIT ? OFFSET ?`, append(f.args, limit, max(rq.Offset, 0))...)
		if err != nil {
			return page, fmt.Errorf("list runs: %w", err)
		}
		var roots []rootRow
		for rows.Next() {
			r, err := scanRoot(rows)
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
		counts, err := q.traceCounts(ctx, rootTraces(roots), rq.AsOf)
		if err != nil {
			return page, err
		}
		for _, r := range roots {
			c := counts[r.traceID]
			s := q.summarize(r, c[1] > 0)
			s.SpanCount, s.ErrorCount = c[0], c[1]
			page.Runs = append(page.Runs, s)
		}
		page.Scan = scanOf(rq.Window, len(roots), false)
		return page, nil
	}

	errored, err := q.errorTraces(ctx, rq.Window.StartMs, rq.AsOf)
	if err != nil {
		return page, err
	}
	rows, err := db.QueryContext(ctx, `SELECT `+rootColumns+` FROM `+TracesTable+f.where()+
		` ORDER BY Timestamp DESC, TraceId LIMIT ?`, append(f.args, q.limits.MaxScanRows+1)...)
	if err != nil {
		return page, fmt.Errorf("list runs: %w", err)
	}
	var matched []rootRow
	var summaries []telemetry.RunSummary
	scanned := 0
	for rows.Next() {
		r, err := scanRoot(rows)
		if err != nil {
			rows.Close()
			return page, fmt.Errorf("list runs: %w", err)
		}
		scanned++
		if scanned > q.limits.MaxScanRows {
			break
		}
		s := q.summarize(r, errored[r.traceID])
		if (rq.Domain != "" && s.Domain != rq.Domain) || (rq.Status != "" && s.Status != rq.Status) {
			continue
		}
		matched = append(matched, r)
		summaries = append(summaries, s)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return page, fmt.Errorf("list runs: %w", err)
	}
	limited := scanned > q.limits.MaxScanRows
	page.Total = len(summaries)
	page.Scan = scanOf(rq.Window, min(scanned, q.limits.MaxScanRows), limited)
	lo := min(max(rq.Offset, 0), len(summaries))
	hi := min(lo+limit, len(summaries))
	counts, err := q.traceCounts(ctx, rootTraces(matched[lo:hi]), rq.AsOf)
	if err != nil {
		return page, err
	}
	for i := lo; i < hi; i++ {
		s := summaries[i]
		c := counts[s.TraceID]
		s.SpanCount, s.ErrorCount = c[0], c[1]
		page.Runs = append(page.Runs, s)
	}
	return page, nil
}

// rootTraces lists the traces of roots.
func rootTraces(roots []rootRow) []string {
	out := make([]string, len(roots))
	for i, r := range roots {
		out[i] = r.traceID
	}
	return out
}

// traceCounts returns, per trace, its span count and error span count.
func (q *Querier) traceCounts(ctx context.Context, traces []string, asOf int64) (map[string][2]int64, error) {
	out := make(map[string][2]int64, len(traces))
	if len(traces) == 0 {
		return out, nil
	}
	var f filter
	args := make([]any, len(traces))
	for i, t := range traces {
		args[i] = t
	}
	f.add("TraceId IN ("+placeholders(len(args))+")", args...)
	f.asOf(asOf)
	rows, err := q.store.DB().QueryContext(ctx,
		`SELECT TraceId, COUNT(*), SUM(IsError) FROM `+TracesTable+f.where()+` GROUP BY TraceId`, f.args...)
	if err != nil {
		return nil, fmt.Errorf("count run spans: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var t string
		var c [2]int64
		if err := rows.Scan(&t, &c[0], &c[1]); err != nil {
			return nil, fmt.Errorf("count run spans: %w", err)
		}
		out[t] = c
	}
	return out, rows.Err()
}
