package aspire_test

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runlens/runlens/internal/telemetry/engine"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/runlens/runlens/gen"
	"github.com/runlens/runlens/internal/flows"
	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/aspire"
	"github.com/runlens/runlens/internal/telemetry/aspire/aspiretest"
	"github.com/runlens/runlens/internal/telemetry/fixture"
	"github.com/runlens/runlens/internal/toolerr"
)

var now = time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)

func dataset(t *testing.T) *fixture.Dataset {
	t.Helper()
	d, err := fixture.New(fixture.Options{Now: now, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func toolsOver(src telemetry.Source) *flows.Flows {
	return flows.New(flows.Deps{Telemetry: src, Now: func() time.Time { return now }})
}

// everyTool calls each telemetry tool once and returns the answers and errors as JSON text.
func everyTool(f *flows.Flows, runID string) map[string]string {
	ctx := context.Background()
	show := func(out any, err error) string {
		if err != nil {
			if te, ok := toolerr.As(err); ok {
				b, _ := json.Marshal(te)
				return "error " + string(b)
			}
			return "go error " + err.Error()
		}
		b, _ := json.Marshal(out)
		return string(b)
	}
	return map[string]string{
		"get_app_status":              show(f.GetAppStatus(ctx, defaults(gen.GetAppStatusInput{Window: "1d"}))),
		"list_runs":                   show(f.ListRuns(ctx, defaults(gen.ListRunsInput{Window: "1d"}))),
		"get_run":                     show(f.GetRun(ctx, defaults(gen.GetRunInput{ID: runID}))),
		"get_recent_errors":           show(f.GetRecentErrors(ctx, defaults(gen.GetRecentErrorsInput{Window: "1d"}))),
		"get_last_job_result":         show(f.GetLastJobResult(ctx, defaults(gen.GetLastJobResultInput{}))),
		"analyze_service_performance": show(f.AnalyzeServicePerformance(ctx, defaults(gen.AnalyzeServicePerformanceInput{Service: "checkout", Window: "1h"}))),
		"analyze_db_bottlenecks":      show(f.AnalyzeDBBottlenecks(ctx, defaults(gen.AnalyzeDBBottlenecksInput{Window: "1h"}))),
	}
}

func TestAuthentication(t *testing.T) {
	d := dataset(t)
	cases := []struct {
		name        string
		key, token  string
		wantRefused bool
		wantText    string // in every tool's error and the doctor's problem
		exchanges   int
	}{
		{name: "no key is refused with the variable to set", wantRefused: true, wantText: "ASPIRE_API_KEY is not set"},
		{name: "a wrong key is refused", key: "wrong-key", wantRefused: true, wantText: "refused the API key"},
		{name: "the right key answers", key: testKey},
		{name: "a login token is exchanged for the key once", token: testToken, exchanges: 1},
		{name: "a wrong login token is refused naming its variable", token: "stale-token", wantRefused: true, wantText: "DASH_TOKEN", exchanges: 1},
		{name: "a refused key falls back to the login token", key: "old-key", token: testToken, exchanges: 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var logs bytes.Buffer
			srv := aspiretest.New(aspiretest.Options{APIKey: testKey, Token: testToken})
			defer srv.Close()
			srv.Load(d.Traces, d.Logs)
			b := aspire.New(aspire.Options{Endpoint: srv.URL, APIKey: c.key, Token: c.token, TokenEnv: "DASH_TOKEN",
				Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
			src := engine.New(b, d.Conventions)
			answers := everyTool(toolsOver(src), d.Runs[0].ID)
			for tool, a := range answers {
				if c.wantRefused != strings.HasPrefix(a, "error ") {
					t.Errorf("%s answered %.200s; refused should be %v", tool, a, c.wantRefused)
				}
				if c.wantRefused && !strings.Contains(a, c.wantText) {
					t.Errorf("%s's error does not say %q: %.300s", tool, c.wantText, a)
				}
				for _, secret := range []string{testKey, testToken, "wrong-key", "stale-token", "old-key"} {
					if strings.Contains(a, secret) {
						t.Errorf("%s's answer holds a credential", tool)
					}
				}
			}
			info := src.Describe(context.Background())
			if c.wantRefused != !info.Reachable || (c.wantRefused && !errors.Is(info.Problem, telemetry.ErrRefused)) {
				t.Errorf("Describe: reachable %v, problem %v", info.Reachable, info.Problem)
			}
			if got := srv.Requests()["/api/telemetry/validateToken"]; got != c.exchanges {
				t.Errorf("%d token exchanges, want %d", got, c.exchanges)
			}
			for _, secret := range []string{testKey, testToken} {
				if strings.Contains(logs.String(), secret) {
					t.Errorf("a log line holds a credential: %s", logs.String())
				}
			}
		})
	}
}

// Each way a dashboard (or something in its place) answers badly is a clear tool error naming
// what went wrong, or a bounded answer that says it is limited; the next call, once the
// dashboard answers well, succeeds.
func TestBadAnswersAreClearErrorsAndTheNextCallSucceeds(t *testing.T) {
	const slowText = "did not answer within"
	d := dataset(t)
	var release chan struct{}
	cases := []struct {
		name     string
		fault    func(w http.ResponseWriter, r *http.Request) bool
		wantText string
	}{
		{"a login page instead of the API", func(w http.ResponseWriter, r *http.Request) bool {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<!DOCTYPE html><html><body><form action=/login>token</form></body></html>")
			return true
		}, "web page"},
		{"truncated JSON", func(w http.ResponseWriter, r *http.Request) bool {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"data":{"resourceSpans":[{"resource":{"attributes":[`)
			return true
		}, "not complete JSON"},
		{"a 10 MB answer", func(w http.ResponseWriter, r *http.Request) bool {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"data":{"resourceSpans":[]},"pad":"`+strings.Repeat("x", 10<<20)+`","totalCount":0,"returnedCount":0}`)
			return true
		}, "larger than 4 MiB"},
		{"an answer slower than the timeout", func(w http.ResponseWriter, r *http.Request) bool {
			select {
			case <-r.Context().Done():
			case <-release:
			}
			return true
		}, slowText},
		{"a server error", func(w http.ResponseWriter, r *http.Request) bool {
			http.Error(w, "boom", http.StatusInternalServerError)
			return true
		}, "HTTP 500"},
		{"ids in base64 instead of hex", func(w http.ResponseWriter, r *http.Request) bool {
			if r.URL.Path != aspire.PathSpans {
				return false
			}
			fmt.Fprint(w, `{"data":{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"S/kvNXezTaajzpKdDg5HNg==","spanId":"APBnqgupArc=","name":"x"}]}]}]},"totalCount":1,"returnedCount":1}`)
			return true
		}, "do not decode"},
		{"an answer without its counts", func(w http.ResponseWriter, r *http.Request) bool {
			fmt.Fprint(w, `{"data":{"resourceSpans":[]}}`)
			return true
		}, "lacks data"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			release = make(chan struct{})
			defer close(release)
			srv := aspiretest.New(aspiretest.Options{APIKey: testKey})
			defer srv.Close()
			srv.Load(d.Traces, d.Logs)
			// The timeout is short only where the case is about it, so a busy machine cannot
			// turn another case (a 10 MB answer, the call after the fault) into a timeout.
			timeout := time.Minute
			if c.wantText == slowText {
				timeout = 2 * time.Second
			}
			src := engine.New(aspire.New(aspire.Options{Endpoint: srv.URL, APIKey: testKey, MaxBytes: 4 << 20, Timeout: timeout}), d.Conventions)
			f := toolsOver(src)
			srv.SetFault(c.fault)
			_, err := f.ListRuns(context.Background(), defaults(gen.ListRunsInput{Window: "1d"}))
			te, ok := toolerr.As(err)
			if !ok || te.Code != gen.ErrorCodeSourceUnreachable || !strings.Contains(te.Message, c.wantText) {
				t.Fatalf("list_runs: %v, want a source_unreachable error saying %q", err, c.wantText)
			}
			if !strings.Contains(te.Message, srv.URL) || te.HintText() == "" {
				t.Errorf("the error names no endpoint or gives no fix: %+v", te)
			}
			st, err := f.GetAppStatus(context.Background(), defaults(gen.GetAppStatusInput{Window: "1d"}))
			if err != nil || st.Source.Reachable {
				t.Errorf("get_app_status during the fault: reachable %v, %v; want an answer saying unreachable", st.Source.Reachable, err)
			}
			srv.SetFault(nil)
			out, err := f.ListRuns(context.Background(), defaults(gen.ListRunsInput{Window: "1d"}))
			if err != nil || out.Count == 0 {
				t.Fatalf("list_runs after the fault: %d runs, %v", out.Count, err)
			}
		})
	}
}

// A trace of 50,000 spans is more than one query returns: the answers are bounded and say so.
func TestATraceOfFiftyThousandSpansIsABoundedHonestAnswer(t *testing.T) {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "huge")
	spans := rs.ScopeSpans().AppendEmpty().Spans()
	trace := pcommon.TraceID{1, 2, 3}
	start := now.Add(-10 * time.Minute)
	for i := range 50_000 {
		sp := spans.AppendEmpty()
		sp.SetTraceID(trace)
		sp.SetSpanID(pcommon.SpanID{0, 0, 0, 1, byte(i >> 16), byte(i >> 8), byte(i), 1})
		if i > 0 {
			sp.SetParentSpanID(pcommon.SpanID{0, 0, 0, 1, 0, 0, 0, 1})
		}
		sp.SetName(fmt.Sprintf("step %d", i%10))
		sp.SetKind(ptrace.SpanKindServer)
		sp.SetStartTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Duration(i) * time.Millisecond)))
		sp.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Duration(i)*time.Millisecond + time.Millisecond)))
	}
	srv := aspiretest.New(aspiretest.Options{})
	defer srv.Close()
	srv.Load(td, plog.NewLogs())
	f := toolsOver(engine.New(aspire.New(aspire.Options{Endpoint: srv.URL}), nil))
	ctx := context.Background()
	run, err := f.GetRun(ctx, defaults(gen.GetRunInput{ID: trace.String()}))
	if err != nil {
		t.Fatalf("get_run: %v", err)
	}
	if run.Page.Total == nil || *run.Page.Total > aspire.MaxItems || run.Page.Returned > 50 {
		t.Errorf("get_run page %+v: want at most %d spans known and a bounded page", run.Page, aspire.MaxItems)
	}
	perf, err := f.AnalyzeServicePerformance(ctx, defaults(gen.AnalyzeServicePerformanceInput{Service: "huge", Window: "1h"}))
	if err != nil {
		t.Fatalf("analyze_service_performance: %v", err)
	}
	if !perf.Scan.Limited || perf.SampleCount != aspire.MaxItems {
		t.Errorf("performance over the cut pull: limited %v over %d samples, want limited over %d", perf.Scan.Limited, perf.SampleCount, aspire.MaxItems)
	}
	// A window that starts after the oldest span kept lost nothing: it is not limited.
	recent, err := f.AnalyzeServicePerformance(ctx, defaults(gen.AnalyzeServicePerformanceInput{Service: "huge", Window: "1m"}))
	if err != nil || recent.Scan.Limited {
		t.Errorf("a recent window over the cut pull: limited %v, %v; want not limited", recent.Scan.Limited, err)
	}
}

// A port discovered over http may be served over https: the second endpoint is tried, and a
// loopback dashboard's ASP.NET development certificate is trusted from its folder.
func TestADiscoveredPortFallsBackToHTTPSWithTheDevelopmentCertificate(t *testing.T) {
	d := dataset(t)
	srv := aspiretest.NewTLS(aspiretest.Options{APIKey: testKey})
	defer srv.Close()
	srv.Load(d.Traces, d.Logs)
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	certDir := t.TempDir()
	cert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(filepath.Join(certDir, "aspnetcore-localhost-test.pem"), cert, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name     string
		dirs     []string
		wantOK   bool
		wantText string
	}{
		{"with the development certificate the https endpoint answers", []string{certDir}, true, ""},
		{"without it the failure says the certificate is not trusted", []string{t.TempDir()}, false, "certificate this machine does not trust"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := aspire.New(aspire.Options{Endpoint: "http://127.0.0.1:" + port, Fallback: "https://127.0.0.1:" + port,
				APIKey: testKey, TrustDevCerts: true, DevCertDirs: c.dirs})
			info := engine.New(b, d.Conventions).Describe(context.Background())
			if info.Reachable != c.wantOK {
				t.Fatalf("reachable %v (%v), want %v", info.Reachable, info.Problem, c.wantOK)
			}
			if c.wantOK && info.Endpoint != "https://127.0.0.1:"+port {
				t.Errorf("endpoint %s, want the https one", info.Endpoint)
			}
			if !c.wantOK && (info.Problem == nil || !strings.Contains(info.Problem.Error(), c.wantText)) {
				t.Errorf("problem %v, want it to say %q", info.Problem, c.wantText)
			}
		})
	}
}

// A dashboard is a shared process: one tool call costs it one spans query and, when the answer
// needs logs, one logs query; the calls of the next second reuse them.
func TestEachToolCallCostsTheDashboardAtMostTwoQueries(t *testing.T) {
	d := dataset(t)
	clock := now
	b := func(srv *aspiretest.Server) telemetry.Source {
		return engine.New(aspire.New(aspire.Options{Endpoint: srv.URL, APIKey: testKey, Now: func() time.Time { return clock }}), d.Conventions)
	}
	srv := aspiretest.New(aspiretest.Options{APIKey: testKey})
	defer srv.Close()
	srv.Load(d.Traces, d.Logs)
	f := toolsOver(b(srv))
	ctx := context.Background()
	calls := map[string]func() error{
		"get_app_status": func() error { _, err := f.GetAppStatus(ctx, defaults(gen.GetAppStatusInput{})); return err },
		"list_runs":      func() error { _, err := f.ListRuns(ctx, defaults(gen.ListRunsInput{})); return err },
		"get_run":        func() error { _, err := f.GetRun(ctx, defaults(gen.GetRunInput{ID: d.Runs[0].ID})); return err },
		"get_recent_errors": func() error {
			_, err := f.GetRecentErrors(ctx, defaults(gen.GetRecentErrorsInput{}))
			return err
		},
		"get_last_job_result": func() error { _, err := f.GetLastJobResult(ctx, defaults(gen.GetLastJobResultInput{})); return err },
		"analyze_service_performance": func() error {
			_, err := f.AnalyzeServicePerformance(ctx, defaults(gen.AnalyzeServicePerformanceInput{Service: "checkout"}))
			return err
		},
		"analyze_db_bottlenecks": func() error {
			_, err := f.AnalyzeDBBottlenecks(ctx, defaults(gen.AnalyzeDBBottlenecksInput{}))
			return err
		},
	}
	for name, call := range calls {
		clock = clock.Add(time.Minute) // the previous pull is stale
		srv.Reset()
		if err := call(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if n := srv.Total(); n < 1 || n > 2 {
			t.Errorf("%s made %d requests (%v), want 1 or 2", name, n, srv.Requests())
		}
		srv.Reset()
		if err := call(); err != nil {
			t.Fatalf("%s again: %v", name, err)
		}
		if n := srv.Total(); n != 0 {
			t.Errorf("%s repeated within a second made %d requests, want 0", name, n)
		}
	}
}
