package goapp_test

// The answers are decoded into the structs below, written from the tools' output schemas and
// CONTRACTS.md rather than the generated types, so a field the rules add later (handledErrors)
// decodes as absent and fails its assertion by name instead of failing to compile.

type page struct {
	Returned   int     `json:"returned"`
	Total      *int    `json:"total"`
	Truncated  bool    `json:"truncated"`
	NextCursor *string `json:"nextCursor"`
}

type appStatus struct {
	Status string `json:"status"`
	Counts struct {
		Services      int  `json:"services"`
		Spans         int  `json:"spans"`
		Logs          int  `json:"logs"`
		Errors        int  `json:"errors"`
		HandledErrors *int `json:"handledErrors"`
	} `json:"counts"`
	Domains []struct {
		Domain     string `json:"domain"`
		SeenCount  int    `json:"seenCount"`
		ErrorCount int    `json:"errorCount"`
	} `json:"domains"`
	Services []struct {
		Service string `json:"service"`
		Spans   int    `json:"spans"`
		Errors  int    `json:"errors"`
	} `json:"services"`
}

type errorGroup struct {
	Service         string   `json:"service"`
	Domain          string   `json:"domain"`
	Count           int      `json:"count"`
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
}

type run struct {
	ID      string `json:"id"`
	Domain  string `json:"domain"`
	Name    string `json:"name"`
	Status  string `json:"status"`
	Service string `json:"service"`
	TraceID string `json:"traceId"`
}

type runList struct {
	Count int   `json:"count"`
	Runs  []run `json:"runs"`
	Page  page  `json:"page"`
}

type runSpan struct {
	SpanID       string            `json:"spanId"`
	ParentSpanID string            `json:"parentSpanId"`
	Name         string            `json:"name"`
	Service      string            `json:"service"`
	Status       string            `json:"status"`
	ErrorMessage *string           `json:"errorMessage"`
	Attributes   map[string]string `json:"attributes"`
}

type runDetail struct {
	ID           string    `json:"id"`
	Summary      string    `json:"summary"`
	TraceID      string    `json:"traceId"`
	Status       string    `json:"status"`
	ErrorMessage *string   `json:"errorMessage"`
	Spans        []runSpan `json:"spans"`
	Logs         []struct {
		Severity string `json:"severity"`
		Message  string `json:"message"`
		SpanID   string `json:"spanId"`
	} `json:"logs"`
	Page page `json:"page"`
}

type dbOperation struct {
	Operation       string  `json:"operation"`
	Statement       *string `json:"statement"`
	System          *string `json:"system"`
	Count           int     `json:"count"`
	TotalDurationMs float64 `json:"totalDurationMs"`
	ErrorCount      int     `json:"errorCount"`
}

type dbReport struct {
	SampleCount int           `json:"sampleCount"`
	Operations  []dbOperation `json:"operations"`
	Page        *page         `json:"page"`
}
