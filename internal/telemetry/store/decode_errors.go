package store

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/conventions"
)

// errorEvent is one error span or error log record.
type errorEvent struct {
	service, msg, typ, trace string
	ns                       int64
}

// Errors groups the window's error events by service, domain and fingerprint. Error spans and
// error records are read through their partial indexes; each event's domain and run come from
// its trace's root span (a record without a trace has the default domain and no run).
func (q *Querier) Errors(ctx context.Context, eq telemetry.ErrorsQuery) (telemetry.ErrorReport, error) {
	rep := telemetry.ErrorReport{}
	budget := q.limits.MaxScanRows
	events, limited, err := q.errorSpans(ctx, eq, budget)
	if err != nil {
		return rep, err
	}
	logEvents, logLimited, err := q.errorLogs(ctx, eq, budget-len(events))
	if err != nil {
		return rep, err
	}
	events = append(events, logEvents...)
	limited = limited || logLimited
	rep.Scan = scanOf(eq.Window, len(events), limited)

	runs, err := q.tracesRuns(ctx, events)
	if err != nil {
		return rep, err
	}
	slices.SortStableFunc(events, func(a, b errorEvent) int { return cmp.Compare(b.ns, a.ns) })
	index := map[[3]string]int{}
	for _, e := range events {
		domain, runID := q.conv.DefaultDomain, ""
		if r, ok := runs[e.trace]; ok {
			domain, runID = r.Domain, r.ID
		} else if e.trace != "" {
			runID = e.trace
		}
		if eq.Domain != "" && domain != eq.Domain {
			continue
		}
		rep.Events++
		fp := conventions.Fingerprint(e.typ, e.msg)
		k := [3]string{e.service, domain, fp}
		i, ok := index[k]
		if !ok {
			i = len(rep.Groups)
			index[k] = i
			rep.Groups = append(rep.Groups, telemetry.ErrorGroup{
				Service: e.service, Domain: domain, Fingerprint: fp, SampleMessage: e.msg,
				ExceptionType: e.typ, LastSeenMs: telemetry.NsToMs(e.ns),
			})
		}
		g := &rep.Groups[i]
		g.Count++
		g.FirstSeenMs = telemetry.NsToMs(e.ns)
		if runID != "" && !slices.Contains(g.RunIDs, runID) && len(g.RunIDs) < telemetry.MaxRelated {
			g.RunIDs = append(g.RunIDs, runID)
		}
		if e.trace != "" && !slices.Contains(g.TraceIDs, e.trace) && len(g.TraceIDs) < telemetry.MaxRelated {
			g.TraceIDs = append(g.TraceIDs, e.trace)
		}
	}
	slices.SortStableFunc(rep.Groups, func(a, b telemetry.ErrorGroup) int {
		return cmp.Or(cmp.Compare(b.LastSeenMs, a.LastSeenMs), cmp.Compare(b.Count, a.Count), cmp.Compare(a.Fingerprint, b.Fingerprint))
	})
	return rep, nil
}

func (q *Querier) errorSpans(ctx context.Context, eq telemetry.ErrorsQuery, budget int) ([]errorEvent, bool, error) {
	var f filter
	f.add("IsError = 1")
	f.window(eq.Window)
	f.service(eq.Service)
	f.asOf(eq.AsOf)
	rows, err := q.store.DB().QueryContext(ctx, `SELECT ServiceName, TraceId, Timestamp, StatusMessage, EventsJSON, SpanAttributes FROM `+
		TracesTable+f.where()+` ORDER BY Timestamp DESC LIMIT ?`, append(f.args, budget+1)...)
	if err != nil {
		return nil, false, fmt.Errorf("read error spans: %w", err)
	}
	defer rows.Close()
	var out []errorEvent
	for rows.Next() {
		var e errorEvent
		var statusMsg, events, attrs string
		if err := rows.Scan(&e.service, &e.trace, &e.ns, &statusMsg, &events, &attrs); err != nil {
			return nil, false, fmt.Errorf("read error spans: %w", err)
		}
		if len(out) == budget {
			return out, true, nil
		}
		e.service = serviceOut(e.service)
		e.msg, e.typ = spanError(statusMsg, events, decodeAttrs(attrs))
		out = append(out, e)
	}
	return out, false, rows.Err()
}

func (q *Querier) errorLogs(ctx context.Context, eq telemetry.ErrorsQuery, budget int) ([]errorEvent, bool, error) {
	if budget <= 0 {
		return nil, true, nil
	}
	var f filter
	f.add("IsError = 1")
	f.window(eq.Window)
	f.service(eq.Service)
	f.asOf(eq.AsOf)
	rows, err := q.store.DB().QueryContext(ctx, `SELECT ServiceName, TraceId, Timestamp, Body, LogAttributes FROM `+
		LogsTable+f.where()+` ORDER BY Timestamp DESC LIMIT ?`, append(f.args, budget+1)...)
	if err != nil {
		return nil, false, fmt.Errorf("read error logs: %w", err)
	}
	defer rows.Close()
	var out []errorEvent
	for rows.Next() {
		var e errorEvent
		var attrs string
		if err := rows.Scan(&e.service, &e.trace, &e.ns, &e.msg, &attrs); err != nil {
			return nil, false, fmt.Errorf("read error logs: %w", err)
		}
		if len(out) == budget {
			return out, true, nil
		}
		e.service = serviceOut(e.service)
		a := decodeAttrs(attrs)
		e.typ = cmp.Or(a["exception.type"], a["error.type"])
		if m := a["exception.message"]; e.msg == "" && m != "" {
			e.msg = m
		}
		out = append(out, e)
	}
	return out, false, rows.Err()
}

// tracesRuns classifies the run of every trace mentioned by events, from the traces' root
// spans, in chunks that stay under SQLite's parameter limit.
func (q *Querier) tracesRuns(ctx context.Context, events []errorEvent) (map[string]telemetry.RunSummary, error) {
	var traces []any
	seen := map[string]bool{}
	for _, e := range events {
		if e.trace != "" && !seen[e.trace] {
			seen[e.trace] = true
			traces = append(traces, e.trace)
		}
	}
	out := make(map[string]telemetry.RunSummary, len(traces))
	const chunk = 500
	for lo := 0; lo < len(traces); lo += chunk {
		part := traces[lo:min(lo+chunk, len(traces))]
		rows, err := q.store.DB().QueryContext(ctx, `SELECT `+rootColumns+` FROM `+TracesTable+
			` WHERE IsRoot = 1 AND TraceId IN (`+placeholders(len(part))+`)`, part...)
		if err != nil {
			return nil, fmt.Errorf("classify error runs: %w", err)
		}
		for rows.Next() {
			r, err := scanRoot(rows)
			if err != nil {
				rows.Close()
				return nil, fmt.Errorf("classify error runs: %w", err)
			}
			if _, dup := out[r.traceID]; !dup {
				out[r.traceID] = q.summarize(r, true)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("classify error runs: %w", err)
		}
	}
	return out, nil
}
