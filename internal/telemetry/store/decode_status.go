package store

import (
	"context"
	"fmt"

	"github.com/runlens/runlens/internal/telemetry"
)

// domainActivity counts the runs of each configured domain whose root started in the window,
// classifying each root from its attributes (up to the scan limit).
func (q *Querier) domainActivity(ctx context.Context, sq telemetry.StatusQuery) ([]telemetry.DomainActivity, int, bool, error) {
	names := q.conv.DomainNames()
	acts := make([]telemetry.DomainActivity, len(names))
	pos := make(map[string]int, len(names))
	for i, n := range names {
		acts[i].Domain = n
		pos[n] = i
	}
	errored, err := q.errorTraces(ctx, sq.Window.StartMs, 0)
	if err != nil {
		return nil, 0, false, err
	}
	var f filter
	f.add("IsRoot = 1")
	f.window(sq.Window)
	f.service(sq.Service)
	rows, err := q.store.DB().QueryContext(ctx, `SELECT `+rootColumns+` FROM `+TracesTable+f.where()+
		` ORDER BY Timestamp DESC LIMIT ?`, append(f.args, q.limits.MaxScanRows+1)...)
	if err != nil {
		return nil, 0, false, fmt.Errorf("classify runs: %w", err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		r, err := scanRoot(rows)
		if err != nil {
			return nil, 0, false, fmt.Errorf("classify runs: %w", err)
		}
		if n == q.limits.MaxScanRows {
			return acts, n, true, nil
		}
		n++
		i, ok := pos[q.conv.Domain(r.attrs)]
		if !ok {
			continue
		}
		a := &acts[i]
		a.SeenCount++
		if errored[r.traceID] || r.status == "Error" {
			a.ErrorCount++
		}
		a.MostRecentMs = max(a.MostRecentMs, telemetry.NsToMs(r.startNs))
	}
	return acts, n, false, rows.Err()
}
