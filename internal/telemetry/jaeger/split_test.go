package jaeger_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/jaeger"
)

// searchFake answers searches as Jaeger's in-memory storage does: the traces with a span of
// the service starting in [start_time_min, start_time_max], at most num_traces of them, and
// its own 404 when there are none.
func searchFake(t *testing.T, traces int, requests *atomic.Int64) *httptest.Server {
	start := fakeNow.Add(-time.Hour)
	at := func(i int) time.Time { return start.Add(time.Duration(i) * time.Minute) }
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if r.URL.Path == "/api/v3/services" {
			fmt.Fprint(w, `{"services":["api"]}`)
			return
		}
		q := r.URL.Query()
		lo, err1 := time.Parse(time.RFC3339Nano, q.Get("query.start_time_min"))
		hi, err2 := time.Parse(time.RFC3339Nano, q.Get("query.start_time_max"))
		n, err3 := strconv.Atoi(q.Get("query.num_traces"))
		if err1 != nil || err2 != nil || err3 != nil || n <= 0 || q.Get("query.service_name") == "" {
			http.Error(w, `{"error":{"httpCode":400,"message":"bad query"}}`, http.StatusBadRequest)
			return
		}
		td := ptrace.NewTraces()
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", "api")
		spans := rs.ScopeSpans().AppendEmpty().Spans()
		found := 0
		for i := traces - 1; i >= 0 && found < n; i-- {
			if at(i).Before(lo) || at(i).After(hi) {
				continue
			}
			found++
			sp := spans.AppendEmpty()
			sp.SetTraceID(pcommon.TraceID{15: byte(i), 14: byte(i >> 8), 0: 1})
			sp.SetSpanID(pcommon.SpanID{7: byte(i), 6: byte(i >> 8), 0: 1})
			sp.SetName("GET /")
			sp.SetKind(ptrace.SpanKindServer)
			sp.SetStartTimestamp(pcommon.NewTimestampFromTime(at(i)))
			sp.SetEndTimestamp(pcommon.NewTimestampFromTime(at(i).Add(time.Millisecond)))
		}
		if found == 0 {
			http.Error(w, `{"error":{"httpCode":404,"message":"No traces found"}}`, http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, gatewayJSON(td))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestASearchThatComesBackFullIsSplitUntilEveryTraceIsRead(t *testing.T) {
	var requests atomic.Int64
	srv := searchFake(t, 50, &requests)
	tests := []struct {
		name        string
		perSearch   int
		maxRequests int
		wantSpans   int
		wantLimited bool
	}{
		{name: "a search with room for every trace is one request", perSearch: 100, wantSpans: 50},
		{name: "searches of four traces split until all fifty are read", perSearch: 4, wantSpans: 50},
		{name: "a budget too small for the splits is limited and keeps what it read", perSearch: 4, maxRequests: 4, wantLimited: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			requests.Store(0)
			b, err := jaeger.New(srv.URL, jaeger.Options{TracesPerSearch: tt.perSearch, MaxRequests: tt.maxRequests})
			if err != nil {
				t.Fatal(err)
			}
			batch, err := b.ScanSpans(context.Background(), telemetry.SpanScan{Window: telemetry.Window{StartMs: fakeNow.Add(-2 * time.Hour).UnixMilli(), EndMs: fakeNow.UnixMilli()}, Service: "api"})
			if err != nil {
				t.Fatal(err)
			}
			if batch.Limited != tt.wantLimited {
				t.Errorf("Limited = %v, want %v", batch.Limited, tt.wantLimited)
			}
			if tt.wantLimited {
				if len(batch.Spans) == 0 || len(batch.Spans) >= 50 {
					t.Errorf("%d spans, want some but not all", len(batch.Spans))
				}
				if got := requests.Load(); got > int64(tt.maxRequests) {
					t.Errorf("%d requests, want at most the budget %d", got, tt.maxRequests)
				}
				return
			}
			if len(batch.Spans) != tt.wantSpans || batch.Matched != int64(tt.wantSpans) {
				t.Errorf("%d spans (matched %d), want %d", len(batch.Spans), batch.Matched, tt.wantSpans)
			}
			if tt.perSearch >= 50 && requests.Load() != 1 {
				t.Errorf("%d requests, want 1", requests.Load())
			}
		})
	}
}

// The engine reads the traces a window scan has just returned from the cache, not again.
func TestTracesAWindowScanReturnedAreNotFetchedAgain(t *testing.T) {
	var requests atomic.Int64
	srv := searchFake(t, 10, &requests)
	b, err := jaeger.New(srv.URL, jaeger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	batch, err := b.ScanSpans(ctx, telemetry.SpanScan{Window: telemetry.Window{StartMs: fakeNow.Add(-2 * time.Hour).UnixMilli(), EndMs: fakeNow.UnixMilli()}})
	if err != nil || len(batch.Spans) != 10 {
		t.Fatalf("window scan = %d spans, %v; want 10", len(batch.Spans), err)
	}
	before := requests.Load()
	var ids []string
	for _, s := range batch.Spans {
		ids = append(ids, s.TraceID)
	}
	again, err := b.ScanSpans(ctx, telemetry.SpanScan{TraceIDs: ids})
	if err != nil || len(again.Spans) != 10 {
		t.Fatalf("trace scan = %d spans, %v; want 10", len(again.Spans), err)
	}
	if n := requests.Load() - before; n != 0 {
		t.Errorf("the trace scan made %d requests, want 0", n)
	}
}
