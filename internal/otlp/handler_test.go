package otlp

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

const (
	ctProto = "application/x-protobuf"
	ctJSON  = "application/json"
)

// rawJSONTraces is OTLP/JSON as an exporter writes it: hex ids, enum numbers, string nanos.
const rawJSONTraces = `{"resourceSpans":[{"resource":{"attributes":[
 {"key":"service.name","value":{"stringValue":"billing"}}]},
 "scopeSpans":[{"scope":{"name":"manual"},"spans":[{
  "traceId":"5b8efff798038103d269b633813fc60c","spanId":"eee19b7ec3c1b174",
  "parentSpanId":"eee19b7ec3c1b173","name":"charge","kind":3,
  "startTimeUnixNano":"1544712660000000000","endTimeUnixNano":"1544712661000000000",
  "attributes":[{"key":"amount","value":{"intValue":"42"}}],
  "status":{"code":2,"message":"declined"}}]}]}]}`

func TestReceiverStoresRawJSONWithHexIDs(t *testing.T) {
	url, st := startReceiver(t, Options{})
	status, body, ct := post(t, url+TracesPath, ctJSON, "", []byte(rawJSONTraces))
	if status != http.StatusOK || ct != ctJSON {
		t.Fatalf("status %d, content type %q, body %s", status, ct, body)
	}
	resp := ptraceotlp.NewExportResponse()
	if err := resp.UnmarshalJSON(body); err != nil {
		t.Fatalf("response %s is not an ExportTraceServiceResponse: %v", body, err)
	}
	if resp.PartialSuccess().RejectedSpans() != 0 {
		t.Errorf("rejected %d spans, want 0", resp.PartialSuccess().RejectedSpans())
	}
	var traceID, spanID, parent, kind, statusCode, attrs string
	var start, duration int64
	err := st.DB().QueryRow(`SELECT TraceId, SpanId, ParentSpanId, SpanKind, StatusCode, SpanAttributes,
		Timestamp, Duration FROM otel_traces`).Scan(&traceID, &spanID, &parent, &kind, &statusCode, &attrs, &start, &duration)
	if err != nil {
		t.Fatal(err)
	}
	got := []string{traceID, spanID, parent, kind, statusCode, attrs}
	want := []string{"5b8efff798038103d269b633813fc60c", "eee19b7ec3c1b174", "eee19b7ec3c1b173", "Client", "Error", `{"amount":"42"}`}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("column %d = %q, want %q", i, got[i], want[i])
		}
	}
	if start != 1544712660000000000 || duration != 1e9 {
		t.Errorf("start %d, duration %d", start, duration)
	}
}

func TestReceiverStoresGzipProtobuf(t *testing.T) {
	url, st := startReceiver(t, Options{})
	status, body, ct := post(t, url+TracesPath, ctProto, "gzip", gzipBytes(t, protoTraces(t, makeTraces("a", 1, 0, 20))))
	if status != http.StatusOK || ct != ctProto {
		t.Fatalf("status %d, content type %q, body %q", status, ct, body)
	}
	resp := ptraceotlp.NewExportResponse()
	if err := resp.UnmarshalProto(body); err != nil {
		t.Fatalf("response is not an ExportTraceServiceResponse: %v", err)
	}
	if n := countRows(t, st, "otel_traces"); n != 20 {
		t.Errorf("stored %d spans, want 20", n)
	}
}

func TestReceiverStoresJSONLogs(t *testing.T) {
	url, st := startReceiver(t, Options{})
	doc := `{"resourceLogs":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"w"}}]},
	 "scopeLogs":[{"logRecords":[{"timeUnixNano":"1544712660300000000","severityNumber":17,
	 "severityText":"ERROR","body":{"stringValue":"failed"},
	 "traceId":"5b8efff798038103d269b633813fc60c","spanId":"eee19b7ec3c1b174"}]}]}]}`
	status, body, _ := post(t, url+LogsPath, ctJSON, "", []byte(doc))
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, body)
	}
	var traceID, spanID, msg string
	if err := st.DB().QueryRow(`SELECT TraceId, SpanId, Body FROM otel_logs`).Scan(&traceID, &spanID, &msg); err != nil {
		t.Fatal(err)
	}
	if traceID != "5b8efff798038103d269b633813fc60c" || spanID != "eee19b7ec3c1b174" || msg != "failed" {
		t.Errorf("stored %q %q %q", traceID, spanID, msg)
	}
}

func TestReceiverRefusesBadInputAndKeepsServing(t *testing.T) {
	good := protoTraces(t, makeTraces("a", 1, 0, 5))
	base64IDs := strings.Replace(strings.Replace(rawJSONTraces,
		`"5b8efff798038103d269b633813fc60c"`, `"W47/95gDgQPSabYzgT/GDA=="`, 1),
		`"eee19b7ec3c1b174"`, `"7uGbfsPBsXQ="`, 1)
	cases := []struct {
		name        string
		method      string
		path        string
		contentType string
		encoding    string
		body        []byte
		want        int
		wantMessage string
		chunked     bool // hide the length, so only the read limit can stop the body
	}{
		{name: "a truncated protobuf is a bad request", path: TracesPath, contentType: ctProto,
			body: good[:len(good)-7], want: http.StatusBadRequest, wantMessage: "protobuf"},
		{name: "JSON with base64 ids is a bad request", path: TracesPath, contentType: ctJSON,
			body: []byte(base64IDs), want: http.StatusBadRequest, wantMessage: "hex"},
		{name: "a wrong content type is unsupported", path: TracesPath, contentType: "text/plain",
			body: good, want: http.StatusUnsupportedMediaType},
		{name: "a 17 MiB body is too large", path: TracesPath, contentType: ctProto,
			body: bytes.Repeat([]byte{0}, 17<<20), want: http.StatusRequestEntityTooLarge},
		{name: "a gzip bomb is too large", path: TracesPath, contentType: ctProto, encoding: "gzip",
			body: gzipZeros(t, 32<<20), want: http.StatusRequestEntityTooLarge},
		{name: "a 17 MiB body sent without a length is too large", path: TracesPath, contentType: ctProto,
			body: bytes.Repeat([]byte{0}, 17<<20), chunked: true, want: http.StatusRequestEntityTooLarge},
		{name: "a body that is not gzip is a bad request", path: TracesPath, contentType: ctProto, encoding: "gzip",
			body: good, want: http.StatusBadRequest, wantMessage: "gzip"},
		{name: "an unknown content encoding is a bad request", path: TracesPath, contentType: ctProto, encoding: "br",
			body: good, want: http.StatusBadRequest, wantMessage: "encoding"},
		{name: "an empty body is a bad request", path: TracesPath, contentType: ctProto,
			body: nil, want: http.StatusBadRequest, wantMessage: "empty"},
		{name: "an empty JSON log body is a bad request", path: LogsPath, contentType: ctJSON,
			body: nil, want: http.StatusBadRequest, wantMessage: "empty"},
		{name: "malformed JSON logs are a bad request", path: LogsPath, contentType: ctJSON,
			body: []byte(`{"resourceLogs":[{`), want: http.StatusBadRequest},
		{name: "GET is not allowed", method: http.MethodGet, path: TracesPath, contentType: ctProto,
			want: http.StatusMethodNotAllowed},
		{name: "an unknown path is not found", path: "/v1/profiles", contentType: ctProto,
			body: good, want: http.StatusNotFound},
	}
	url, st := startReceiver(t, Options{})
	if status, body, _ := post(t, url+TracesPath, ctProto, "", good); status != http.StatusOK {
		t.Fatalf("seeding: status %d %s", status, body)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			method := c.method
			if method == "" {
				method = http.MethodPost
			}
			var body io.Reader = bytes.NewReader(c.body)
			if c.chunked {
				body = io.MultiReader(body) // not a type NewRequest can take a length from
			}
			req, err := http.NewRequest(method, url+c.path, body)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", c.contentType)
			if c.encoding != "" {
				req.Header.Set("Content-Encoding", c.encoding)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			msg := readAll(t, resp)
			if resp.StatusCode != c.want {
				t.Fatalf("status %d, want %d (%q)", resp.StatusCode, c.want, msg)
			}
			if c.wantMessage != "" && !strings.Contains(string(msg), c.wantMessage) {
				t.Errorf("message %q does not mention %q", msg, c.wantMessage)
			}
			// The receiver keeps serving, and what was stored before is still there.
			if status, body, _ := post(t, url+TracesPath, ctProto, "", protoTraces(t, makeTraces("a", 2, 100, 1))); status != http.StatusOK {
				t.Fatalf("a good request after the bad one: status %d %s", status, body)
			}
			var seeded int
			if err := st.DB().QueryRow("SELECT COUNT(*) FROM otel_traces WHERE TraceId = ?", testTraceID(1).String()).Scan(&seeded); err != nil || seeded != 5 {
				t.Errorf("%d of the 5 seeded spans remain (%v)", seeded, err)
			}
		})
	}
}

func TestReceiverErrorBodiesAreOTLPStatusMessages(t *testing.T) {
	url, _ := startReceiver(t, Options{})
	status, body, ct := post(t, url+TracesPath, ctJSON, "", []byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"zz"}]}]}]}`))
	if status != http.StatusBadRequest || ct != ctJSON {
		t.Fatalf("status %d, content type %q", status, ct)
	}
	var st struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal(body, &st); err != nil || st.Code != 3 || st.Message == "" {
		t.Errorf("body %s is not a google.rpc.Status with code 3 (%v)", body, err)
	}
	status, body, ct = post(t, url+TracesPath, ctProto, "", []byte{0x0a, 0xff})
	if status != http.StatusBadRequest || ct != ctProto || len(body) < 2 || body[0] != 0x08 || body[1] != 3 {
		t.Errorf("protobuf error: status %d, content type %q, body %x", status, ct, body)
	}
}

func TestReceiverAcceptsUnknownFields(t *testing.T) {
	// Protobuf: field 99 (varint) appended to the request is skipped by the wire rules.
	// JSON: an unknown key is skipped, as OTLP/JSON requires of receivers.
	proto := append(protoTraces(t, makeTraces("a", 1, 0, 3)), 0x98, 0x06, 0x01)
	json := strings.Replace(rawJSONTraces, `"name":"charge"`, `"name":"charge","futureField":{"x":[1,2]}`, 1)
	cases := []struct {
		name, contentType string
		body              []byte
		want              int
	}{
		{"an unknown protobuf field is ignored", ctProto, proto, 3},
		{"an unknown JSON key is ignored", ctJSON, []byte(json), 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			url, st := startReceiver(t, Options{})
			if status, body, _ := post(t, url+TracesPath, c.contentType, "", c.body); status != http.StatusOK {
				t.Fatalf("status %d: %s", status, body)
			}
			if n := countRows(t, st, "otel_traces"); n != c.want {
				t.Errorf("stored %d spans, want %d", n, c.want)
			}
		})
	}
}

func TestReceiverReportsRejectedSpansAsPartialSuccess(t *testing.T) {
	td := makeTraces("a", 1, 0, 4)
	td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(2).SetSpanID(pcommon.NewSpanIDEmpty())
	for _, ct := range []string{ctProto, ctJSON} {
		t.Run(ct, func(t *testing.T) {
			url, st := startReceiver(t, Options{})
			var body []byte
			if ct == ctJSON {
				body, _ = (&ptrace.JSONMarshaler{}).MarshalTraces(td)
			} else {
				body = protoTraces(t, td)
			}
			status, respBody, _ := post(t, url+TracesPath, ct, "", body)
			if status != http.StatusOK {
				t.Fatalf("status %d: %s", status, respBody)
			}
			resp := ptraceotlp.NewExportResponse()
			var err error
			if ct == ctJSON {
				err = resp.UnmarshalJSON(respBody)
			} else {
				err = resp.UnmarshalProto(respBody)
			}
			if err != nil {
				t.Fatal(err)
			}
			ps := resp.PartialSuccess()
			if ps.RejectedSpans() != 1 || !strings.Contains(ps.ErrorMessage(), "span id") {
				t.Errorf("partialSuccess = %d %q, want 1 rejected with a reason", ps.RejectedSpans(), ps.ErrorMessage())
			}
			if n := countRows(t, st, "otel_traces"); n != 3 {
				t.Errorf("stored %d spans, want 3", n)
			}
		})
	}
}

// failingSink fails every call, as a store that cannot commit does.
type failingSink struct{ calls atomic.Int32 }

func (f *failingSink) IngestTraces(context.Context, ptrace.Traces) (int, int, error) {
	f.calls.Add(1)
	return 0, 0, errors.New("disk I/O error at /secret/path")
}

func (f *failingSink) IngestLogs(context.Context, plog.Logs) (int, int, error) {
	f.calls.Add(1)
	return 0, 0, errors.New("disk I/O error at /secret/path")
}

func TestReceiverAnswers503WhenTheStoreFails(t *testing.T) {
	sink := &failingSink{}
	url := serveSink(t, sink, Options{})
	req, _ := http.NewRequest(http.MethodPost, url+TracesPath, bytes.NewReader(protoTraces(t, makeTraces("a", 1, 0, 2))))
	req.Header.Set("Content-Type", ctProto)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body := readAll(t, resp)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Errorf("status %d, Retry-After %q; want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if strings.Contains(string(body), "secret") {
		t.Errorf("the response leaks the store error: %q", body)
	}
	if sink.calls.Load() != 1 {
		t.Errorf("sink called %d times, want 1", sink.calls.Load())
	}
}

func TestReceiverAnswers503AndStoresNothingWhenTheStoreIsClosed(t *testing.T) {
	url, st := startReceiver(t, Options{})
	if status, _, _ := post(t, url+TracesPath, ctProto, "", protoTraces(t, makeTraces("a", 1, 0, 2))); status != http.StatusOK {
		t.Fatalf("status %d", status)
	}
	path := st.Path()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if status, _, _ := post(t, url+TracesPath, ctProto, "", protoTraces(t, makeTraces("a", 2, 10, 2))); status != http.StatusServiceUnavailable {
		t.Errorf("status %d, want 503", status)
	}
	ro, err := openReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if n := countRows(t, ro, "otel_traces"); n != 2 {
		t.Errorf("stored %d spans, want only the 2 acknowledged", n)
	}
}

func readAll(t testing.TB, resp *http.Response) []byte {
	t.Helper()
	defer resp.Body.Close()
	var b bytes.Buffer
	if _, err := b.ReadFrom(resp.Body); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// gzipZeros is a gzip bomb inflating to n zero bytes (n a multiple of 1 MiB): one compressed
// MiB repeated as consecutive gzip members, which a gzip reader inflates one after another.
func gzipZeros(t testing.TB, n int) []byte {
	t.Helper()
	member := gzipBytes(t, make([]byte, 1<<20))
	return bytes.Repeat(member, n>>20)
}

func gzipBytes(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
