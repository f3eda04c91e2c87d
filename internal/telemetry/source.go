// Package telemetry is the port between the telemetry tools and whatever holds the data: the
// embedded store, ClickHouse, the Aspire dashboard or Jaeger. The flows ask a Source for
// bounded, windowed, filtered answers with the aggregates already computed; each adapter does as
// much as its backend can server-side and sets Scan.Limited when it had to stop early, so the
// tools can say honestly what their statistics cover.
//
// The package holds the vocabulary (rows, queries, results, the Backend port and its
// capabilities) and the pure rules of docs/semantics.md; the Engine that composes answers from
// them lives in package engine. Backends import this package only.
package telemetry

import (
	"context"
	"errors"
)

// Source answers the questions of the seven telemetry tools.
//
// Every query is bounded by its window ([StartMs, EndMs)) and by the adapter's scan limits.
// AsOf, when non-zero, pins the data snapshot (see Fingerprint): rows that arrived later are
// ignored, so the pages of one paginated query never shift.
type Source interface {
	// Status summarises activity in the window: counts, per-domain and per-service activity.
	Status(ctx context.Context, q StatusQuery) (Status, error)
	// Runs lists runs whose head span started in the window, newest first, Offset/Limit
	// applied after filtering; Total counts every match.
	Runs(ctx context.Context, q RunsQuery) (RunPage, error)
	// Run returns one run by run id or trace id with its spans and correlated logs, or an error
	// wrapping ErrRunNotFound.
	Run(ctx context.Context, q RunQuery) (Run, error)
	// Errors groups the error events of the window by service, domain and fingerprint, most
	// recent group first.
	Errors(ctx context.Context, q ErrorsQuery) (ErrorReport, error)
	// LastJob returns the newest completed job execution matching the query; Found is false
	// when none does.
	LastJob(ctx context.Context, q JobQuery) (JobResult, error)
	// ServicePerformance computes latency and error statistics of one service's spans.
	ServicePerformance(ctx context.Context, q PerformanceQuery) (Performance, error)
	// DBOperations groups the window's database spans by operation label.
	DBOperations(ctx context.Context, q DBQuery) (DBReport, error)
	// Services lists the known service names (bounded, sorted), for hints.
	Services(ctx context.Context, limit int) ([]string, error)
	// Fingerprint identifies the current data snapshot: cursors carry it and are refused when
	// it no longer matches. AsOf is the value to pass back in queries to pin the snapshot.
	Fingerprint(ctx context.Context) (Snapshot, error)
	// Describe says what the source is and whether it answers.
	Describe(ctx context.Context) SourceInfo
	// SampleSpans returns the spans named, as recorded (attributes and events), each carrying
	// the stack its cause was recorded with when that stack is elsewhere in its trace
	// (CauseStack); a span that is not stored is left out.
	SampleSpans(ctx context.Context, refs []SpanRef) ([]SpanRow, error)
	// Invocation reports what the processes of one execute_command run sent.
	Invocation(ctx context.Context, q InvocationQuery) (InvocationReport, error)
	// Instrumentation samples what the app's instrumentation sends, for the doctor.
	Instrumentation(ctx context.Context, q InstrumentationQuery) (Instrumentation, error)
}

// Errors a flow maps to stable tool error codes.
var (
	// ErrRunNotFound: no span carries the run id or trace id asked for.
	ErrRunNotFound = errors.New("run not found")
	// ErrUnreachable: the backend did not answer; the tools report it rather than empty data.
	ErrUnreachable = errors.New("telemetry source unreachable")
)

// Snapshot identifies a state of the data.
type Snapshot struct {
	// ID is opaque and changes whenever data that a query could see changes (new rows, another
	// store file).
	ID string
	// AsOf pins queries to this snapshot; 0 when the source cannot pin.
	AsOf int64
}

// SourceInfo describes a source for get_app_status and doctor.
type SourceInfo struct {
	// Kind is embedded, clickhouse, aspire or jaeger.
	Kind string
	// Endpoint is where the source lives (a file path is not disclosed; remote URLs without
	// credentials are).
	Endpoint string
	// Reachable is false when the backend could not be queried.
	Reachable bool
	// NewestDataMs is the start of the newest span or log record, 0 when there is none.
	NewestDataMs int64
	// Problem says why the source does not answer, when the adapter knows (a *SourceError
	// carries its fix); nil otherwise.
	Problem error
	// Note says what the source cannot answer (e.g. it stores no logs), so answers that
	// depend on it are not mistaken for "nothing happened"; empty when it answers everything.
	Note string
}

// Coverage is implemented by a source (or backend) that cannot hold everything a tool may
// read, such as a traces-only store: every telemetry answer then says so in scan.note.
type Coverage interface {
	// CoverageNote is the sentence the answers carry; "" when nothing is missing.
	CoverageNote() string
}

// CoverageNote is src's coverage note, "" when it does not declare one.
func CoverageNote(src any) string {
	if c, ok := src.(Coverage); ok {
		return c.CoverageNote()
	}
	return ""
}
