package otlp

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/runlens/runlens/internal/telemetry/flatten"
)

// flattenSink turns batches into rows as the store does before writing them, and keeps
// nothing: the fuzzers exercise decoding and conversion, not SQLite.
type flattenSink struct{}

func (flattenSink) IngestTraces(_ context.Context, td ptrace.Traces) (int, int, error) {
	rows, rejected := flatten.Spans(td)
	return len(rows), rejected, nil
}

func (flattenSink) IngestLogs(_ context.Context, ld plog.Logs) (int, int, error) {
	return len(flatten.Logs(ld, time.Now())), 0, nil
}

// fuzzSeeds are real requests: traces and logs as exporters send them, with the shapes the
// receiver's tests use (a span with events and a deep attribute, partial rejections, log
// bodies of every kind).
func fuzzSeeds(f *testing.F) (protobuf, json [][]byte, logs []bool) {
	f.Helper()
	td := makeTraces("fuzz", 1, 0, 3)
	sp := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
	sp.Events().AppendEmpty().Attributes().PutStr("exception.message", "boom")
	sp.Links().AppendEmpty().SetTraceID(testTraceID(2))
	sp.Status().SetCode(ptrace.StatusCodeError)
	nestValue(sp.Attributes().PutEmpty("deep"), 10, "mixed")
	ld := makeLogs(2)
	lr := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(1)
	lr.SetTraceID(testTraceID(1))
	lr.Body().SetEmptyMap().PutInt("n", 7)
	for _, c := range []struct {
		logs bool
		pb   func() ([]byte, []byte, error)
	}{
		{false, func() ([]byte, []byte, error) { return traceBodies(td) }},
		{false, func() ([]byte, []byte, error) { return traceBodies(makeTraces("a", 2, 0, 1)) }},
		{true, func() ([]byte, []byte, error) { return logBodies(ld) }},
	} {
		p, j, err := c.pb()
		if err != nil {
			f.Fatal(err)
		}
		protobuf, json, logs = append(protobuf, p), append(json, j), append(logs, c.logs)
	}
	json = append(json, []byte(rawJSONTraces))
	logs = append(logs, false)
	protobuf = append(protobuf, nil)
	return protobuf, json, logs
}

// fuzzPost sends body to the handler as contentType and checks the receiver's promises: an
// answer the sender can act on (200, or 400/413 for bad input, never 500), in the request's
// encoding, within a second.
func fuzzPost(t *testing.T, h http.Handler, logs bool, contentType string, body []byte) {
	path := TracesPath
	if logs {
		path = LogsPath
	}
	req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
	req.Host = "127.0.0.1:4318"
	req.Header.Set("Content-Type", contentType)
	rec := httptest.NewRecorder()
	start := time.Now()
	h.ServeHTTP(rec, req)
	if took := time.Since(start); took > time.Second {
		t.Errorf("%d byte body answered after %s, want within a second", len(body), took)
	}
	switch rec.Code {
	case http.StatusOK, http.StatusBadRequest, http.StatusRequestEntityTooLarge:
	default:
		t.Fatalf("status %d for a %d byte body: %s", rec.Code, len(body), rec.Body.Bytes())
	}
	if ct := rec.Header().Get("Content-Type"); ct != contentType {
		t.Errorf("answered in %q, want %q", ct, contentType)
	}
}

// FuzzHTTPProtobuf posts arbitrary bytes as OTLP protobuf traces or logs.
func FuzzHTTPProtobuf(f *testing.F) {
	protobuf, _, logs := fuzzSeeds(f)
	for i, b := range protobuf {
		f.Add(logs[i], b)
	}
	f.Add(false, []byte{0x0a, 0xff})
	h := NewHandler(flattenSink{}, Options{})
	f.Fuzz(func(t *testing.T, logs bool, body []byte) {
		fuzzPost(t, h, logs, ctProto, body)
	})
}

// FuzzHTTPJSON posts arbitrary bytes as OTLP/JSON traces or logs.
func FuzzHTTPJSON(f *testing.F) {
	_, json, logs := fuzzSeeds(f)
	for i, b := range json {
		f.Add(logs[i], b)
	}
	f.Add(false, deepJSONTraces(1, 48))
	f.Add(true, []byte(`{"resourceLogs":[{`))
	h := NewHandler(flattenSink{}, Options{})
	f.Fuzz(func(t *testing.T, logs bool, body []byte) {
		fuzzPost(t, h, logs, ctJSON, body)
	})
}
