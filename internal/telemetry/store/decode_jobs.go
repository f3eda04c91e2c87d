package store

import (
	"context"
	"fmt"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/conventions"
)

// lastJobDecoded finds the newest span in the window carrying a job id that matches the query, and
// the status of the execution of the same job before it. Rows are pre-filtered in SQL on the
// attribute text (a job-id key, and the wanted id or name) and confirmed on the decoded
// attributes.
func (q *Querier) lastJobDecoded(ctx context.Context, jq telemetry.JobQuery) (telemetry.JobResult, error) {
	var f filter
	f.window(jq.Window)
	f.service(jq.Service)
	f.anyKey("SpanAttributes", q.conv.JobKeys.IDKeys, nil)
	for _, v := range []string{jq.JobID, jq.JobName} {
		if v != "" {
			enc, _ := jsonString(v)
			f.add("instr(SpanAttributes || SpanName, ?) > 0", enc[1:len(enc)-1])
		}
	}
	rows, err := q.store.DB().QueryContext(ctx, `SELECT TraceId, SpanName, Timestamp, Duration, StatusCode, StatusMessage,
		EventsJSON, SpanAttributes FROM `+TracesTable+f.where()+` ORDER BY Timestamp DESC, SpanId LIMIT ?`,
		append(f.args, q.limits.MaxScanRows)...)
	if err != nil {
		return telemetry.JobResult{}, fmt.Errorf("find job: %w", err)
	}
	defer rows.Close()
	var res telemetry.JobResult
	for rows.Next() {
		var trace, name, status, statusMsg, events, attrsText string
		var start, dur int64
		if err := rows.Scan(&trace, &name, &start, &dur, &status, &statusMsg, &events, &attrsText); err != nil {
			return telemetry.JobResult{}, fmt.Errorf("find job: %w", err)
		}
		attrs := decodeAttrs(attrsText)
		job, ok := q.conv.Job(attrs)
		if !ok {
			continue
		}
		jobName := job.Name
		if jobName == "" {
			jobName = name
		}
		if (jq.JobID != "" && job.ID != jq.JobID) || (jq.JobName != "" && jobName != jq.JobName) {
			continue
		}
		jobStatus := jobStatus(job, status)
		if res.Found {
			// The run before is the next older execution of the same job; executions often
			// carry their own job ids, so the job is known by its name.
			if jobName == res.JobName {
				res.Previous, res.PreviousStartMs = jobStatus, telemetry.NsToMs(start)
				break
			}
			continue
		}
		res = telemetry.JobResult{
			Found: true, JobName: jobName, JobID: job.ID, Status: jobStatus, Outcome: job.OutcomeText,
			ExitCode: job.ExitCode, StartMs: telemetry.NsToMs(start), CompletedMs: telemetry.NsToMs(start + dur),
			DurationMs: telemetry.Ms(dur), TraceID: trace,
		}
		if status == "Error" {
			res.ErrorMessage, _ = spanError(statusMsg, events, attrs)
		}
	}
	return res, rows.Err()
}

// jobStatus is the application's status attribute, else the span status.
func jobStatus(j conventions.Job, spanStatus string) string {
	switch {
	case j.Status != "":
		return j.Status
	case spanStatus == "Error":
		return telemetry.StatusError
	default:
		return telemetry.StatusOK
	}
}
