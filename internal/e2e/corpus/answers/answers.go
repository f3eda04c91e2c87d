// Package answers is what the corpus tests read of runlens's telemetry tools: the tool layer in
// process, and the answers decoded from the tools' output schemas (docs/semantics.md names the
// rules they check). A field the tests assert on is decoded by name, so an answer that lacks it
// fails that assertion, not the build.
package answers

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/runlens/runlens/internal/app"
	"github.com/runlens/runlens/internal/config"
	"github.com/runlens/runlens/internal/e2e/corpus/captured"
	"github.com/runlens/runlens/internal/mcp"
	"github.com/runlens/runlens/internal/server"
	"github.com/runlens/runlens/internal/telemetry/store"
)

// Tools is runlens's MCP tool layer, in process: the handler `runlens serve` dispatches every
// tools/call to.
type Tools struct {
	H *server.Handler
}

// Call calls a tool and decodes its structured answer into out; a tool error fails the test.
func (tl Tools) Call(t testing.TB, name string, args map[string]any, out any) {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	res, err := tl.H.CallTool(context.Background(), mcp.CallRequest{Name: name, Arguments: raw})
	if err != nil {
		t.Fatalf("%s %s: %v", name, raw, err)
	}
	if res.IsError {
		t.Fatalf("%s %s answered a tool error: %s", name, raw, res.Structured)
	}
	if err := json.Unmarshal(res.Structured, out); err != nil {
		t.Fatalf("%s: decode %s: %v", name, res.Structured, err)
	}
}

// Page is an answer's paging.
type Page struct {
	Returned   int     `json:"returned"`
	Total      *int    `json:"total"`
	Truncated  bool    `json:"truncated"`
	NextCursor *string `json:"nextCursor"`
}

// AppStatus is get_app_status's answer.
type AppStatus struct {
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

// ErrorGroup is one group of get_recent_errors.
type ErrorGroup struct {
	Service         string   `json:"service"`
	Domain          string   `json:"domain"`
	Count           int      `json:"count"`
	SampleMessage   string   `json:"sampleMessage"`
	Fingerprint     string   `json:"fingerprint"`
	ExceptionType   *string  `json:"exceptionType"`
	RelatedRunIDs   []string `json:"relatedRunIds"`
	RelatedTraceIDs []string `json:"relatedTraceIds"`
	Location        *string  `json:"location"`
	Handled         *int     `json:"handled"`
	EntryServices   []string `json:"entryServices"`
}

// RecentErrors is get_recent_errors's answer.
type RecentErrors struct {
	Count  int          `json:"count"`
	Groups []ErrorGroup `json:"groups"`
	Page   Page         `json:"page"`
}

// Run is one run of list_runs.
type Run struct {
	ID      string  `json:"id"`
	Domain  string  `json:"domain"`
	Name    string  `json:"name"`
	Status  string  `json:"status"`
	Outcome *string `json:"outcome"`
	Service string  `json:"service"`
	TraceID string  `json:"traceId"`
}

// RunList is list_runs's answer.
type RunList struct {
	Count int     `json:"count"`
	Runs  []Run   `json:"runs"`
	Page  Page    `json:"page"`
	Hint  *string `json:"hint"`
}

// RunSpan is one span of get_run.
type RunSpan struct {
	SpanID       string            `json:"spanId"`
	ParentSpanID string            `json:"parentSpanId"`
	Name         string            `json:"name"`
	Service      string            `json:"service"`
	DurationMs   *float64          `json:"durationMs"`
	Status       string            `json:"status"`
	Depth        int               `json:"depth"`
	ErrorMessage *string           `json:"errorMessage"`
	Attributes   map[string]string `json:"attributes"`
	Location     *string           `json:"location"`
	Frames       []string          `json:"frames"`
}

// RunDetail is get_run's answer.
type RunDetail struct {
	ID           string    `json:"id"`
	Summary      string    `json:"summary"`
	TraceID      string    `json:"traceId"`
	Status       string    `json:"status"`
	Outcome      *string   `json:"outcome"`
	ErrorMessage *string   `json:"errorMessage"`
	Spans        []RunSpan `json:"spans"`
	Logs         []struct {
		Severity string `json:"severity"`
		Message  string `json:"message"`
		SpanID   string `json:"spanId"`
	} `json:"logs"`
	Page Page `json:"page"`
}

// JobResult is get_last_job_result's answer.
type JobResult struct {
	Found        bool    `json:"found"`
	JobName      *string `json:"jobName"`
	JobID        *string `json:"jobId"`
	Status       *string `json:"status"`
	Outcome      *string `json:"outcome"`
	ExitCode     *int    `json:"exitCode"`
	ErrorMessage *string `json:"errorMessage"`
	TraceID      *string `json:"traceId"`
}

// DBOperation is one operation of analyze_db_bottlenecks.
type DBOperation struct {
	Operation       string  `json:"operation"`
	Statement       *string `json:"statement"`
	System          *string `json:"system"`
	Count           int     `json:"count"`
	TotalDurationMs float64 `json:"totalDurationMs"`
	ErrorCount      int     `json:"errorCount"`
}

// DBReport is analyze_db_bottlenecks's answer.
type DBReport struct {
	SampleCount int           `json:"sampleCount"`
	Operations  []DBOperation `json:"operations"`
	Page        *Page         `json:"page"`
	Hint        *string       `json:"hint"`
}

// Runlens is runlens in process for a corpus test: its app over a project folder, with an
// OTLP/HTTP and an OTLP/gRPC receiver on loopback ports, and its tool layer.
type Runlens struct {
	App *app.App
	// HTTPAddr and GRPCAddr are the receivers' host:port.
	HTTPAddr, GRPCAddr string
	Tools              Tools
	stop               []func(context.Context) error
}

// Start starts runlens over the project folder root (the app closes when the test ends).
func Start(ctx context.Context, t testing.TB, root string) *Runlens {
	t.Helper()
	cfg, err := app.LoadConfig(root, func(string) string { return "" },
		config.Overrides{ProjectRoot: root, Receiver: "127.0.0.1:0", ReceiverGRPC: "off"})
	if err != nil {
		t.Fatal(err)
	}
	a, err := app.New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	httpRcv, err := a.ListenReceiver(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatalf("start the OTLP/HTTP receiver: %v", err)
	}
	grpcRcv, err := a.ListenGRPCReceiver(ctx, "127.0.0.1:0")
	if err != nil {
		_ = httpRcv.Shutdown(ctx)
		t.Fatalf("start the OTLP/gRPC receiver: %v", err)
	}
	return &Runlens{App: a, HTTPAddr: httpRcv.Addr, GRPCAddr: grpcRcv.Addr, Tools: Tools{H: a.Handler(server.ProfileFull)},
		stop: []func(context.Context) error{httpRcv.Shutdown, grpcRcv.Shutdown}}
}

// StopReceivers stops both receivers once what they took is stored; the tools still answer.
func (r *Runlens) StopReceivers(ctx context.Context, t testing.TB) {
	t.Helper()
	for i, stop := range r.stop {
		if err := stop(ctx); err != nil {
			t.Fatalf("stop the %s receiver: %v", []string{"OTLP/HTTP", "OTLP/gRPC"}[i], err)
		}
	}
}

// Capture writes what runlens stored of the app, with the workload's truth, to the corpus
// captures (package captured) when RUNLENS_CORPUS_CAPTURE=1; the backends' tests hold every
// backend to that truth. It is a no-op otherwise.
func (r *Runlens) Capture(ctx context.Context, t testing.TB, app string, end time.Time, truth captured.Truth) {
	t.Helper()
	if os.Getenv("RUNLENS_CORPUS_CAPTURE") != "1" {
		return
	}
	st, err := r.App.Store(ctx)
	if err != nil {
		t.Fatal(err)
	}
	path := captured.Path("..", app)
	if err := captured.Save(ctx, store.NewBackend(st), path, app, end, truth); err != nil {
		t.Fatalf("capture %s: %v", app, err)
	}
	t.Logf("captured %s into %s", app, path)
}

// UnmarshalJSON reads a run, its trace id being its id when the answer leaves it out (the
// contract omits a traceId equal to the id).
func (r *Run) UnmarshalJSON(b []byte) error {
	type plain Run
	if err := json.Unmarshal(b, (*plain)(r)); err != nil {
		return err
	}
	if r.TraceID == "" {
		r.TraceID = r.ID
	}
	return nil
}

// UnmarshalJSON reads get_run's answer, its trace id being its id when the answer leaves it out.
func (r *RunDetail) UnmarshalJSON(b []byte) error {
	type plain RunDetail
	if err := json.Unmarshal(b, (*plain)(r)); err != nil {
		return err
	}
	if r.TraceID == "" {
		r.TraceID = r.ID
	}
	return nil
}
