package store

import (
	"cmp"
	"context"
	"fmt"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/conventions"
)

// Runs lists runs whose root span started in the window, newest first (then by trace id). From
// the derived columns, every filter is a condition on the runs index, so the total is one
// COUNT over index entries and the page one ordered walk, whatever the filters.
func (q *Querier) Runs(ctx context.Context, rq telemetry.RunsQuery) (telemetry.RunPage, error) {
	derived, err := q.derived(ctx)
	if err != nil {
		return telemetry.RunPage{}, err
	}
	if !derived {
		return q.runsDecoded(ctx, rq)
	}
	return q.runsDerived(ctx, rq)
}

// runStatusSQL is a run's status from its root's derived columns: the application's job
// status, else error when any span of the trace failed, else ok.
const runStatusSQL = `(CASE WHEN JobStatus != '' THEN JobStatus WHEN TraceErrored = 1 THEN 'error' ELSE 'ok' END)`

func (q *Querier) runsDerived(ctx context.Context, rq telemetry.RunsQuery) (telemetry.RunPage, error) {
	limit := cmp.Or(rq.Limit, 20)
	var f filter
	f.add("IsRoot = 1")
	f.window(rq.Window)
	f.service(rq.Service)
	f.asOf(rq.AsOf)
	if rq.Domain != "" {
		f.add("Domain = ?", rq.Domain)
	}
	if rq.Status != "" {
		f.add(runStatusSQL+" = ?", rq.Status)
	}
	db := q.store.DB()
	page := telemetry.RunPage{}
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+TracesTable+f.where(), f.args...).Scan(&page.Total); err != nil {
		return page, fmt.Errorf("count runs: %w", err)
	}
	page.Scan = scanOf(rq.Window, page.Total, false)
	if page.Total <= rq.Offset {
		return page, nil
	}
	var seqs []any
	err := q.eachRow(ctx, `SELECT Seq FROM `+TracesTable+f.where()+` ORDER BY Timestamp DESC, TraceId LIMIT ? OFFSET ?`,
		append(f.args, limit, max(rq.Offset, 0)), func(scan func(...any) error) error {
			var seq int64
			err := scan(&seq)
			seqs = append(seqs, seq)
			return err
		})
	if err != nil {
		return page, fmt.Errorf("list runs: %w", err)
	}
	heads := map[int64]telemetry.RunSummary{}
	var traces []string
	err = q.eachRow(ctx, `SELECT Seq, TraceId, SpanName, ServiceName, Timestamp, Duration, COALESCE(RunId, ''),
		COALESCE(Domain, ''), TraceErrored, COALESCE(JobId, ''), COALESCE(JobName, ''), COALESCE(JobStatus, ''),
		CASE WHEN JobId != '' THEN SpanAttributes ELSE '' END
		FROM `+TracesTable+` WHERE Seq IN (`+placeholders(len(seqs))+`)`, seqs, func(scan func(...any) error) error {
		var seq, startNs, durNs, errored int64
		var trace, name, service, runID, domain, jobID, jobName, jobStatus, attrs string
		if err := scan(&seq, &trace, &name, &service, &startNs, &durNs, &runID, &domain, &errored, &jobID, &jobName,
			&jobStatus, &attrs); err != nil {
			return err
		}
		s := telemetry.RunSummary{
			ID: cmp.Or(runID, trace), Domain: domain, Name: name, Status: telemetry.StatusOK,
			StartMs: telemetry.NsToMs(startNs), DurationMs: telemetry.Ms(durNs), HasDuration: true,
			Service: serviceOut(service), TraceID: trace,
		}
		if errored == 1 {
			s.Status = telemetry.StatusError
		}
		if jobID != "" {
			s.Name = jobName
			s.Status = cmp.Or(jobStatus, s.Status)
			s.Outcome = jobFields(q.conv, attrs).OutcomeText
		}
		heads[seq] = s
		traces = append(traces, trace)
		return nil
	})
	if err != nil {
		return page, fmt.Errorf("list runs: %w", err)
	}
	counts, err := q.traceCounts(ctx, traces, rq.AsOf)
	if err != nil {
		return page, err
	}
	for _, seq := range seqs {
		s := heads[seq.(int64)]
		c := counts[s.TraceID]
		s.SpanCount, s.ErrorCount = c[0], c[1]
		page.Runs = append(page.Runs, s)
	}
	return page, nil
}

// jobFields reads the job fields the derived columns leave out (outcome, exit code) from a job
// span's attribute JSON.
func jobFields(conv *conventions.Conventions, attrs string) conventions.Job {
	j, _ := conv.Job(decodeAttrs(attrs))
	return j
}
