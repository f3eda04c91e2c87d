package clickhouse

import (
	"context"
	"strconv"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/conventions"
)

// jobWhere writes the filter of the window's job spans (a job id under the conventions' keys).
func (b *Backend) jobWhere(s *sqlText, q telemetry.JobQuery, conv *conventions.Conventions) {
	s.w(" FROM ", b.traces, " WHERE ")
	window(s, "Timestamp", q.Window)
	if q.Service != "" {
		service(s, q.Service)
	}
	s.w(" AND ", anyKey(s, "SpanAttributes", conv.JobKeys.IDKeys), " AND ", first(s, "SpanAttributes", conv.JobKeys.IDKeys), " != ''")
}

// startNs is the span start in Unix ns, the order LastJob uses (then span id).
const startNs = "toUnixTimestamp64Nano(Timestamp)"

// IndexJobs implements telemetry.JobIndexer: ClickHouse finds the newest matching job span
// and the status of the same job's execution before it (both in telemetry.JobFactsOf's
// order); the one span found is then read whole, so the engine reads it by its rules.
func (b *Backend) IndexJobs(ctx context.Context, q telemetry.JobQuery, ask telemetry.Ask) (telemetry.JobFacts, bool, error) {
	conv := ask.Conv
	if len(conv.JobKeys.IDKeys) == 0 {
		return telemetry.JobFacts{}, true, nil
	}
	if err := b.ready(ctx); err != nil {
		return telemetry.JobFacts{}, false, err
	}
	s := &sqlText{}
	s.w("SELECT TraceId, SpanId, ", jobNameExpr(s, conv, "SpanAttributes"), " AS name, ", startNs, " AS ns")
	b.jobWhere(s, q, conv)
	if q.JobID != "" {
		s.w(" AND ", first(s, "SpanAttributes", conv.JobKeys.IDKeys), " = ", s.str(q.JobID))
	}
	if q.JobName != "" {
		s.w(" AND ", jobNameExpr(s, conv, "SpanAttributes"), " = ", s.str(q.JobName))
	}
	s.w(" ORDER BY ns DESC, SpanId ASC LIMIT 1")
	var trace, span, name string
	var ns int64
	found := false
	if _, err := b.r.query(ctx, s, 1, func(rows driver.Rows) error {
		found = true
		return rows.Scan(&trace, &span, &name, &ns)
	}); err != nil {
		return telemetry.JobFacts{}, false, err
	}
	if !found {
		if q.JobID == "" && q.JobName == "" {
			return telemetry.JobFacts{}, true, nil
		}
		known, err := b.jobNames(ctx, q, conv, ask.Limits.MaxHints)
		return telemetry.JobFacts{Names: known}, err == nil, err
	}
	batch, err := b.ScanSpans(ctx, telemetry.SpanScan{TraceIDs: []string{trace}, Window: q.Window,
		Fields: telemetry.FieldAttributes | telemetry.FieldEvents, Limit: ask.Limits.MaxRunSpans})
	if err != nil {
		return telemetry.JobFacts{}, false, err
	}
	var f telemetry.JobFacts
	for i := range batch.Spans {
		if batch.Spans[i].SpanID == span {
			f.Newest = &batch.Spans[i]
			break
		}
	}
	if f.Newest == nil {
		return telemetry.JobFacts{}, false, nil // the span left the window meanwhile: let the engine scan
	}
	p := &sqlText{}
	p.w("SELECT ", jobStatusExpr(p, conv, "SpanAttributes"), ", intDiv(", startNs, ", 1000000)")
	b.jobWhere(p, q, conv)
	p.w(" AND ", jobNameExpr(p, conv, "SpanAttributes"), " = ", p.str(name),
		" AND (", startNs, " < ", p.i64(ns), " OR (", startNs, " = ", p.i64(ns), " AND SpanId > ", p.str(span), "))",
		" ORDER BY ", startNs, " DESC, SpanId ASC LIMIT 1")
	_, err = b.r.query(ctx, p, 1, func(rows driver.Rows) error {
		f.HasPrevious = true
		return rows.Scan(&f.PreviousStatus, &f.PreviousStartMs)
	})
	return f, err == nil, err
}

// jobNames are the job names seen in the window (bounded, sorted), for a filter that matched
// nothing.
func (b *Backend) jobNames(ctx context.Context, q telemetry.JobQuery, conv *conventions.Conventions, n int) ([]string, error) {
	s := &sqlText{}
	s.w("SELECT DISTINCT ", jobNameExpr(s, conv, "SpanAttributes"), " AS name")
	b.jobWhere(s, q, conv)
	s.w(" ORDER BY name LIMIT ", strconv.Itoa(n))
	var out []string
	_, err := b.r.query(ctx, s, n, func(rows driver.Rows) error {
		var v string
		if err := rows.Scan(&v); err != nil {
			return err
		}
		out = append(out, v)
		return nil
	})
	return out, err
}
