package store

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/conventions"
)

// errorEvent is one error span or error log record.
type errorEvent struct {
	service, msg, typ, fp, trace string
	ns                           int64
}

// errorRootLead is how long before the window tracesRuns looks for the roots of its errors
// in the runs index; older roots are looked up one by one.
const errorRootLead = time.Hour

// runRef is what an error group needs of a run: its id and domain.
type runRef struct{ id, domain string }

// Errors groups the window's error events by service, domain and fingerprint. Error spans and
// error records are read through their partial indexes, newest first; each event's domain and
// run come from its trace's root span (a record without a trace has the default domain and no
// run). From the derived columns an event's message, type and fingerprint are read as stored;
// otherwise they are decoded from its events and attributes and fingerprinted here.
func (q *Querier) Errors(ctx context.Context, eq telemetry.ErrorsQuery) (telemetry.ErrorReport, error) {
	rep := telemetry.ErrorReport{}
	derived, err := q.derived(ctx)
	if err != nil {
		return rep, err
	}
	budget := q.limits.MaxScanRows
	events, limited, err := q.errorSpans(ctx, eq, budget, derived)
	if err != nil {
		return rep, err
	}
	logEvents, logLimited, err := q.errorLogs(ctx, eq, budget-len(events), derived)
	if err != nil {
		return rep, err
	}
	events = append(events, logEvents...)
	limited = limited || logLimited
	rep.Scan = scanOf(eq.Window, len(events), limited)

	runs, err := q.tracesRuns(ctx, events, derived, eq.Window)
	if err != nil {
		return rep, err
	}
	slices.SortStableFunc(events, func(a, b errorEvent) int { return cmp.Compare(b.ns, a.ns) })
	index := map[[3]string]int{}
	for _, e := range events {
		domain, runID := q.conv.DefaultDomain, ""
		if r, ok := runs[e.trace]; ok {
			domain, runID = r.domain, r.id
		} else if e.trace != "" {
			runID = e.trace
		}
		if eq.Domain != "" && domain != eq.Domain {
			continue
		}
		rep.Events++
		fp := e.fp
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

// errorSpans reads up to budget error spans of the window, newest first; limited says there
// were more.
func (q *Querier) errorSpans(ctx context.Context, eq telemetry.ErrorsQuery, budget int, derived bool) ([]errorEvent, bool, error) {
	return q.errorEvents(ctx, eq, budget, derived, TracesTable, "error spans", `StatusMessage, EventsJSON, SpanAttributes`,
		func(status, events, attrs string) (string, string, string) {
			msg, typ := spanError(status, events, decodeAttrs(attrs))
			return msg, typ, conventions.Fingerprint(typ, msg)
		})
}

// errorLogs reads up to budget error records of the window, newest first.
func (q *Querier) errorLogs(ctx context.Context, eq telemetry.ErrorsQuery, budget int, derived bool) ([]errorEvent, bool, error) {
	if budget <= 0 {
		return nil, true, nil
	}
	return q.errorEvents(ctx, eq, budget, derived, LogsTable, "error logs", `Body, LogAttributes, ''`,
		func(body, attrs, _ string) (string, string, string) {
			d := deriveLog(body, decodeAttrs(attrs))
			return d.ErrorMessage, d.ExceptionType, d.Fingerprint
		})
}

// errorEvents reads up to budget error rows of table, newest first, with limited true when
// there were more. With derived columns the message, exception type and fingerprint are read
// as stored; otherwise the three raw columns are read and decode derives them.
func (q *Querier) errorEvents(ctx context.Context, eq telemetry.ErrorsQuery, budget int, derived bool,
	table, what, rawColumns string, decode func(a, b, c string) (msg, typ, fp string)) ([]errorEvent, bool, error) {
	var f filter
	f.add("IsError = 1")
	f.window(eq.Window)
	f.service(eq.Service)
	f.asOf(eq.AsOf)
	columns := rawColumns
	if derived {
		columns = coalesced("ErrorMessage", "ExceptionType", "Fingerprint")
	}
	rows, err := q.store.DB().QueryContext(ctx, `SELECT ServiceName, TraceId, Timestamp, `+columns+` FROM `+
		table+f.where()+` ORDER BY Timestamp DESC LIMIT ?`, append(f.args, budget+1)...)
	if err != nil {
		return nil, false, fmt.Errorf("read %s: %w", what, err)
	}
	defer rows.Close()
	var out []errorEvent
	for rows.Next() {
		var e errorEvent
		var a, b, c string
		if err := rows.Scan(&e.service, &e.trace, &e.ns, &a, &b, &c); err != nil {
			return nil, false, fmt.Errorf("read %s: %w", what, err)
		}
		if len(out) == budget {
			return out, true, nil
		}
		e.service = serviceOut(e.service)
		if derived {
			e.msg, e.typ, e.fp = a, b, c
		} else {
			e.msg, e.typ, e.fp = decode(a, b, c)
		}
		out = append(out, e)
	}
	return out, false, rows.Err()
}

// tracesRuns classifies the run of every trace mentioned by events, from the traces' root
// spans (their derived columns, or their attributes), in chunks that stay under SQLite's
// parameter limit.
func (q *Querier) tracesRuns(ctx context.Context, events []errorEvent, derived bool, w telemetry.Window) (map[string]runRef, error) {
	out := map[string]runRef{}
	if derived {
		// The roots of error spans are marked TraceErrored and started shortly before their
		// errors: read those of the window from the runs index alone, then look up the rest.
		err := q.eachRow(ctx, `SELECT TraceId, COALESCE(RunId, ''), COALESCE(Domain, '') FROM `+TracesTable+`
			WHERE IsRoot = 1 AND Timestamp >= ? AND Timestamp < ? AND TraceErrored = 1`,
			[]any{w.StartMs*1e6 - int64(errorRootLead), w.EndMs * 1e6}, func(scan func(...any) error) error {
				var trace string
				var ref runRef
				if err := scan(&trace, &ref.id, &ref.domain); err != nil {
					return err
				}
				ref.id = cmp.Or(ref.id, trace)
				if _, dup := out[trace]; !dup {
					out[trace] = ref
				}
				return nil
			})
		if err != nil {
			return nil, fmt.Errorf("classify error runs: %w", err)
		}
	}
	var traces []any
	seen := map[string]bool{}
	for _, e := range events {
		if _, known := out[e.trace]; e.trace != "" && !known && !seen[e.trace] {
			seen[e.trace] = true
			traces = append(traces, e.trace)
		}
	}
	const chunk = 500
	for lo := 0; lo < len(traces); lo += chunk {
		part := traces[lo:min(lo+chunk, len(traces))]
		columns := rootColumns
		if derived {
			columns = `TraceId, COALESCE(RunId, ''), COALESCE(Domain, '')`
		}
		rows, err := q.store.DB().QueryContext(ctx, `SELECT `+columns+` FROM `+TracesTable+
			` WHERE IsRoot = 1 AND TraceId IN (`+placeholders(len(part))+`)`, part...)
		if err != nil {
			return nil, fmt.Errorf("classify error runs: %w", err)
		}
		for rows.Next() {
			var trace string
			var ref runRef
			if derived {
				err = rows.Scan(&trace, &ref.id, &ref.domain)
				ref.id = cmp.Or(ref.id, trace)
			} else {
				var r rootRow
				r, err = scanRoot(rows)
				s := q.summarize(r, true)
				trace, ref = r.traceID, runRef{id: s.ID, domain: s.Domain}
			}
			if err != nil {
				rows.Close()
				return nil, fmt.Errorf("classify error runs: %w", err)
			}
			if _, dup := out[trace]; !dup {
				out[trace] = ref
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("classify error runs: %w", err)
		}
	}
	return out, nil
}
