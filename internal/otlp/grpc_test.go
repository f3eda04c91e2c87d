package otlp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding/gzip"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/runlens/runlens/internal/telemetry/store"
)

// exportTraces sends td over cc and returns the response and the call's error.
func exportTraces(t testing.TB, cc *grpc.ClientConn, td ptrace.Traces, opts ...grpc.CallOption) (ptraceotlp.ExportResponse, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return ptraceotlp.NewGRPCClient(cc).Export(ctx, ptraceotlp.NewExportRequestFromTraces(td), opts...)
}

// The gRPC receiver stores traces and logs, answers only after the commit, and reports spans
// with an empty id as a partial success, as over HTTP.
func TestGRPCReceiverStoresTracesAndLogs(t *testing.T) {
	_, st := startReceiver(t, Options{})
	addr, _ := serveGRPC(t, st, Options{})
	cc := dialGRPC(t, addr)

	td := makeTraces("grpc-app", 1, 0, 4)
	td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(2).SetSpanID(pcommon.NewSpanIDEmpty())
	resp, err := exportTraces(t, cc, td)
	if err != nil {
		t.Fatalf("export traces: %v", err)
	}
	if ps := resp.PartialSuccess(); ps.RejectedSpans() != 1 || !strings.Contains(ps.ErrorMessage(), "span id") {
		t.Errorf("partial success %d %q, want 1 span rejected with a reason", ps.RejectedSpans(), ps.ErrorMessage())
	}
	// The answer came after the commit: the rows are visible to a reader at once.
	if n := countRows(t, st, "otel_traces"); n != 3 {
		t.Errorf("stored %d spans, want 3", n)
	}

	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", "grpc-app")
	lr := rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	lr.Body().SetStr("payment declined")
	lr.SetSeverityNumber(plog.SeverityNumberError)
	lr.SetTraceID(testTraceID(1))
	lr.SetSpanID(testSpanID(0))
	lresp, err := plogotlp.NewGRPCClient(cc).Export(context.Background(), plogotlp.NewExportRequestFromLogs(ld))
	if err != nil {
		t.Fatalf("export logs: %v", err)
	}
	if lresp.PartialSuccess().RejectedLogRecords() != 0 {
		t.Errorf("rejected %d log records", lresp.PartialSuccess().RejectedLogRecords())
	}
	var body, traceID string
	if err := st.DB().QueryRow(`SELECT Body, TraceId FROM otel_logs`).Scan(&body, &traceID); err != nil {
		t.Fatal(err)
	}
	if body != "payment declined" || traceID != testTraceID(1).String() {
		t.Errorf("stored log %q with trace %q", body, traceID)
	}
}

// A gzip-compressed call decodes: exporters compress gRPC with gzip.
func TestGRPCReceiverDecodesGzip(t *testing.T) {
	_, st := startReceiver(t, Options{})
	addr, _ := serveGRPC(t, st, Options{})
	if _, err := exportTraces(t, dialGRPC(t, addr), makeTraces("a", 1, 0, 20), grpc.UseCompressor(gzip.Name)); err != nil {
		t.Fatalf("gzip export: %v", err)
	}
	if n := countRows(t, st, "otel_traces"); n != 20 {
		t.Errorf("stored %d spans, want 20", n)
	}
}

// bigTraces is one span whose attribute holds n bytes, so its message is a little over n.
func bigTraces(n int) ptrace.Traces {
	td := makeTraces("big", 7, 0, 1)
	td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes().PutStr("blob", strings.Repeat("x", n))
	return td
}

// A message over the 16 MiB default, as sent or once inflated, is RESOURCE_EXHAUSTED with the
// sizes in its message (without RetryInfo, so exporters do not send it again); nothing of it is
// stored and the receiver keeps serving.
func TestGRPCReceiverRefusesAMessageOverTheLimitAndKeepsServing(t *testing.T) {
	_, st := startReceiver(t, Options{})
	addr, _ := serveGRPC(t, st, Options{})
	cc := dialGRPC(t, addr)
	cases := []struct {
		name string
		opts []grpc.CallOption
	}{
		{name: "a 17 MiB message is refused"},
		{name: "a gzip message inflating to 17 MiB is refused", opts: []grpc.CallOption{grpc.UseCompressor(gzip.Name)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := exportTraces(t, cc, bigTraces(17<<20), c.opts...)
			st2, _ := status.FromError(err)
			if st2.Code() != codes.ResourceExhausted || !strings.Contains(st2.Message(), "larger than max") ||
				!strings.Contains(st2.Message(), fmt.Sprint(DefaultMaxBodyBytes)) {
				t.Fatalf("status %v %q, want RESOURCE_EXHAUSTED naming the %d byte limit", st2.Code(), st2.Message(), DefaultMaxBodyBytes)
			}
			if retryInfo(err) != nil {
				t.Errorf("a size refusal carries RetryInfo, so exporters would send it again")
			}
			if n := countRows(t, st, "otel_traces"); n != 0 {
				t.Errorf("stored %d spans of the refused message", n)
			}
		})
	}
	if _, err := exportTraces(t, cc, makeTraces("a", 1, 0, 3)); err != nil {
		t.Fatalf("a good export after the refused ones: %v", err)
	}
	if _, err := exportTraces(t, cc, bigTraces(15<<20)); err != nil {
		t.Fatalf("a 15 MiB message, within the limit: %v", err)
	}
	if n := countRows(t, st, "otel_traces"); n != 4 {
		t.Errorf("stored %d spans, want 4", n)
	}
}

// The :authority pseudo-header passes the same Host rules as HTTP: a name a DNS-rebinding page
// would bring is refused with PERMISSION_DENIED before the message is read, and nothing is
// stored; loopback names and configured names are accepted.
func TestGRPCReceiverAppliesTheHostRulesToAuthority(t *testing.T) {
	tests := []struct {
		name      string
		authority string // "" keeps the dialled 127.0.0.1:port
		origin    string
		allowed   []string
		want      codes.Code
	}{
		{name: "a foreign authority is refused", authority: "attacker.example", want: codes.PermissionDenied},
		{name: "a foreign authority with a port is refused", authority: "attacker.example:4317", want: codes.PermissionDenied},
		{name: "a name that only starts like a loopback address is refused", authority: "127.0.0.1.attacker.example:4317", want: codes.PermissionDenied},
		{name: "a configured name does not let other names in", authority: "other.internal", allowed: []string{"otel.internal"}, want: codes.PermissionDenied},
		{name: "a foreign origin header is refused", origin: "http://attacker.example", want: codes.PermissionDenied},
		{name: "the dialled loopback address is accepted", want: codes.OK},
		{name: "localhost with a port is accepted", authority: "localhost:4317", want: codes.OK},
		{name: "any address of 127.0.0.0/8 is accepted", authority: "127.1.2.3:9", want: codes.OK},
		{name: "IPv6 loopback is accepted", authority: "[::1]:4317", want: codes.OK},
		{name: "a configured name is accepted", authority: "OTEL.internal:4317", allowed: []string{"otel.internal"}, want: codes.OK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, st := startReceiver(t, Options{})
			addr, _ := serveGRPC(t, st, Options{AllowedHosts: tt.allowed})
			var opts []grpc.DialOption
			if tt.authority != "" {
				opts = append(opts, grpc.WithAuthority(tt.authority))
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if tt.origin != "" {
				ctx = metadata.AppendToOutgoingContext(ctx, "origin", tt.origin)
			}
			_, err := ptraceotlp.NewGRPCClient(dialGRPC(t, addr, opts...)).Export(ctx, ptraceotlp.NewExportRequestFromTraces(makeTraces("a", 1, 0, 2)))
			if got := status.Code(err); got != tt.want {
				t.Fatalf("status %v (%v), want %v", got, err, tt.want)
			}
			wantRows := 2
			if tt.want != codes.OK {
				wantRows = 0
				if msg := status.Convert(err).Message(); !strings.Contains(msg, "refused") {
					t.Errorf("message %q does not say why", msg)
				}
			}
			if n := countRows(t, st, "otel_traces"); n != wantRows {
				t.Errorf("stored %d spans, want %d", n, wantRows)
			}
		})
	}
}

// retryInfo returns the RetryInfo detail of a gRPC error, nil when it has none.
func retryInfo(err error) *errdetails.RetryInfo {
	for _, d := range status.Convert(err).Details() {
		if ri, ok := d.(*errdetails.RetryInfo); ok {
			return ri
		}
	}
	return nil
}

// busySink refuses every batch as the store does when its writer is behind.
type busySink struct{}

func (busySink) IngestTraces(context.Context, ptrace.Traces) (int, int, error) {
	return 0, 0, fmt.Errorf("ingest traces: %w", store.ErrBusy)
}

func (busySink) IngestLogs(context.Context, plog.Logs) (int, int, error) {
	return 0, 0, fmt.Errorf("ingest logs: %w", store.ErrBusy)
}

// Backpressure as the OTLP specification asks: a store that cannot keep up is answered 429
// with Retry-After over HTTP and UNAVAILABLE with a RetryInfo delay over gRPC; a store that
// fails is 503 / UNAVAILABLE, also with a delay; no answer leaks the store's error text.
func TestReceiversAnswerBackpressureWithARetryDelay(t *testing.T) {
	cases := []struct {
		name     string
		sink     Sink
		wantHTTP int
		wantText string
	}{
		{name: "a busy store asks senders to retry later", sink: busySink{}, wantHTTP: http.StatusTooManyRequests, wantText: "retry after"},
		{name: "a failing store asks senders to retry later", sink: &failingSink{}, wantHTTP: http.StatusServiceUnavailable, wantText: "retry later"},
	}
	for _, c := range cases {
		t.Run(c.name+" over HTTP", func(t *testing.T) {
			url := serveSink(t, c.sink, Options{})
			for _, path := range []string{TracesPath, LogsPath} {
				body := protoTraces(t, makeTraces("a", 1, 0, 2))
				if path == LogsPath {
					body, _ = (&plog.ProtoMarshaler{}).MarshalLogs(makeLogs(1))
				}
				resp, text := request(t, http.MethodPost, url+path, "", map[string]string{"Content-Type": ctProto}, body)
				if resp.StatusCode != c.wantHTTP || resp.Header.Get("Retry-After") != "1" {
					t.Errorf("%s: status %d, Retry-After %q; want %d with Retry-After 1", path, resp.StatusCode, resp.Header.Get("Retry-After"), c.wantHTTP)
				}
				if !strings.Contains(text, c.wantText) || strings.Contains(text, "secret") {
					t.Errorf("%s: body %q", path, text)
				}
			}
		})
		t.Run(c.name+" over gRPC", func(t *testing.T) {
			addr, _ := serveGRPC(t, c.sink, Options{})
			cc := dialGRPC(t, addr)
			_, terr := exportTraces(t, cc, makeTraces("a", 1, 0, 2))
			_, lerr := plogotlp.NewGRPCClient(cc).Export(context.Background(), plogotlp.NewExportRequestFromLogs(makeLogs(1)))
			for _, err := range []error{terr, lerr} {
				st := status.Convert(err)
				ri := retryInfo(err)
				if st.Code() != codes.Unavailable || ri == nil || ri.GetRetryDelay().AsDuration() < time.Second {
					t.Errorf("status %v %q, RetryInfo %v; want UNAVAILABLE with a delay of at least 1 s", st.Code(), st.Message(), ri)
				}
				if !strings.Contains(st.Message(), c.wantText) || strings.Contains(st.Message(), "secret") {
					t.Errorf("message %q", st.Message())
				}
			}
		})
	}
}

// makeLogs builds n log records of one service.
func makeLogs(n int) plog.Logs {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", "a")
	records := rl.ScopeLogs().AppendEmpty().LogRecords()
	for i := range n {
		records.AppendEmpty().Body().SetStr(fmt.Sprintf("record %d", i))
	}
	return ld
}

// blockingSink holds every call until released, counting the calls that reached it.
type blockingSink struct {
	mu      sync.Mutex
	reached int
	arrived chan struct{}
	release chan struct{}
}

func (b *blockingSink) IngestTraces(ctx context.Context, td ptrace.Traces) (int, int, error) {
	b.mu.Lock()
	b.reached++
	b.mu.Unlock()
	b.arrived <- struct{}{}
	<-b.release
	return td.SpanCount(), 0, nil
}

func (b *blockingSink) IngestLogs(context.Context, plog.Logs) (int, int, error) { return 0, 0, nil }

// Calls beyond MaxConcurrent are refused before their message is read, with UNAVAILABLE and a
// RetryInfo delay, instead of piling decoded batches up in memory; the slot is given back when
// a call ends, so the receiver accepts calls again.
func TestGRPCReceiverRefusesCallsBeyondMaxConcurrentWithRetryInfo(t *testing.T) {
	sink := &blockingSink{arrived: make(chan struct{}, 4), release: make(chan struct{})}
	addr, _ := serveGRPC(t, sink, Options{MaxConcurrent: 2})
	cc := dialGRPC(t, addr)
	held := make(chan error, 2)
	for range 2 {
		go func() {
			_, err := exportTraces(t, cc, makeTraces("a", 1, 0, 1))
			held <- err
		}()
		<-sink.arrived
	}
	_, err := exportTraces(t, cc, makeTraces("a", 2, 0, 1))
	if ri := retryInfo(err); status.Code(err) != codes.Unavailable || ri == nil || !strings.Contains(status.Convert(err).Message(), "in progress") {
		t.Fatalf("a third call: %v (RetryInfo %v), want UNAVAILABLE with RetryInfo", err, ri)
	}
	close(sink.release)
	for range 2 {
		if err := <-held; err != nil {
			t.Errorf("a held call: %v", err)
		}
	}
	// The slots come back when the calls end (asynchronously, after the answer is sent).
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := exportTraces(t, cc, makeTraces("a", 3, 0, 1))
		if err == nil {
			break
		}
		if status.Code(err) != codes.Unavailable || time.Now().After(deadline) {
			t.Fatalf("a call after the others ended: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	sink.mu.Lock()
	defer sink.mu.Unlock()
	if sink.reached != 3 {
		t.Errorf("%d calls reached the sink, want 3 (the refused one must not)", sink.reached)
	}
}

// makeMetrics builds a gauge and a sum with points data points in all.
func makeMetrics(points int) pmetric.Metrics {
	md := pmetric.NewMetrics()
	sm := md.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty()
	gauge := sm.Metrics().AppendEmpty()
	gauge.SetName("queue.depth")
	sum := sm.Metrics().AppendEmpty()
	sum.SetName("requests")
	sum.SetEmptySum().SetIsMonotonic(true)
	g := gauge.SetEmptyGauge()
	for i := range points {
		if i%2 == 0 {
			g.DataPoints().AppendEmpty().SetIntValue(int64(i))
		} else {
			sum.Sum().DataPoints().AppendEmpty().SetIntValue(int64(i))
		}
	}
	return md
}

// Metrics are dropped, and said to be: over both protocols and both encodings the answer is a
// partial success rejecting every data point with a message saying runlens keeps traces and
// logs only, nothing is stored, and the shared counter (which the identity endpoint publishes)
// adds them up.
func TestReceiversRejectMetricsAsPartialSuccessAndCountThem(t *testing.T) {
	stats := &Stats{}
	url, st := startReceiver(t, Options{Stats: stats, StoreID: "test-store"})
	addr, _ := serveGRPC(t, st, Options{Stats: stats})
	md := makeMetrics(5)
	protoBody, _ := pmetricotlp.NewExportRequestFromMetrics(md).MarshalProto()
	jsonBody, _ := pmetricotlp.NewExportRequestFromMetrics(md).MarshalJSON()
	send := []struct {
		name string
		do   func(t *testing.T) pmetricotlp.ExportResponse
	}{
		{"over HTTP in protobuf", func(t *testing.T) pmetricotlp.ExportResponse {
			status, body, _ := post(t, url+MetricsPath, ctProto, "", protoBody)
			resp := pmetricotlp.NewExportResponse()
			if err := resp.UnmarshalProto(body); status != http.StatusOK || err != nil {
				t.Fatalf("status %d, response %v", status, err)
			}
			return resp
		}},
		{"over HTTP in JSON", func(t *testing.T) pmetricotlp.ExportResponse {
			status, body, _ := post(t, url+MetricsPath, ctJSON, "", jsonBody)
			resp := pmetricotlp.NewExportResponse()
			if err := resp.UnmarshalJSON(body); status != http.StatusOK || err != nil {
				t.Fatalf("status %d, response %s (%v)", status, body, err)
			}
			return resp
		}},
		{"over gRPC", func(t *testing.T) pmetricotlp.ExportResponse {
			resp, err := pmetricotlp.NewGRPCClient(dialGRPC(t, addr)).Export(context.Background(), pmetricotlp.NewExportRequestFromMetrics(md))
			if err != nil {
				t.Fatal(err)
			}
			return resp
		}},
	}
	for i, s := range send {
		t.Run(s.name, func(t *testing.T) {
			ps := s.do(t).PartialSuccess()
			if ps.RejectedDataPoints() != 5 || !strings.Contains(ps.ErrorMessage(), "runlens keeps traces and logs only") {
				t.Errorf("partial success %d %q, want 5 rejected data points and why", ps.RejectedDataPoints(), ps.ErrorMessage())
			}
			if got := stats.MetricPointsDropped(); got != int64(5*(i+1)) {
				t.Errorf("counter %d, want %d", got, 5*(i+1))
			}
		})
	}
	id, err := Probe(context.Background(), strings.TrimPrefix(url, "http://"))
	if err != nil || id.MetricPointsDropped != 15 {
		t.Errorf("identity %+v (%v), want 15 metric points dropped", id, err)
	}
	if n := countRows(t, st, "otel_traces") + countRows(t, st, "otel_logs"); n != 0 {
		t.Errorf("metrics stored %d rows", n)
	}
	// An empty export rejects nothing and says nothing.
	status, body, _ := post(t, url+MetricsPath, ctJSON, "", []byte(`{"resourceMetrics":[]}`))
	resp := pmetricotlp.NewExportResponse()
	if err := resp.UnmarshalJSON(body); status != http.StatusOK || err != nil || resp.PartialSuccess().RejectedDataPoints() != 0 || resp.PartialSuccess().ErrorMessage() != "" {
		t.Errorf("an empty export: status %d, body %s (%v)", status, body, err)
	}
	// Undecodable metrics are a bad request, as undecodable traces are.
	if status, _, _ := post(t, url+MetricsPath, ctProto, "", []byte{0x0a, 0xff}); status != http.StatusBadRequest {
		t.Errorf("undecodable metrics: status %d, want 400", status)
	}
}

// The errors a Sink may return reach the sender as their gRPC codes, never as their text.
func TestGRPCSinkErrorsBecomeCodesWithoutTheirText(t *testing.T) {
	g := &grpcReceiver{log: slog.New(slog.DiscardHandler)}
	for _, err := range []error{errors.New("disk I/O error at /secret/path"), fmt.Errorf("x: %w", store.ErrBusy)} {
		if msg := status.Convert(g.sinkError("traces", err)).Message(); strings.Contains(msg, "secret") || !strings.Contains(msg, "traces not stored") {
			t.Errorf("message %q", msg)
		}
	}
	if code := status.Code(g.sinkError("traces", context.Canceled)); code != codes.Canceled {
		t.Errorf("a cancelled call: %v, want CANCELED", code)
	}
}
