package telemetry

// InvocationQuery asks what one command invocation's processes sent.
type InvocationQuery struct {
	ID     string
	Window Window
	// MaxGroups, MaxSlowest and MaxRuns bound the answer (defaults 5, 5 and 10).
	MaxGroups, MaxSlowest, MaxRuns int
}

// InvocationReport is what arrived from the processes of one command run.
type InvocationReport struct {
	Spans int64
	// Services are the services that sent spans or logs (sorted).
	Services []string
	// ErrorLogs, WarnLogs and OtherLogs count the log records by severity.
	ErrorLogs, WarnLogs, OtherLogs int64
	// Errors groups the run's error occurrences as get_recent_errors does (bounded).
	Errors ErrorReport
	// Slowest are the slowest entry spans (bounded), slowest first.
	Slowest []SlowSpan
	// RunIDs are the runs the invocation started, newest first (bounded).
	RunIDs []string
	// Limited is true when a scan bound cut what was read.
	Limited bool
}

// SlowSpan is one slow entry span of an invocation.
type SlowSpan struct {
	Name, Service string
	DurationNs    int64
	TraceID       string
}
