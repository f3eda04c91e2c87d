package realapp

import (
	"context"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// exitCodeFailed is what the failing run exits with.
const exitCodeFailed = 3

// ExportError is the failure of the job's last run.
type ExportError struct{ Rows int64 }

func (e *ExportError) Error() string {
	return fmt.Sprintf("export failed: disk quota exceeded after %d rows", e.Rows)
}

// runJobs runs the nightly-export job n times in the worker service, one after the other.
// Each run is a root span with the job attributes the otel conventions preset reads (job.id,
// job.name, job.status, job.exit_code — the exit code as a string, as a shell wrapper would
// send it); the last run fails.
func runJobs(ctx context.Context, p *process, pool *pgxpool.Pool, l *ledger, n int) error {
	for i := 1; i <= n; i++ {
		id := fmt.Sprintf("export-%04d", i)
		jctx, span := p.tracer.Start(ctx, JobName, trace.WithNewRoot(),
			trace.WithAttributes(attribute.String("job.id", id), attribute.String("job.name", JobName)))
		var rows int64
		err := pool.QueryRow(jctx, sqlCountByStatus, "placed").Scan(&rows)
		if err != nil {
			span.End()
			return fmt.Errorf("job %s: %w", id, err)
		}
		run := JobRun{ID: id, Name: JobName, Status: "succeeded", TraceID: span.SpanContext().TraceID().String()}
		if i == n {
			jerr := fail(jctx, &ExportError{Rows: rows})
			run.Status, run.ExitCode, run.Error = "failed", exitCodeFailed, jerr.Error()
			p.log.ErrorContext(jctx, "nightly export failed", "error", jerr.Error(), "job", id)
			l.fail(KindJobFailed, ServiceWorker, run.TraceID, jerr.Error())
		} else {
			p.log.InfoContext(jctx, "nightly export finished", "rows", rows, "job", id)
		}
		span.SetAttributes(attribute.String("job.status", run.Status), attribute.String("job.exit_code", strconv.Itoa(run.ExitCode)))
		span.End()
		if ro, ok := span.(sdktrace.ReadOnlySpan); ok {
			run.Start, run.End = ro.StartTime(), ro.EndTime()
		}
		l.addJob(run)
	}
	return nil
}
