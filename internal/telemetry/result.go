package telemetry

import "github.com/runlens/runlens/internal/telemetry/conventions"

// Scan says what a query covered: its window, how many rows it examined, and whether it hit a
// scan limit (then the statistics cover less than the window).
type Scan struct {
	WindowStartMs int64
	WindowEndMs   int64
	Scanned       int64
	Limited       bool
}

// Status is get_app_status's data.
type Status struct {
	Services int64
	Spans    int64
	Logs     int64
	// Errors counts error occurrences (docs/semantics.md R7): one per cause per run, however
	// many spans and logs report it, plus error logs outside any failing trace. With a service
	// filter, those that started in the service or in a run that entered there (R12).
	Errors int64
	// HandledErrors counts those of Errors whose run's verdict is ok (R8).
	HandledErrors int64
	// Domains has one entry per configured domain, in configuration order, seen or not.
	Domains []DomainActivity
	// ServiceActivity is bounded (busiest first, then by name).
	ServiceActivity []ServiceActivity
	// NewestSpanMs is the start of the newest span in the window, 0 when none.
	NewestSpanMs int64
	Scan         Scan
}

// DomainActivity counts the runs of one domain that started in the window.
type DomainActivity struct {
	Domain string
	// SeenCount is the number of runs; ErrorCount those whose normalized status is error.
	SeenCount  int64
	ErrorCount int64
	// MostRecentMs is the newest run start, 0 when unseen.
	MostRecentMs int64
}

// Activity is a window's activity without its error occurrences: the facts a status answer
// is assembled from (docs/semantics.md R1, R4–R6). The engine adds the occurrences (R7–R12)
// and lists the services and domains.
type Activity struct {
	// Services holds, per reported service name (R1), its spans in the window and the newest
	// span or log record of it (LastSeenMs); Errors is not set.
	Services ServiceTallies
	// Spans and Logs count the window's rows; NewestSpanMs is its newest span's start.
	Spans, Logs  int64
	NewestSpanMs int64
	// Domains holds, per domain with runs in the window, its runs (SeenCount, ErrorCount by
	// R5's verdict, MostRecentMs).
	Domains map[string]DomainActivity
	// Scan says what was read: Scanned, and Limited when a bound cut a read.
	Scan Scan
}

// ServiceActivity counts one service's spans in the window.
type ServiceActivity struct {
	Service string
	Spans   int64
	// Errors counts the error occurrences whose origin is in this service.
	Errors     int64
	LastSeenMs int64
}

// RunPage is one page of runs.
type RunPage struct {
	Runs []RunSummary
	// Total counts every run matching the filters in the window.
	Total int
	// EnteredAt, when a service filter found no run, names the services where the runs that
	// hold the service's spans entered (R12).
	EnteredAt []string
	Scan      Scan
}

// RunSummary is one row of list_runs.
type RunSummary struct {
	ID     string
	Domain string
	Name   string
	// Status is normalized: StatusOK or StatusError.
	Status string
	// Outcome is the application's own word for how the run ended (a job status such as
	// failed or succeeded, or an outcome attribute); empty when it said none.
	Outcome string
	StartMs int64
	// DurationMs is the head span's duration; HasDuration is false for a span still open.
	DurationMs  float64
	HasDuration bool
	Service     string
	TraceID     string
	SpanCount   int64
	ErrorCount  int64
}

// Run is one execution with its spans (start order) and correlated logs (oldest first).
type Run struct {
	RunSummary
	// ErrorMessage is the message of the cause that failed the run (R5), else of its first
	// error (by start time); empty when nothing failed.
	ErrorMessage string
	Spans        []Span
	Logs         []LogRecord
	// Limited is true when MaxSpans or MaxLogs cut what was read.
	Limited bool
	// SpanTotal is the true number of spans of the run (≥ len(Spans)); -1 when the source
	// could not count them past its read cap.
	SpanTotal int64
}

// Span is one span as the tools show it.
type Span struct {
	TraceID      string
	SpanID       string
	ParentSpanID string
	Name         string
	Service      string
	// Status is ok or error.
	Status        string
	StartNs       int64
	DurationNs    int64
	ErrorMessage  string
	ExceptionType string
	// Attributes only when asked for (detail full); sensitive values are the caller's to redact.
	Attributes map[string]string
	// Events only with the attributes, in the order recorded; the caller bounds and redacts.
	Events []SpanEvent
	// Failure, for an error span, is the span as recorded (attributes and events), so the
	// caller can read where in the code it failed; nil otherwise.
	Failure *SpanRow
}

// LogRecord is one log record correlated to a run.
type LogRecord struct {
	TimeMs   int64
	Severity string
	Message  string
	TraceID  string
	SpanID   string
	IsError  bool
}

// ErrorReport is get_recent_errors's data.
type ErrorReport struct {
	// Events counts every error occurrence in the window after filters.
	Events int64
	// Groups are ordered most recent first (last seen desc, then count desc, then fingerprint).
	Groups []ErrorGroup
	Scan   Scan
}

// ErrorGroup is a set of error occurrences of one service and domain with one fingerprint.
type ErrorGroup struct {
	Service       string
	Domain        string
	Count         int64
	FirstSeenMs   int64
	LastSeenMs    int64
	SampleMessage string
	Fingerprint   string
	ExceptionType string
	// RunIDs and TraceIDs hold at most MaxRelated ids, most recent first.
	RunIDs   []string
	TraceIDs []string
	// Handled counts the occurrences whose run's verdict is ok (R8); Count - Handled failed
	// their run (or belong to no known run).
	Handled int64
	// EntryServices are the services where the group's runs entered, other than Service,
	// at most MaxRelated, sorted (R12).
	EntryServices []string
	// SampleTraceID and SampleSpanID name the origin span of the group's most recent
	// occurrence that has one (empty for a group of error logs), so its stack can be read.
	SampleTraceID, SampleSpanID string
}

// MaxRelated bounds the related run and trace ids of an error group.
const MaxRelated = 5

// JobResult is get_last_job_result's data.
type JobResult struct {
	Found        bool
	JobName      string
	JobID        string
	Status       string
	Outcome      string
	ExitCode     *int64
	StartMs      int64
	CompletedMs  int64
	DurationMs   float64
	ErrorMessage string
	TraceID      string
	// Previous is the normalized status of the execution of the same job (by name) before
	// this one, if any, and PreviousStartMs its start.
	Previous        string
	PreviousStartMs int64
	// KnownJobs, when nothing matched a job filter, names the jobs seen in the window
	// (bounded), so the caller can correct the filter.
	KnownJobs []string
}

// JobFacts are what a last-job answer is assembled from (JobFacts.Result).
type JobFacts struct {
	// Newest is the span of the newest job execution matching the question (with attributes
	// and events), nil when none does.
	Newest *SpanRow
	// HasPrevious says whether an execution of the same job name came before it, and
	// PreviousStatus and PreviousStartMs what it ended with and when it started.
	HasPrevious     bool
	PreviousStatus  string
	PreviousStartMs int64
	// Names are the job names seen in the window, when none matches (any order, repeats
	// allowed; at least the first MaxHints by name).
	Names []string
}

// Performance is analyze_service_performance's data.
type Performance struct {
	Service     string
	SampleCount int64
	ErrorCount  int64
	AverageMs   float64
	P50Ms       float64
	P95Ms       float64
	P99Ms       float64
	// FirstMs and LastMs are the start times (unix ms) of the first and the last sample: the
	// span of time that had traffic, over which throughput is a rate (R17); 0 without samples.
	FirstMs, LastMs int64
	TopOperations   []OperationStats
	// KnownOperations, when an operation filter matched nothing, names the service's entry
	// operations in the window (bounded).
	KnownOperations []string
	// PercentileError bounds the relative error of the percentiles (0: exact; a source that
	// aggregates into sketches states their accuracy).
	PercentileError float64
	Scan            Scan
}

// Durations are the duration facts of one set of samples — a service's entry spans in a
// window (docs/semantics.md R3), or its spans of one name — from which Durations.Performance
// assembles a performance answer.
type Durations struct {
	// All summarizes every sample; Operations each span name's samples (in any order).
	All        DurationFacts
	Operations []DurationFacts
	// FirstMs and LastMs are the start times (unix ms) of the first and the last sample (R17);
	// 0 without samples.
	FirstMs, LastMs int64
	// PercentileError bounds the relative error of the percentiles (0: exact; a source that
	// merges sketches states their accuracy).
	PercentileError float64
	Scan            Scan
}

// DurationFacts summarize the durations of some samples: their count, errors (R2), sum and
// nearest-rank percentiles (R14).
type DurationFacts struct {
	// Name is the span name of an operation's facts; "" for all samples.
	Name                string
	Count, Errors       int64
	SumNs               int64
	P50Ns, P95Ns, P99Ns int64
}

// OperationStats are one span name's statistics.
type OperationStats struct {
	Name       string
	Count      int64
	ErrorCount int64
	P50Ms      float64
	P95Ms      float64
}

// DBReport is analyze_db_bottlenecks's data.
type DBReport struct {
	// SampleCount counts every database operation span in the window after filters.
	SampleCount int64
	// Operations, by total time desc, then p95 desc, then label; bounded by TopN.
	Operations []DBOperationStats
	// Total is the number of operations before TopN.
	Total int
	// KnownSystems, when a system filter matched nothing, names the systems seen (bounded).
	KnownSystems []string
	// PercentileError bounds the relative error of the operations' p95 (0: exact; a source
	// that aggregates into sketches states their accuracy).
	PercentileError float64
	Scan            Scan
}

// DBOperations are a window's database operations after a DBQuery's service and system
// filters (docs/semantics.md R13), from which DBOperations.Report assembles a database answer.
type DBOperations struct {
	// Operations are in any order. An operation whose total time (in ms) is below the TopN-th
	// longest cannot make the answer: a source may leave its P95Ns and its Op's label,
	// statement and collection unset (Partial).
	Operations []DBOperationFacts
	// Systems are the database systems seen before the system filter (any order); needed
	// only when the filter kept nothing.
	Systems []string
	// PercentileError bounds the relative error of the p95s (0: exact; a source that merges
	// sketches states their accuracy).
	PercentileError float64
	Scan            Scan
}

// DBOperationFacts are one database operation's facts: the operation as the conventions read
// it, its spans' count, errors, total and nearest-rank p95 duration.
type DBOperationFacts struct {
	Op                          conventions.DBOperation
	Count, Errors, SumNs, P95Ns int64
	// Partial marks an operation that cannot make the answer, whose P95Ns and Op's label,
	// statement and collection were not read.
	Partial bool
}

// DBOperationStats are one database operation's statistics: one system and one normalized
// statement (else operation and collection, else span name).
type DBOperationStats struct {
	// Key identifies the operation: system and normalized statement (or its fallback).
	Key string
	// Label is the short name: the query summary, else operation + collection, else the
	// shortened statement.
	Label string
	// Statement is the normalized query text (literals as ?), empty when the spans had none.
	Statement    string
	System       string
	Collection   string
	Count        int64
	TotalMs      float64
	P95Ms        float64
	ErrorCount   int64
	ShareOfTotal float64
}

// Status values of spans, runs and jobs when the application sets none.
const (
	StatusOK    = "ok"
	StatusError = "error"
)
