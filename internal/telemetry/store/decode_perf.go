package store

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/runlens/runlens/internal/telemetry"
)

// servicePerformanceDecoded reads only (SpanName, Duration, IsError) of the service's spans in the
// window, through the (ServiceName, Timestamp) index, and computes exact nearest-rank
// percentiles over all of them (up to the scan limit).
func (q *Querier) servicePerformanceDecoded(ctx context.Context, pq telemetry.PerformanceQuery) (telemetry.Performance, error) {
	p := telemetry.Performance{Service: pq.Service}
	var f filter
	f.serviceIndexed(cmp.Or(pq.Service, telemetry.UnknownService))
	f.window(pq.Window)
	if pq.Operation != "" {
		f.add("SpanName = ?", pq.Operation)
	}
	rows, err := q.store.DB().QueryContext(ctx, `SELECT SpanName, Duration, IsError FROM `+TracesTable+f.where()+
		` ORDER BY Timestamp DESC LIMIT ?`, append(f.args, q.limits.MaxScanRows+1)...)
	if err != nil {
		return p, fmt.Errorf("read service spans: %w", err)
	}
	defer rows.Close()
	var all []int64
	byOp := map[string][]int64{}
	opErrs := map[string]int64{}
	limited := false
	for rows.Next() {
		var name string
		var dur int64
		var isErr bool
		if err := rows.Scan(&name, &dur, &isErr); err != nil {
			return p, fmt.Errorf("read service spans: %w", err)
		}
		if len(all) == q.limits.MaxScanRows {
			limited = true
			break
		}
		all = append(all, dur)
		byOp[name] = append(byOp[name], dur)
		if isErr {
			p.ErrorCount++
			opErrs[name]++
		}
	}
	if err := rows.Err(); err != nil {
		return p, fmt.Errorf("read service spans: %w", err)
	}
	p.Scan = scanOf(pq.Window, len(all), limited)
	if len(all) == 0 {
		return p, nil
	}
	s := telemetry.Summarize(all)
	p.SampleCount = s.Count
	p.AverageMs = telemetry.Ms(s.SumNs / s.Count)
	p.P50Ms, p.P95Ms, p.P99Ms = telemetry.Ms(s.P50), telemetry.Ms(s.P95), telemetry.Ms(s.P99)
	for name, ds := range byOp {
		os := telemetry.Summarize(ds)
		p.TopOperations = append(p.TopOperations, telemetry.OperationStats{
			Name: name, Count: os.Count, ErrorCount: opErrs[name], P50Ms: telemetry.Ms(os.P50), P95Ms: telemetry.Ms(os.P95),
		})
	}
	slices.SortFunc(p.TopOperations, func(a, b telemetry.OperationStats) int {
		return cmp.Or(cmp.Compare(b.P95Ms, a.P95Ms), cmp.Compare(b.Count, a.Count), cmp.Compare(a.Name, b.Name))
	})
	if n := cmp.Or(pq.TopN, 5); len(p.TopOperations) > n {
		p.TopOperations = p.TopOperations[:n]
	}
	return p, nil
}

// dbOperationsDecoded reads the window's spans whose attribute text mentions a database key prefix,
// confirms and labels them with the conventions, and aggregates per label.
func (q *Querier) dbOperationsDecoded(ctx context.Context, dq telemetry.DBQuery) (telemetry.DBReport, error) {
	rep := telemetry.DBReport{}
	var f filter
	f.window(dq.Window)
	f.service(dq.Service)
	f.anyKey("SpanAttributes", nil, q.conv.DBKeys.KeyPrefixes)
	rows, err := q.store.DB().QueryContext(ctx, `SELECT SpanName, Duration, IsError, SpanAttributes FROM `+TracesTable+f.where()+
		` ORDER BY Timestamp DESC LIMIT ?`, append(f.args, q.limits.MaxScanRows+1)...)
	if err != nil {
		return rep, fmt.Errorf("read database spans: %w", err)
	}
	defer rows.Close()
	type agg struct {
		stats telemetry.DBOperationStats
		ds    []int64
		sum   int64
	}
	groups := map[string]*agg{}
	var total int64
	scanned, limited := 0, false
	for rows.Next() {
		var name, attrs string
		var dur int64
		var isErr bool
		if err := rows.Scan(&name, &dur, &isErr, &attrs); err != nil {
			return rep, fmt.Errorf("read database spans: %w", err)
		}
		if scanned == q.limits.MaxScanRows {
			limited = true
			break
		}
		scanned++
		op, ok := q.conv.DBOperation(name, decodeAttrs(attrs))
		if !ok || (dq.System != "" && op.System != dq.System) {
			continue
		}
		rep.SampleCount++
		total += dur
		g := groups[op.Label]
		if g == nil {
			g = &agg{stats: telemetry.DBOperationStats{Label: op.Label, System: op.System, Collection: op.Collection}}
			groups[op.Label] = g
		}
		g.stats.Count++
		g.sum += dur
		g.ds = append(g.ds, dur)
		if isErr {
			g.stats.ErrorCount++
		}
	}
	if err := rows.Err(); err != nil {
		return rep, fmt.Errorf("read database spans: %w", err)
	}
	rep.Scan = scanOf(dq.Window, scanned, limited)
	for _, g := range groups {
		g.stats.TotalMs = telemetry.Ms(g.sum)
		g.stats.P95Ms = telemetry.Ms(telemetry.Summarize(g.ds).P95)
		g.stats.ShareOfTotal = telemetry.Share(g.sum, total)
		rep.Operations = append(rep.Operations, g.stats)
	}
	slices.SortFunc(rep.Operations, func(a, b telemetry.DBOperationStats) int {
		return cmp.Or(cmp.Compare(b.TotalMs, a.TotalMs), cmp.Compare(b.P95Ms, a.P95Ms), cmp.Compare(a.Label, b.Label))
	})
	if n := cmp.Or(dq.TopN, 5); len(rep.Operations) > n {
		rep.Operations = rep.Operations[:n]
	}
	return rep, nil
}
