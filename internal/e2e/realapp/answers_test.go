package realapp_test

import "encoding/json"

// The answers are decoded into the structs below, written from CONTRACTS.md, not into the
// generated types: a field the contract names that the schema does not have yet (statement,
// for one) decodes as absent and fails its assertion by name instead of failing to compile.

type page struct {
	Returned   int     `json:"returned"`
	Total      *int    `json:"total"`
	Truncated  bool    `json:"truncated"`
	NextCursor *string `json:"nextCursor"`
}

type scan struct {
	WindowStartUnixMs int64 `json:"windowStartUnixMs"`
	WindowEndUnixMs   int64 `json:"windowEndUnixMs"`
	Scanned           int   `json:"scanned"`
	Limited           bool  `json:"limited"`
}

type appStatus struct {
	Status string `json:"status"`
	Counts struct {
		Services int `json:"services"`
		Spans    int `json:"spans"`
		Logs     int `json:"logs"`
		Errors   int `json:"errors"`
	} `json:"counts"`
	Domains []struct {
		Domain     string `json:"domain"`
		SeenCount  int    `json:"seenCount"`
		ErrorCount int    `json:"errorCount"`
	} `json:"domains"`
	Services []serviceStatus `json:"services"`
	Scan     scan            `json:"scan"`
}

type serviceStatus struct {
	Service string `json:"service"`
	Spans   int    `json:"spans"`
	Errors  int    `json:"errors"`
}

type errorGroup struct {
	Service         string   `json:"service"`
	Domain          string   `json:"domain"`
	Count           int      `json:"count"`
	FirstSeenUnixMs int64    `json:"firstSeenUnixMs"`
	LastSeenUnixMs  int64    `json:"lastSeenUnixMs"`
	SampleMessage   string   `json:"sampleMessage"`
	Fingerprint     string   `json:"fingerprint"`
	ExceptionType   *string  `json:"exceptionType"`
	RelatedRunIDs   []string `json:"relatedRunIds"`
	RelatedTraceIDs []string `json:"relatedTraceIds"`
}

type recentErrors struct {
	Count  int          `json:"count"`
	Groups []errorGroup `json:"groups"`
	Page   page         `json:"page"`
	Scan   scan         `json:"scan"`
}

type run struct {
	ID          string   `json:"id"`
	Domain      string   `json:"domain"`
	Name        string   `json:"name"`
	Status      string   `json:"status"`
	Outcome     *string  `json:"outcome"`
	StartUnixMs int64    `json:"startUnixMs"`
	DurationMs  *float64 `json:"durationMs"`
	Service     string   `json:"service"`
	TraceID     string   `json:"traceId"`
	SpanCount   *int     `json:"spanCount"`
	ErrorCount  *int     `json:"errorCount"`
}

type runList struct {
	Count int   `json:"count"`
	Runs  []run `json:"runs"`
	Page  page  `json:"page"`
	Scan  scan  `json:"scan"`
}

type runSpan struct {
	SpanID       string   `json:"spanId"`
	ParentSpanID string   `json:"parentSpanId"`
	Name         string   `json:"name"`
	Service      string   `json:"service"`
	DurationMs   *float64 `json:"durationMs"`
	Status       string   `json:"status"`
	Depth        int      `json:"depth"`
	ErrorMessage *string  `json:"errorMessage"`
}

type runDetail struct {
	ID           string    `json:"id"`
	Summary      string    `json:"summary"`
	TraceID      string    `json:"traceId"`
	Outcome      *string   `json:"outcome"`
	ErrorMessage *string   `json:"errorMessage"`
	DurationMs   *float64  `json:"durationMs"`
	Spans        []runSpan `json:"spans"`
	Logs         []struct {
		TimeUnixMs int64  `json:"timeUnixMs"`
		Severity   string `json:"severity"`
		Message    string `json:"message"`
		SpanID     string `json:"spanId"`
	} `json:"logs"`
	CriticalPath []pathStep `json:"criticalPath"`
	Page         page       `json:"page"`
	OmittedSpans int        `json:"omittedSpans"`
}

type pathStep struct {
	SpanID     string  `json:"spanId"`
	Name       string  `json:"name"`
	Service    string  `json:"service"`
	DurationMs float64 `json:"durationMs"`
}

type jobResult struct {
	Found           bool     `json:"found"`
	JobName         *string  `json:"jobName"`
	JobID           *string  `json:"jobId"`
	Status          *string  `json:"status"`
	Outcome         *string  `json:"outcome"`
	ExitCode        *int     `json:"exitCode"`
	StartUnixMs     *int64   `json:"startUnixMs"`
	CompletedUnixMs *int64   `json:"completedUnixMs"`
	DurationMs      *float64 `json:"durationMs"`
	ErrorMessage    *string  `json:"errorMessage"`
	TraceID         *string  `json:"traceId"`
	Previous        *struct {
		Status string `json:"status"`
	} `json:"previous"`
}

type operationStats struct {
	Name          string  `json:"name"`
	Count         int     `json:"count"`
	ErrorCount    int     `json:"errorCount"`
	P50DurationMs float64 `json:"p50DurationMs"`
	P95DurationMs float64 `json:"p95DurationMs"`
}

type performance struct {
	Service           string           `json:"service"`
	Found             *bool            `json:"found"`
	SampleCount       int              `json:"sampleCount"`
	ErrorCount        int              `json:"errorCount"`
	ErrorRate         float64          `json:"errorRate"`
	AverageDurationMs float64          `json:"averageDurationMs"`
	P50DurationMs     float64          `json:"p50DurationMs"`
	P95DurationMs     float64          `json:"p95DurationMs"`
	P99DurationMs     float64          `json:"p99DurationMs"`
	ThroughputPerMin  float64          `json:"throughputPerMinute"`
	TrafficFrom       *int64           `json:"trafficFromUnixMs"`
	TrafficTo         *int64           `json:"trafficToUnixMs"`
	TopOperations     []operationStats `json:"topOperations"`
	Scan              scan             `json:"scan"`
}

type dbOperation struct {
	Operation       string  `json:"operation"`
	Statement       *string `json:"statement"`
	System          *string `json:"system"`
	Collection      *string `json:"collection"`
	Count           int     `json:"count"`
	TotalDurationMs float64 `json:"totalDurationMs"`
	P95DurationMs   float64 `json:"p95DurationMs"`
	ErrorCount      int     `json:"errorCount"`
	ShareOfTotal    float64 `json:"shareOfTotal"`
}

type dbReport struct {
	SampleCount int           `json:"sampleCount"`
	Operations  []dbOperation `json:"operations"`
	Page        *page         `json:"page"`
	Scan        scan          `json:"scan"`
}

// UnmarshalJSON reads a run, its trace id being its id when the answer leaves it out (the
// contract omits a traceId equal to the id).
func (r *run) UnmarshalJSON(b []byte) error {
	type plain run
	if err := json.Unmarshal(b, (*plain)(r)); err != nil {
		return err
	}
	if r.TraceID == "" {
		r.TraceID = r.ID
	}
	return nil
}

// UnmarshalJSON reads get_run's answer, its trace id being its id when the answer leaves it out.
func (r *runDetail) UnmarshalJSON(b []byte) error {
	type plain runDetail
	if err := json.Unmarshal(b, (*plain)(r)); err != nil {
		return err
	}
	if r.TraceID == "" {
		r.TraceID = r.ID
	}
	return nil
}
