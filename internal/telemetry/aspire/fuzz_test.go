package aspire

import (
	"fmt"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/memory"
)

// fuzzEnvelope wraps OTLP JSON in the dashboard's answer.
func fuzzEnvelope(data []byte, total, returned int) []byte {
	return fmt.Appendf(nil, `{"data":%s,"totalCount":%d,"returnedCount":%d}`, data, total, returned)
}

// fuzzAnswers are answers as the dashboard gives them: spans (with an error status, an event
// and a parent) and logs (with a trace context), and a cut one.
func fuzzAnswers(f *testing.F) (spans, logs [][]byte) {
	f.Helper()
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "api")
	ss := rs.ScopeSpans().AppendEmpty()
	now := pcommon.NewTimestampFromTime(time.Unix(1_700_000_000, 0))
	for i := range 3 {
		sp := ss.Spans().AppendEmpty()
		sp.SetTraceID(pcommon.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
		sp.SetSpanID(pcommon.SpanID{1, 2, 3, 4, 5, 6, 7, byte(i + 1)})
		if i > 0 {
			sp.SetParentSpanID(pcommon.SpanID{1, 2, 3, 4, 5, 6, 7, 1})
		}
		sp.SetName(fmt.Sprintf("GET /items/%d", i))
		sp.SetKind(ptrace.SpanKindServer)
		sp.SetStartTimestamp(now)
		sp.SetEndTimestamp(now + 1_000_000)
		sp.Attributes().PutStr("http.response.status_code", "500")
	}
	ss.Spans().At(2).Status().SetCode(ptrace.StatusCodeError)
	ss.Spans().At(2).Events().AppendEmpty().Attributes().PutStr("exception.type", "Boom")
	tj, err := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
	if err != nil {
		f.Fatal(err)
	}
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", "api")
	lr := rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	lr.SetTimestamp(now)
	lr.SetSeverityNumber(plog.SeverityNumberError)
	lr.Body().SetStr("payment declined")
	lr.SetTraceID(pcommon.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
	lj, err := (&plog.JSONMarshaler{}).MarshalLogs(ld)
	if err != nil {
		f.Fatal(err)
	}
	return [][]byte{fuzzEnvelope(tj, 3, 3), fuzzEnvelope(tj, 10, 3), []byte(`{"data":{},"totalCount":0,"returnedCount":0}`)},
		[][]byte{fuzzEnvelope(lj, 1, 1), []byte(`{"data":{"resourceLogs":[]},"totalCount":0,"returnedCount":0}`)}
}

// within fails t when an answer took more than a second to read.
func within(t *testing.T, start time.Time, n int) {
	if took := time.Since(start); took > time.Second {
		t.Errorf("a %d byte answer took %s to read, want within a second", n, took)
	}
}

// FuzzDecodeSpans reads arbitrary answers as a spans answer, then as the backend uses one: an
// error, or spans no more numerous than the answer's bytes with sane counts; never a panic.
func FuzzDecodeSpans(f *testing.F) {
	spans, _ := fuzzAnswers(f)
	for _, a := range spans {
		f.Add(a)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		defer within(t, time.Now(), len(body))
		td, total, returned, err := decodeSpans(body)
		if err != nil {
			return
		}
		if total < 0 || returned < 0 || td.SpanCount() > len(body) {
			t.Fatalf("total %d, returned %d, %d spans from %d bytes", total, returned, td.SpanCount(), len(body))
		}
		rows := &memory.Backend{Info: telemetry.SourceInfo{Kind: Kind}}
		rows.AddTraces(td)
		_ = pullOf(total, returned, oldestSpan(td))
	})
}

// FuzzDecodeLogs is FuzzDecodeSpans for a logs answer.
func FuzzDecodeLogs(f *testing.F) {
	_, logs := fuzzAnswers(f)
	for _, a := range logs {
		f.Add(a)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		defer within(t, time.Now(), len(body))
		ld, total, returned, err := decodeLogs(body)
		if err != nil {
			return
		}
		if total < 0 || returned < 0 || ld.LogRecordCount() > len(body) {
			t.Fatalf("total %d, returned %d, %d records from %d bytes", total, returned, ld.LogRecordCount(), len(body))
		}
		rows := &memory.Backend{Info: telemetry.SourceInfo{Kind: Kind}}
		rows.AddLogs(ld)
		_ = pullOf(total, returned, oldestLog(ld))
	})
}
