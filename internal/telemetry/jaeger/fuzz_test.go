package jaeger

import (
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// fuzzTraces is a query service answer as Jaeger gives it: one trace of a server span and its
// failing child, one span carrying the warning of the negative-duration sanitizer.
func fuzzTraces(f *testing.F) []byte {
	f.Helper()
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "api")
	spans := rs.ScopeSpans().AppendEmpty().Spans()
	now := pcommon.NewTimestampFromTime(time.Unix(1_700_000_000, 0))
	trace := pcommon.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	root := spans.AppendEmpty()
	root.SetTraceID(trace)
	root.SetSpanID(pcommon.SpanID{1, 1, 1, 1, 1, 1, 1, 1})
	root.SetName("GET /checkout")
	root.SetKind(ptrace.SpanKindServer)
	root.SetStartTimestamp(now)
	root.SetEndTimestamp(now + 5_000_000)
	child := spans.AppendEmpty()
	child.SetTraceID(trace)
	child.SetSpanID(pcommon.SpanID{2, 2, 2, 2, 2, 2, 2, 2})
	child.SetParentSpanID(root.SpanID())
	child.SetName("SELECT")
	child.SetStartTimestamp(now + 1)
	child.SetEndTimestamp(now + 2)
	child.Status().SetCode(ptrace.StatusCodeError)
	child.Attributes().PutEmptySlice(warningsKey).AppendEmpty().SetStr("Negative duration detected")
	b, err := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
	if err != nil {
		f.Fatal(err)
	}
	return append(append([]byte(`{"result":`), b...), '}')
}

// FuzzDecodeTraces reads arbitrary bytes as a traces answer and, when they decode, turns them
// into rows as a scan does: an error, or no more rows than the answer has bytes; never a panic,
// and within a second.
func FuzzDecodeTraces(f *testing.F) {
	f.Add(fuzzTraces(f))
	f.Add([]byte(`{"result":{"resourceSpans":[]}}`))
	f.Add([]byte(`{"error":{"httpCode":404,"message":"trace not found"}}`))
	b, err := New("http://127.0.0.1:16686", Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		start := time.Now()
		defer func() {
			if took := time.Since(start); took > time.Second {
				t.Errorf("a %d byte answer took %s to read, want within a second", len(body), took)
			}
		}()
		_ = jaegerMessage(body)
		_ = isJaegerError(body, 404)
		td, err := decodeTraces(body)
		if err != nil {
			return
		}
		rows, traces := b.rows(td)
		if len(rows) > len(body) || traces > len(rows) {
			t.Fatalf("%d rows of %d traces from %d bytes", len(rows), traces, len(body))
		}
	})
}

// FuzzDecodeServices reads arbitrary bytes as a services answer: an error or a list no longer
// than the answer.
func FuzzDecodeServices(f *testing.F) {
	f.Add([]byte(`{"services":["api","worker"]}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"services":null}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		names, err := decodeServices(body)
		if err == nil && len(names) > len(body) {
			t.Fatalf("%d services from %d bytes", len(names), len(body))
		}
	})
}
