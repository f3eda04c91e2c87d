package store

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/conventions"
)

// AggregateErrors implements telemetry.ErrorAggregator: the window's occurrences — the origin
// spans' stored occurrences, those of deferred traces computed from scans, and the lone error
// records with the run of their trace's root — grouped by GroupOccurrences. A pinned query
// (AsOf) computes the traces that changed after its snapshot from what it saw.
func (b *Backend) AggregateErrors(ctx context.Context, q telemetry.ErrorsQuery, conv *conventions.Conventions) (telemetry.ErrorReport, bool, error) {
	var rep telemetry.ErrorReport
	handled, err := b.snapshot(ctx, conv, func(tx *sql.Tx) error {
		list, limited, err := occurrences(ctx, tx, q, conv)
		if err != nil {
			return err
		}
		rep = telemetry.GroupOccurrences(list, q.Service, q.Domain)
		rep.Scan = windowScan(q.Window, int64(len(list)))
		rep.Scan.Limited = limited
		return nil
	})
	return rep, handled, err
}

// occurrences lists the window's occurrences in an order GroupOccurrences turns into the
// engine's answer: occurrences that tie on time, trace and origin (duplicates) in scan order.
func occurrences(ctx context.Context, tx *sql.Tx, q telemetry.ErrorsQuery, conv *conventions.Conventions) ([]telemetry.Occurrence, bool, error) {
	d, err := dirtyTraces(ctx, tx, q.AsOf)
	if err != nil {
		return nil, false, err
	}
	// Stored occurrences of the traces the snapshot saw whole.
	var f filter
	f.add("IsOrigin = 1")
	f.window(q.Window)
	f.service("ServiceName", q.Service)
	if q.Domain != "" {
		f.add("OccDomain = ?", q.Domain)
	}
	if len(d.traces) > 0 {
		f.add("TraceId NOT IN ("+placeholders(len(d.traces))+")", anys(d.list())...)
	}
	list, err := storedOccurrences(ctx, tx, f)
	if err != nil {
		return nil, false, err
	}
	// Traces whose occurrences are computed here: the deferred ones, and the dirty ones with an
	// error span the snapshot saw in the window.
	deferred, err := deferredInWindow(ctx, tx, q.Window)
	if err != nil {
		return nil, false, err
	}
	compute := slices.DeleteFunc(deferred, d.has)
	if len(d.traces) > 0 {
		err := eachRow(ctx, tx, `SELECT DISTINCT TraceId FROM `+TracesTable+` INDEXED BY otel_traces_error_traces
			WHERE IsError = 1 AND TraceId IN (`+placeholders(len(d.traces))+`) AND Seq <= ? AND Timestamp >= ? AND Timestamp < ?`,
			append(anys(d.list()), q.AsOf, q.Window.StartMs*1e6, q.Window.EndMs*1e6), func(scan func(...any) error) error {
				var t string
				err := scan(&t)
				compute = append(compute, t)
				return err
			})
		if err != nil {
			return nil, false, fmt.Errorf("read changed traces: %w", err)
		}
	}
	computed, limited, err := computedOccurrences(ctx, tx, conv, compute, q.AsOf)
	if err != nil {
		return nil, false, err
	}
	for _, o := range computed {
		if q.Window.ContainsNs(o.TimeNs) {
			list = append(list, o)
		}
	}
	lone, err := loneLogs(ctx, tx, q, conv, d)
	if err != nil {
		return nil, false, err
	}
	return append(list, lone...), limited, nil
}

// occurrenceFields are the columns of a stored occurrence, in storedOccurrences' order;
// occurrenceText is them as one text, separated by ASCII unit separators.
const (
	occurrenceFields = `Timestamp, ServiceName, TraceId, SpanId, Seq, COALESCE(ErrorMessage, ''), COALESCE(ExceptionType, ''),
	COALESCE(Fingerprint, ''), COALESCE(OccRunId, ''), COALESCE(OccDomain, '')`
	occurrenceText = `Timestamp || char(31) || ServiceName || char(31) || TraceId || char(31) || SpanId || char(31) || Seq ||
	char(31) || COALESCE(ErrorMessage, '') || char(31) || COALESCE(ExceptionType, '') || char(31) || COALESCE(Fingerprint, '') ||
	char(31) || COALESCE(OccRunId, '') || char(31) || COALESCE(OccDomain, '')`
)

// storedOccurrences reads the origin spans passing f as occurrences, ordered by trace, start,
// span id and ingest order. SQLite hands them over as one text (a row per origin through
// database/sql costs more than SQLite's own work); a message holding the text's separators is
// read row by row instead.
func storedOccurrences(ctx context.Context, tx *sql.Tx, f filter) ([]telemetry.Occurrence, error) {
	from := ` FROM ` + TracesTable + ` INDEXED BY otel_traces_origins` + f.where()
	var n int
	var text string
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(group_concat(`+occurrenceText+`, char(30)), '')`+from, f.args...).
		Scan(&n, &text); err != nil {
		return nil, fmt.Errorf("read occurrences: %w", err)
	}
	type stored struct {
		o   telemetry.Occurrence
		seq int64
	}
	recs := make([]stored, 0, n)
	ok := true
	for rec := range strings.SplitSeq(text, "\x1e") {
		if n == 0 {
			break
		}
		parts := strings.Split(rec, "\x1f")
		if len(parts) != 10 {
			ok = false
			break
		}
		var r stored
		var err1, err2 error
		r.o.TimeNs, err1 = strconv.ParseInt(parts[0], 10, 64)
		r.seq, err2 = strconv.ParseInt(parts[4], 10, 64)
		if err1 != nil || err2 != nil {
			ok = false
			break
		}
		r.o.Service, r.o.TraceID, r.o.OriginSpanID = telemetry.ServiceOf(parts[1]), parts[2], parts[3]
		r.o.Message, r.o.ExceptionType, r.o.Fingerprint, r.o.RunID, r.o.Domain = parts[5], parts[6], parts[7], parts[8], parts[9]
		recs = append(recs, r)
	}
	if !ok || len(recs) != n {
		recs = recs[:0]
		err := eachRow(ctx, tx, `SELECT `+occurrenceFields+from, f.args, func(scan func(...any) error) error {
			var r stored
			if err := scan(&r.o.TimeNs, &r.o.Service, &r.o.TraceID, &r.o.OriginSpanID, &r.seq, &r.o.Message, &r.o.ExceptionType,
				&r.o.Fingerprint, &r.o.RunID, &r.o.Domain); err != nil {
				return err
			}
			r.o.Service = telemetry.ServiceOf(r.o.Service)
			recs = append(recs, r)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("read occurrences: %w", err)
		}
	}
	slices.SortFunc(recs, func(a, b stored) int {
		return cmp.Or(cmp.Compare(a.o.TraceID, b.o.TraceID), cmp.Compare(a.o.TimeNs, b.o.TimeNs),
			cmp.Compare(a.o.OriginSpanID, b.o.OriginSpanID), cmp.Compare(a.seq, b.seq))
	})
	out := make([]telemetry.Occurrence, len(recs))
	for i := range recs {
		out[i] = recs[i].o
	}
	return out, nil
}

// loneLogs are the window's error records outside any failing trace, newest first (ties in
// ingest order), each with the run of its trace's newest root.
func loneLogs(ctx context.Context, tx *sql.Tx, q telemetry.ErrorsQuery, conv *conventions.Conventions, d dirty) ([]telemetry.Occurrence, error) {
	type lone struct {
		o   telemetry.Occurrence
		seq int64
	}
	var recs []lone
	read := func(query string, args []any) error {
		return eachRow(ctx, tx, query, args, func(scan func(...any) error) error {
			var l lone
			if err := scan(&l.o.TimeNs, &l.o.Service, &l.o.TraceID, &l.seq, &l.o.Message, &l.o.ExceptionType, &l.o.Fingerprint); err != nil {
				return err
			}
			l.o.Service = telemetry.ServiceOf(l.o.Service)
			recs = append(recs, l)
			return nil
		})
	}
	const columns = `SELECT Timestamp, ServiceName, TraceId, Seq, COALESCE(ErrorMessage, ''), COALESCE(ExceptionType, ''),
		COALESCE(Fingerprint, '') FROM ` + LogsTable
	var f filter
	f.add("IsError = 1 AND TraceFailing = 0")
	f.window(q.Window)
	f.service("ServiceName", q.Service)
	f.asOf(q.AsOf)
	if len(d.traces) > 0 {
		f.add("TraceId NOT IN ("+placeholders(len(d.traces))+")", anys(d.list())...)
	}
	if err := read(columns+` INDEXED BY otel_logs_lone`+f.where(), f.args); err != nil {
		return nil, fmt.Errorf("read error records: %w", err)
	}
	if len(d.traces) > 0 {
		// Records of changed traces: lone when the trace had no error span the snapshot saw.
		var g filter
		g.add("IsError = 1")
		g.window(q.Window)
		g.service("ServiceName", q.Service)
		g.asOf(q.AsOf)
		g.in("TraceId", d.list())
		g.add(`NOT EXISTS (SELECT 1 FROM `+TracesTable+` e WHERE e.TraceId = `+LogsTable+`.TraceId AND e.IsError = 1 AND e.Seq <= ?)`, q.AsOf)
		if err := read(columns+g.where(), g.args); err != nil {
			return nil, fmt.Errorf("read error records: %w", err)
		}
	}
	slices.SortFunc(recs, func(a, b lone) int { return cmp.Or(cmp.Compare(b.o.TimeNs, a.o.TimeNs), cmp.Compare(a.seq, b.seq)) })
	runs, err := rootRuns(ctx, tx, conv, recs, q.AsOf, func(l lone) string { return l.o.TraceID })
	if err != nil {
		return nil, err
	}
	out := make([]telemetry.Occurrence, len(recs))
	for i, l := range recs {
		out[i] = l.o
		r := runs[l.o.TraceID]
		out[i].Domain, out[i].RunID = r.Domain, r.RunID
	}
	return out, nil
}

// rootRuns reads, for the trace of each record, the run LogOccurrence gives a record of it: of
// the trace's newest root (as of asOf), or none.
func rootRuns[T any](ctx context.Context, tx *sql.Tx, conv *conventions.Conventions, recs []T, asOf int64, trace func(T) string) (
	map[string]telemetry.Occurrence, error) {
	seen := map[string]bool{}
	var traces []string
	for _, r := range recs {
		if t := trace(r); !seen[t] {
			seen[t] = true
			traces = append(traces, t)
		}
	}
	runs := make(map[string]telemetry.RunOfTrace, len(traces))
	const chunk = 500
	for lo := 0; lo < len(traces); lo += chunk {
		var f filter
		f.add("IsRoot = 1")
		f.in("TraceId", traces[lo:min(lo+chunk, len(traces))])
		f.asOf(asOf)
		err := eachRow(ctx, tx, `SELECT TraceId, COALESCE(RunId, ''), COALESCE(Domain, '') FROM `+TracesTable+f.where()+spansNewest,
			f.args, func(scan func(...any) error) error {
				var t, id, domain string
				if err := scan(&t, &id, &domain); err != nil {
					return err
				}
				if _, ok := runs[t]; !ok {
					runs[t] = telemetry.RunOfTrace{ID: cmp.Or(id, t), Domain: domain, Known: true}
				}
				return nil
			})
		if err != nil {
			return nil, fmt.Errorf("read the runs of error records: %w", err)
		}
	}
	// What LogOccurrence makes of each run (the domain of an unknown one, its id or none).
	out := make(map[string]telemetry.Occurrence, len(traces))
	for _, t := range traces {
		out[t] = telemetry.LogOccurrence(conv, &telemetry.LogRow{TraceID: t}, runs[t])
	}
	return out, nil
}
