package store

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/runlens/runlens/internal/telemetry"
)

// statusDecoded counts spans, records and error events per service in SQL (GROUP BY over the
// time index), and classifies the window's root spans into domains in Go.
func (q *Querier) statusDecoded(ctx context.Context, sq telemetry.StatusQuery) (telemetry.Status, error) {
	st := telemetry.Status{}
	per := map[string]*telemetry.ServiceActivity{}
	scanned := 0
	for _, src := range []struct {
		table string
		spans bool
	}{{TracesTable, true}, {LogsTable, false}} {
		var f filter
		f.window(sq.Window)
		f.service(sq.Service)
		rows, err := q.store.DB().QueryContext(ctx, `SELECT ServiceName, COUNT(*), SUM(IsError), MAX(Timestamp) FROM `+
			src.table+f.where()+` GROUP BY ServiceName`, f.args...)
		if err != nil {
			return st, fmt.Errorf("count %s: %w", src.table, err)
		}
		for rows.Next() {
			var svc string
			var n, errs, newest int64
			if err := rows.Scan(&svc, &n, &errs, &newest); err != nil {
				rows.Close()
				return st, fmt.Errorf("count %s: %w", src.table, err)
			}
			svc = serviceOut(svc)
			a := per[svc]
			if a == nil {
				a = &telemetry.ServiceActivity{Service: svc}
				per[svc] = a
			}
			a.Errors += errs
			a.LastSeenMs = max(a.LastSeenMs, telemetry.NsToMs(newest))
			st.Errors += errs
			scanned += int(n)
			if src.spans {
				a.Spans += n
				st.Spans += n
				st.NewestSpanMs = max(st.NewestSpanMs, telemetry.NsToMs(newest))
			} else {
				st.Logs += n
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return st, fmt.Errorf("count %s: %w", src.table, err)
		}
	}
	st.Services = int64(len(per))
	for _, a := range per {
		st.ServiceActivity = append(st.ServiceActivity, *a)
	}
	slices.SortFunc(st.ServiceActivity, func(a, b telemetry.ServiceActivity) int {
		return cmp.Or(cmp.Compare(b.Spans, a.Spans), cmp.Compare(a.Service, b.Service))
	})
	if n := cmp.Or(sq.MaxServices, 20); len(st.ServiceActivity) > n {
		st.ServiceActivity = st.ServiceActivity[:n]
	}
	domains, n, limited, err := q.domainActivity(ctx, sq)
	if err != nil {
		return st, err
	}
	st.Domains = domains
	st.Scan = scanOf(sq.Window, scanned+n, limited)
	return st, nil
}

// domainActivity counts the runs of each configured domain whose root started in the window.
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
