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
		s.Outcome = j.Outcome
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

// Runs lists runs whose root span started in the window, newest first (then by trace id).
func (q *Querier) Runs(ctx context.Context, rq telemetry.RunsQuery) (telemetry.RunPage, error) {
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
		counts, err := q.traceCounts(ctx, roots, rq.AsOf)
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
	counts, err := q.traceCounts(ctx, matched[lo:hi], rq.AsOf)
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

// traceCounts returns, per trace of roots, its span count and error span count.
func (q *Querier) traceCounts(ctx context.Context, roots []rootRow, asOf int64) (map[string][2]int64, error) {
	out := make(map[string][2]int64, len(roots))
	if len(roots) == 0 {
		return out, nil
	}
	var f filter
	args := make([]any, len(roots))
	for i, r := range roots {
		args[i] = r.traceID
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

// Run returns one run by trace id or run id.
func (q *Querier) Run(ctx context.Context, rq telemetry.RunQuery) (telemetry.Run, error) {
	traces, err := q.runTraces(ctx, rq.ID)
	if err != nil {
		return telemetry.Run{}, err
	}
	if len(traces) == 0 {
		return telemetry.Run{}, fmt.Errorf("run %q: %w", rq.ID, telemetry.ErrRunNotFound)
	}
	maxSpans := q.limits.MaxRunSpans
	if rq.MaxSpans > 0 {
		maxSpans = min(maxSpans, rq.MaxSpans)
	}
	maxLogs := q.limits.MaxRunLogs
	if rq.MaxLogs > 0 {
		maxLogs = min(maxLogs, rq.MaxLogs)
	}
	tArgs := make([]any, len(traces))
	for i, t := range traces {
		tArgs[i] = t
	}
	in := "TraceId IN (" + placeholders(len(traces)) + ")"
	rows, err := q.store.DB().QueryContext(ctx, `SELECT TraceId, SpanId, ParentSpanId, SpanName, ServiceName, Timestamp, Duration,
		StatusCode, StatusMessage, EventsJSON, SpanAttributes FROM `+TracesTable+` WHERE `+in+
		` ORDER BY Timestamp, SpanId LIMIT ?`, append(tArgs, maxSpans+1)...)
	if err != nil {
		return telemetry.Run{}, fmt.Errorf("read run spans: %w", err)
	}
	var run telemetry.Run
	var head *rootRow
	var firstErrNs int64
	for rows.Next() {
		var sp telemetry.Span
		var status, statusMsg, events, attrsText string
		if err := rows.Scan(&sp.TraceID, &sp.SpanID, &sp.ParentSpanID, &sp.Name, &sp.Service, &sp.StartNs,
			&sp.DurationNs, &status, &statusMsg, &events, &attrsText); err != nil {
			rows.Close()
			return telemetry.Run{}, fmt.Errorf("read run spans: %w", err)
		}
		if len(run.Spans) == maxSpans {
			run.Limited = true
			break
		}
		attrs := decodeAttrs(attrsText)
		if sp.ParentSpanID == "" && head == nil {
			head = &rootRow{traceID: sp.TraceID, spanID: sp.SpanID, name: sp.Name, service: sp.Service,
				startNs: sp.StartNs, durNs: sp.DurationNs, status: status, attrs: attrs}
		}
		sp.Service = serviceOut(sp.Service)
		sp.Status = telemetry.StatusOK
		if status == "Error" {
			sp.Status = telemetry.StatusError
			sp.ErrorMessage, sp.ExceptionType = spanError(statusMsg, events, attrs)
			run.ErrorCount++
			if run.ErrorMessage == "" || sp.StartNs < firstErrNs {
				run.ErrorMessage, firstErrNs = sp.ErrorMessage, sp.StartNs
			}
		}
		if rq.WithAttributes {
			sp.Attributes = attrs
		}
		run.Spans = append(run.Spans, sp)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return telemetry.Run{}, fmt.Errorf("read run spans: %w", err)
	}
	if head == nil { // the root is missing (not yet received, or pruned): the earliest span heads
		s := run.Spans[0]
		head = &rootRow{traceID: s.TraceID, spanID: s.SpanID, name: s.Name, service: s.Service, startNs: s.StartNs, durNs: s.DurationNs}
	}
	errCount := run.ErrorCount
	run.RunSummary = q.summarize(*head, errCount > 0)
	run.ErrorCount = errCount
	run.SpanCount = int64(len(run.Spans))
	run.Logs, err = q.runLogs(ctx, tArgs, in, maxLogs, &run.Limited)
	if err != nil {
		return telemetry.Run{}, err
	}
	return run, nil
}

// runTraces resolves an id to the traces of its run: the trace itself when id is a stored
// trace id, else every trace whose root span carries id as its execution id.
func (q *Querier) runTraces(ctx context.Context, id string) ([]string, error) {
	db := q.store.DB()
	var one string
	err := db.QueryRowContext(ctx, `SELECT TraceId FROM `+TracesTable+` WHERE TraceId = ? LIMIT 1`, id).Scan(&one)
	switch {
	case err == nil:
		return []string{one}, nil
	case !errors.Is(err, sql.ErrNoRows):
		return nil, fmt.Errorf("find run: %w", err)
	}
	if len(q.conv.ExecutionIDKeys) == 0 || id == "" {
		return nil, nil
	}
	value, _ := jsonString(id)
	rows, err := db.QueryContext(ctx, `SELECT `+rootColumns+` FROM `+TracesTable+
		` WHERE IsRoot = 1 AND instr(SpanAttributes, ?) > 0 ORDER BY Timestamp LIMIT 1000`, ":"+value)
	if err != nil {
		return nil, fmt.Errorf("find run: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		r, err := scanRoot(rows)
		if err != nil {
			return nil, fmt.Errorf("find run: %w", err)
		}
		if q.conv.ExecutionID(r.attrs) == id && !slices.Contains(out, r.traceID) {
			out = append(out, r.traceID)
		}
	}
	return out, rows.Err()
}

// runLogs reads the log records of the traces, oldest first.
func (q *Querier) runLogs(ctx context.Context, traces []any, in string, maxLogs int, limited *bool) ([]telemetry.LogRecord, error) {
	rows, err := q.store.DB().QueryContext(ctx, `SELECT Timestamp, SeverityText, Body, TraceId, SpanId, IsError FROM `+
		LogsTable+` WHERE `+in+` ORDER BY Timestamp, Seq LIMIT ?`, append(traces, maxLogs+1)...)
	if err != nil {
		return nil, fmt.Errorf("read run logs: %w", err)
	}
	defer rows.Close()
	var out []telemetry.LogRecord
	for rows.Next() {
		var l telemetry.LogRecord
		var ns int64
		if err := rows.Scan(&ns, &l.Severity, &l.Message, &l.TraceID, &l.SpanID, &l.IsError); err != nil {
			return nil, fmt.Errorf("read run logs: %w", err)
		}
		if len(out) == maxLogs {
			*limited = true
			break
		}
		l.TimeMs = telemetry.NsToMs(ns)
		out = append(out, l)
	}
	return out, rows.Err()
}
