package jaeger_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/runlens/runlens/internal/telemetry/engine"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/jaeger"
)

// fakeNow anchors the imitation's data.
var fakeNow = time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)

const fakeTrace = "0af7651916cd43dd8448eb211c80319c"

// oneTrace is a trace of n spans of service api: a root and n-1 children, the root failing.
func oneTrace(n int) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "api")
	spans := rs.ScopeSpans().AppendEmpty().Spans()
	var tid pcommon.TraceID
	copy(tid[:], mustHex(fakeTrace))
	start := fakeNow.Add(-time.Minute)
	for i := range n {
		sp := spans.AppendEmpty()
		sp.SetTraceID(tid)
		sp.SetSpanID(pcommon.SpanID{0, 0, 0, 0, byte(i >> 24), byte(i >> 16), byte(i >> 8), byte(i) + 1})
		sp.SetName(fmt.Sprintf("op %d", i%10))
		if i == 0 {
			sp.SetKind(ptrace.SpanKindServer)
			sp.Status().SetCode(ptrace.StatusCodeError)
			sp.Status().SetMessage("boom")
		} else {
			sp.SetParentSpanID(pcommon.SpanID{0, 0, 0, 0, 0, 0, 0, 1})
		}
		sp.SetStartTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Duration(i) * time.Microsecond)))
		sp.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Duration(i)*time.Microsecond + time.Millisecond)))
		sp.Attributes().PutInt("http.response.status_code", 500)
	}
	return td
}

func mustHex(s string) []byte {
	out := make([]byte, len(s)/2)
	for i := range out {
		fmt.Sscanf(s[2*i:2*i+2], "%02x", &out[i])
	}
	return out
}

// gatewayJSON is the api_v3 gateway's answer for td.
func gatewayJSON(td ptrace.Traces) string {
	var m ptrace.JSONMarshaler
	b, err := m.MarshalTraces(td)
	if err != nil {
		panic(err)
	}
	return `{"result":` + string(b) + `}`
}

// fake imitates the query API; its answer for traces is whatever the current mode says, and
// it answers correctly again as soon as the mode is "ok".
type fake struct {
	mode    atomic.Value // string
	release chan struct{}
}

func newFake(t *testing.T) (*fake, *httptest.Server) {
	f := &fake{release: make(chan struct{})}
	f.mode.Store("ok")
	srv := httptest.NewServer(f)
	t.Cleanup(func() { close(f.release); srv.Close() })
	return f, srv
}

func (f *fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	mode := f.mode.Load().(string)
	if r.URL.Path == "/api/v3/services" && mode != "html" {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"services":["api"]}`)
		return
	}
	switch mode {
	case "ok":
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, gatewayJSON(oneTrace(3)))
	case "html":
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><html><body><form action="/login">Sign in</form></body></html>`)
	case "truncated":
		w.Header().Set("Content-Type", "application/json")
		full := gatewayJSON(oneTrace(3))
		fmt.Fprint(w, full[:len(full)/2])
	case "huge":
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"result":{"resourceSpans":[`)
		chunk := strings.Repeat(" ", 1<<16)
		for range (10 << 20) / len(chunk) {
			if _, err := fmt.Fprint(w, chunk); err != nil {
				return
			}
		}
		fmt.Fprint(w, `]}}`)
	case "slow":
		select { // hold the answer until the client gives up or the test ends
		case <-r.Context().Done():
		case <-f.release:
		}
	case "500":
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprint(w, `{"error":{"httpCode":500,"message":"storage exploded"}}`)
	case "base64":
		w.Header().Set("Content-Type", "application/json")
		j := gatewayJSON(oneTrace(1))
		j = strings.Replace(j, `"traceId":"`+fakeTrace+`"`, `"traceId":"CvdlGRbNQ92ESOshHIAxnA=="`, 1)
		fmt.Fprint(w, j)
	case "notfound-html":
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `<html>404 page not found</html>`)
	case "50k":
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, gatewayJSON(oneTrace(50_000)))
	}
}

// Every bad answer is a clear error or a bounded, honest answer, and the backend answers
// correctly again once Jaeger does.
func TestBadAnswersGiveAClearErrorOrAnHonestAnswerAndTheBackendKeepsServing(t *testing.T) {
	w := telemetry.Window{StartMs: fakeNow.Add(-time.Hour).UnixMilli(), EndMs: fakeNow.UnixMilli()}
	tests := []struct {
		name string
		mode string
		// wantErr is a substring of the error; empty when the answer must succeed.
		wantErr string
		// check inspects a successful answer.
		check func(t *testing.T, e *engine.Engine)
		// big lifts the body limit to its default and the timeout to a minute.
		big bool
	}{
		{name: "an HTML login page is not taken for data", mode: "html", wantErr: "text/html, not JSON"},
		{name: "truncated JSON is a decode error", mode: "truncated", wantErr: "decode jaeger traces"},
		{name: "a 500 says so with Jaeger's message", mode: "500", wantErr: "answered 500: storage exploded"},
		{name: "ids in base64 are refused rather than misread", mode: "base64", wantErr: "decode jaeger traces"},
		{name: "a 404 that is not Jaeger's is not taken for no traces", mode: "notfound-html", wantErr: "not the Jaeger /api/v3 query API"},
		{name: "a slow answer times out as the source not answering", mode: "slow", wantErr: "timed out"},
		{
			name: "a 10 MB answer is not read past the limit and the search says it is limited", mode: "huge",
			check: func(t *testing.T, e *engine.Engine) {
				st, err := e.Status(context.Background(), telemetry.StatusQuery{Window: w})
				if err != nil {
					t.Fatal(err)
				}
				if !st.Scan.Limited || st.Spans != 0 {
					t.Errorf("Status = %d spans, limited %v; want 0 spans and limited", st.Spans, st.Scan.Limited)
				}
			},
		},
		{
			name: "a trace of 50,000 spans is cut at the run's span limit and says so", mode: "50k", big: true,
			check: func(t *testing.T, e *engine.Engine) {
				run, err := e.Run(context.Background(), telemetry.RunQuery{ID: fakeTrace})
				if err != nil {
					t.Fatal(err)
				}
				if !run.Limited || len(run.Spans) != telemetry.DefaultLimits().MaxRunSpans {
					t.Errorf("Run = %d spans, limited %v; want %d and limited", len(run.Spans), run.Limited, telemetry.DefaultLimits().MaxRunSpans)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, srv := newFake(t)
			// Only the slow answer meets the short timeout; the others must not, however loaded
			// the machine.
			o := jaeger.Options{Timeout: 30 * time.Second, MaxBodyBytes: 1 << 20, MaxRequests: 16, CacheTTL: -1}
			if tt.mode == "slow" {
				o.Timeout = 300 * time.Millisecond
			}
			if tt.big { // the default body limit; a timeout a loaded machine under -race meets
				o.Timeout, o.MaxBodyBytes = time.Minute, 0
			}
			b, err := jaeger.New(srv.URL, o)
			if err != nil {
				t.Fatal(err)
			}
			e := engine.New(b, nil)
			f.mode.Store(tt.mode)
			if tt.check != nil {
				tt.check(t, e)
			} else {
				_, err := e.Status(context.Background(), telemetry.StatusQuery{Window: w})
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Status error = %v, want one containing %q", err, tt.wantErr)
				}
				if !errors.Is(err, telemetry.ErrUnreachable) {
					t.Errorf("Status error = %v, want it to be ErrUnreachable (a tool error, not an internal one)", err)
				}
			}
			f.mode.Store("ok")
			st, err := e.Status(context.Background(), telemetry.StatusQuery{Window: w})
			if err != nil {
				t.Fatalf("after the bad answer, Status: %v", err)
			}
			if st.Spans != 3 || st.Errors != 1 {
				t.Errorf("after the bad answer, Status = %d spans, %d errors; want 3 and 1", st.Spans, st.Errors)
			}
		})
	}
}

// A huge single trace past the body limit is an error naming the limit, not a short trace.
func TestATraceLargerThanTheBodyLimitIsAnError(t *testing.T) {
	f, srv := newFake(t)
	f.mode.Store("huge")
	b, err := jaeger.New(srv.URL, jaeger.Options{MaxBodyBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.ScanSpans(context.Background(), telemetry.SpanScan{TraceIDs: []string{fakeTrace}})
	if err == nil || !strings.Contains(err.Error(), "answer too large") {
		t.Fatalf("ScanSpans error = %v, want answer too large", err)
	}
}

// Jaeger answers a search that found nothing with a 404 of its own; that is no traces.
func TestJaegersOwn404IsNoTraces(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/v3/services" {
			fmt.Fprint(w, `{"services":["api"]}`)
			return
		}
		http.Error(w, `{"error":{"httpCode":404,"message":"No traces found"}}`, http.StatusNotFound)
	}))
	defer srv.Close()
	b, err := jaeger.New(srv.URL, jaeger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	batch, err := b.ScanSpans(context.Background(), telemetry.SpanScan{Window: telemetry.Window{StartMs: 1, EndMs: 2}})
	if err != nil || len(batch.Spans) != 0 || batch.Limited {
		t.Errorf("ScanSpans = %+v, %v; want no spans, no error", batch, err)
	}
}
