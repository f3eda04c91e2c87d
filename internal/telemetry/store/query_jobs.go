package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/runlens/runlens/internal/telemetry"
)

// LastJob finds the newest job execution in the window that matches the query, and the status
// of the execution of the same job before it. From the derived columns both are one ordered
// index walk over job spans (by name when a name is asked for); the outcome and exit code are
// read from the found spans' attributes.
func (q *Querier) LastJob(ctx context.Context, jq telemetry.JobQuery) (telemetry.JobResult, error) {
	derived, err := q.derived(ctx)
	if err != nil {
		return telemetry.JobResult{}, err
	}
	if !derived {
		return q.lastJobDecoded(ctx, jq)
	}
	var f filter
	f.add("JobId != ''")
	f.window(jq.Window)
	f.service(jq.Service)
	if jq.JobID != "" {
		f.add("JobId = ?", jq.JobID)
	}
	if jq.JobName != "" {
		f.add("JobName = ?", jq.JobName)
	}
	j, ok, err := q.newestJob(ctx, f)
	if err != nil || !ok {
		return telemetry.JobResult{}, err
	}
	job := jobFields(q.conv, j.attrs)
	res := telemetry.JobResult{
		Found: true, JobName: j.name, JobID: j.id, Status: j.status(), Outcome: job.OutcomeText, ExitCode: job.ExitCode,
		StartMs: telemetry.NsToMs(j.startNs), CompletedMs: telemetry.NsToMs(j.startNs + j.durNs),
		DurationMs: telemetry.Ms(j.durNs), ErrorMessage: j.errorMessage, TraceID: j.traceID,
	}
	// The run before is the next older execution of the same job; executions often carry their
	// own job ids, so the job is known by its name.
	f.add("JobName = ?", j.name)
	f.add("(Timestamp < ? OR (Timestamp = ? AND SpanId > ?))", j.startNs, j.startNs, j.spanID)
	if prev, ok, err := q.newestJob(ctx, f); err != nil {
		return telemetry.JobResult{}, err
	} else if ok {
		res.Previous, res.PreviousStartMs = prev.status(), telemetry.NsToMs(prev.startNs)
	}
	return res, nil
}

// jobRow is a job span as LastJob reads it.
type jobRow struct {
	traceID, spanID, id, name, jobStatus, spanStatus, errorMessage, attrs string
	startNs, durNs                                                        int64
}

// status is the application's job status, else the span's.
func (j jobRow) status() string {
	switch {
	case j.jobStatus != "":
		return j.jobStatus
	case j.spanStatus == "Error":
		return telemetry.StatusError
	default:
		return telemetry.StatusOK
	}
}

// newestJob reads the newest job span passing f (by start, then span id).
func (q *Querier) newestJob(ctx context.Context, f filter) (jobRow, bool, error) {
	var j jobRow
	err := q.store.DB().QueryRowContext(ctx, `SELECT TraceId, SpanId, JobId, COALESCE(JobName, ''), COALESCE(JobStatus, ''),
		StatusCode, COALESCE(ErrorMessage, ''), SpanAttributes, Timestamp, Duration FROM `+TracesTable+f.where()+
		` ORDER BY Timestamp DESC, SpanId LIMIT 1`, f.args...).
		Scan(&j.traceID, &j.spanID, &j.id, &j.name, &j.jobStatus, &j.spanStatus, &j.errorMessage, &j.attrs, &j.startNs, &j.durNs)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return jobRow{}, false, nil
	case err != nil:
		return jobRow{}, false, fmt.Errorf("find job: %w", err)
	}
	return j, true, nil
}
