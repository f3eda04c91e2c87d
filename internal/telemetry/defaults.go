package telemetry

import "github.com/runlens/runlens/gen"

// The page sizes a query gets when it leaves them zero. They are the schema defaults of the
// tools that send these queries, read from the generated decoder, so each number is written
// once, in schemas/tools/*.input.json. A tool call always carries them (the decoder applied
// the default); the engine applies them, once and on entry, for the other callers (tests,
// command telemetry) before a backend capability or the scans see the query.
var (
	// DefaultRunsLimit is list_runs' default limit.
	DefaultRunsLimit = schemaDefault(func(in *gen.ListRunsInput) int { return in.Limit })
	// DefaultPerformanceTopN is analyze_service_performance's default limit.
	DefaultPerformanceTopN = schemaDefault(func(in *gen.AnalyzeServicePerformanceInput) int { return in.Limit })
	// DefaultDBTopN is analyze_db_bottlenecks' default limit.
	DefaultDBTopN = schemaDefault(func(in *gen.AnalyzeDBBottlenecksInput) int { return in.Limit })
)

// schemaDefault is one field of a tool input the generated decoder filled with its defaults.
func schemaDefault[T any, P interface {
	*T
	ApplyDefaults()
}](field func(P) int) int {
	var in T
	P(&in).ApplyDefaults()
	return field(&in)
}

// WithDefaults returns q with a zero Limit set to DefaultRunsLimit.
func (q RunsQuery) WithDefaults() RunsQuery {
	if q.Limit == 0 {
		q.Limit = DefaultRunsLimit
	}
	return q
}

// WithDefaults returns q with a zero TopN set to DefaultPerformanceTopN.
func (q PerformanceQuery) WithDefaults() PerformanceQuery {
	if q.TopN == 0 {
		q.TopN = DefaultPerformanceTopN
	}
	return q
}

// WithDefaults returns q with a zero TopN set to DefaultDBTopN.
func (q DBQuery) WithDefaults() DBQuery {
	if q.TopN == 0 {
		q.TopN = DefaultDBTopN
	}
	return q
}
