package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"github.com/runlens/runlens/internal/telemetry"
)

// Run returns one run by trace id or run id: its spans in start order and its correlated logs.
// A run is a handful of traces, so its spans' attributes are decoded whichever conventions the
// derived columns hold; only finding the traces of a run id uses them (the RunId index instead
// of searching every root's attributes).
func (q *Querier) Run(ctx context.Context, rq telemetry.RunQuery) (telemetry.Run, error) {
	derived, err := q.derived(ctx)
	if err != nil {
		return telemetry.Run{}, err
	}
	traces, err := q.runTraces(ctx, rq.ID, derived)
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
func (q *Querier) runTraces(ctx context.Context, id string, derived bool) ([]string, error) {
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
	if derived {
		return q.runIDTraces(ctx, id)
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

// runIDTraces lists the traces whose root carries run id id, oldest first.
func (q *Querier) runIDTraces(ctx context.Context, id string) ([]string, error) {
	var out []string
	err := q.eachRow(ctx, `SELECT TraceId FROM `+TracesTable+` WHERE IsRoot = 1 AND RunId != '' AND RunId = ?
		ORDER BY Timestamp LIMIT 1000`, []any{id}, func(scan func(...any) error) error {
		var t string
		if err := scan(&t); err != nil {
			return err
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("find run: %w", err)
	}
	return out, nil
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
