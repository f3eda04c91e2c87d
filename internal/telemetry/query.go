package telemetry

// Window is a half-open time range [StartMs, EndMs) in Unix milliseconds.
type Window struct {
	// StartMs is the first millisecond inside the window.
	StartMs int64
	// EndMs is the first millisecond after the window.
	EndMs int64
}

// Contains reports whether t (Unix ms) falls inside the window.
func (w Window) Contains(tMs int64) bool { return tMs >= w.StartMs && tMs < w.EndMs }

// Minutes is the window's length in minutes, for throughput.
func (w Window) Minutes() float64 { return float64(w.EndMs-w.StartMs) / 60000 }

// DefaultMaxServices is how many services a status lists when its query leaves MaxServices
// zero; get_app_status has no argument for it.
const DefaultMaxServices = 20

// StatusQuery asks for get_app_status's numbers.
type StatusQuery struct {
	Window Window
	// Service restricts every count to one service; empty means all.
	Service string
	// MaxServices bounds Status.Services (the busiest first); 0 means DefaultMaxServices.
	MaxServices int
	// Invocation keeps the telemetry of one execute_command run (see InvocationKey).
	Invocation string
}

// RunsQuery asks for one page of runs.
type RunsQuery struct {
	Window  Window
	Service string
	// Domain and Status filter before paging.
	Domain string
	Status string
	// Offset skips that many matching runs; Limit bounds the page (0 means DefaultRunsLimit).
	Offset int
	Limit  int
	// AsOf pins the snapshot (0: latest).
	AsOf int64
	// Invocation keeps the telemetry of one execute_command run (see InvocationKey).
	Invocation string
}

// RunQuery asks for one run.
type RunQuery struct {
	// ID is a run id or a trace id.
	ID string
	// MaxSpans bounds the spans read (0: the adapter's limit); Run.Limited says when it hit.
	MaxSpans int
	// MaxLogs bounds the correlated log records read (0: the adapter's limit).
	MaxLogs int
	// WithAttributes asks for raw span attributes and span events (detail full).
	WithAttributes bool
}

// ErrorsQuery asks for the error groups of a window.
type ErrorsQuery struct {
	Window  Window
	Service string
	// Domain keeps only events whose run is in this domain (applied before any limit).
	Domain string
	AsOf   int64
	// Invocation keeps the telemetry of one execute_command run (see InvocationKey).
	Invocation string
	// Settle, when positive, is how many leading groups the caller shows (a page's end): a
	// source may answer the groups after them with their service, domain, fingerprint, count
	// and sightings only, and their order among themselves in any way. 0: every group in full.
	Settle int
}

// JobQuery asks for the newest job execution; empty fields do not filter.
type JobQuery struct {
	Window  Window
	JobID   string
	JobName string
	Service string
}

// PerformanceQuery asks for one service's latency statistics.
type PerformanceQuery struct {
	Window Window
	// Service is required; "unknown" means spans without service.name.
	Service string
	// Operation restricts to one span name.
	Operation string
	// TopN bounds TopOperations (0 means DefaultPerformanceTopN).
	TopN int
	// Invocation keeps the telemetry of one execute_command run (see InvocationKey).
	Invocation string
}

// DurationQuery asks for the duration facts of a service's samples in a window: its entry
// spans, or with Operation its spans of that name, entry or not.
type DurationQuery struct {
	Window     Window
	Service    string
	Operation  string
	Invocation string
}

// DBQuery asks for database bottlenecks.
type DBQuery struct {
	Window  Window
	Service string
	// System keeps only operations of this database system (e.g. postgresql).
	System string
	// TopN bounds Operations (0 means DefaultDBTopN).
	TopN int
}

// UnknownService is the service name of telemetry without a service.name resource attribute.
const UnknownService = "unknown"
