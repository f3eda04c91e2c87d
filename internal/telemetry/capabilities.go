package telemetry

import (
	"context"
	"slices"

	"github.com/runlens/runlens/internal/telemetry/conventions"
)

// Limits bound what the engine reads for one answer when it computes from scans.
type Limits struct {
	// MaxScanRows bounds the rows of one scan (default 200,000); a scan cut by it makes the
	// answer's Scan.Limited true.
	MaxScanRows int
	// MaxRunSpans and MaxRunLogs bound get_run's reads (defaults 10,000 and 1,000).
	MaxRunSpans int
	MaxRunLogs  int
	// MaxHints bounds the known names offered when a filter matched nothing (default 10).
	MaxHints int
}

// DefaultLimits are the limits a new engine uses; an engine hands its own to the backend with
// each question (Ask, and each scan's Limit).
func DefaultLimits() Limits {
	return Limits{MaxScanRows: 200_000, MaxRunSpans: 10_000, MaxRunLogs: 1_000, MaxHints: 10}
}

// Ask is what the engine hands a capability with each question: the conventions its answer
// follows and the engine's limits, so that no backend reads either from a package variable.
type Ask struct {
	Conv   *conventions.Conventions
	Limits Limits
}

// Capabilities: optional interfaces a Backend implements to answer a tool's question, or to
// supply one of the facts an answer is assembled from, server-side. Each receives the engine's
// conventions and limits (Ask) and answers handled=false when it cannot answer with them; it
// must then have no side effects. What it answers must equal what the engine computes from
// scans: the conformance suite holds each fact to the engine's scan-derived one, and each
// answer to the fixture's.
type (
	// ActivityCounter supplies a window's Activity, the facts a status answer is assembled
	// from apart from its error occurrences (the engine adds those from Errors).
	ActivityCounter interface {
		CountActivity(ctx context.Context, q StatusQuery, ask Ask) (a Activity, handled bool, err error)
	}
	// RunLister supplies a page of the run index: the window's runs after the query's filters
	// in SortRuns' order from its offset, and how many there are. The engine adds, for a
	// service filter that found none, where that service's runs entered (R12).
	RunLister interface {
		ListRuns(ctx context.Context, q RunsQuery, ask Ask) (p RunPage, handled bool, err error)
	}
	// OccurrenceIndexer supplies the OccurrenceIndex of an errors question: the window's error
	// groups after its filters (the service filter of docs/semantics.md R12), each with its
	// counts, first and last sighting, handled share, entry services and the newest occurrences
	// that settle its fields (those of the first q.Settle groups in the answer's order, when
	// q.Settle is positive), from occurrences that TraceOccurrences computed. The engine
	// assembles the answer (OccurrenceIndex.Report).
	OccurrenceIndexer interface {
		IndexOccurrences(ctx context.Context, q ErrorsQuery, ask Ask) (idx OccurrenceIndex, handled bool, err error)
	}
	// JobIndexer supplies the JobFacts of a last-job question; the engine assembles the
	// answer from them (JobFacts.Result).
	JobIndexer interface {
		IndexJobs(ctx context.Context, q JobQuery, ask Ask) (f JobFacts, handled bool, err error)
	}
	// DurationIndexer supplies the duration facts of a service's samples (Durations): exact,
	// or merged from sketches whose error bound it states. The engine assembles performance
	// answers from them (Durations.Performance), and names the service's entry operations
	// from the entry spans' facts when an operation filter matched nothing.
	DurationIndexer interface {
		IndexDurations(ctx context.Context, q DurationQuery, ask Ask) (d Durations, handled bool, err error)
	}
	// DBIndexer supplies a window's database operations (DBOperations); the engine assembles
	// the answer from them (DBOperations.Report).
	DBIndexer interface {
		IndexDB(ctx context.Context, q DBQuery, ask Ask) (d DBOperations, handled bool, err error)
	}
	// FailingTraceScanner reads in one pass what the engine otherwise reads by lists of trace
	// ids: the spans, and the error logs, of the traces with an error span in a window (a
	// backend where every list costs a scan of the window's trace ids answers a day's
	// thousands of failing traces with one scan instead of one per list). It returns the rows
	// the lists would, newest first, cut at the limit.
	FailingTraceScanner interface {
		ScanFailingTraceSpans(ctx context.Context, s FailingScan) (SpanBatch, error)
		ScanFailingTraceLogs(ctx context.Context, s FailingScan) (LogBatch, error)
	}
	// RunResolver finds the trace of a run id (an execution id) faster than a scan.
	RunResolver interface {
		ResolveRun(ctx context.Context, id string, ask Ask) (traceID string, handled bool, err error)
	}
)

// Keys returns the keys of a map, sorted.
func Keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
