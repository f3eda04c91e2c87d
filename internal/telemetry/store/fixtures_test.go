package store

import (
	"context"
	"encoding/binary"
	"path/filepath"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// openTestStore opens a fresh store in a temporary directory and closes it when the test ends.
func openTestStore(tb testing.TB, o Options) *Store {
	tb.Helper()
	if o.Path == "" {
		o.Path = filepath.Join(tb.TempDir(), "telemetry.db")
	}
	s, err := Open(context.Background(), o)
	if err != nil {
		tb.Fatalf("Open: %v", err)
	}
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Errorf("Close: %v", err)
		}
	})
	return s
}

// traceID returns a distinct, random-looking (like real ones: index inserts land anywhere),
// non-zero trace id for n.
func traceID(n uint64) pcommon.TraceID {
	var id pcommon.TraceID
	binary.BigEndian.PutUint64(id[:8], mix(n)|1)
	binary.BigEndian.PutUint64(id[8:], mix(n+0x9e3779b97f4a7c15))
	return id
}

// spanID returns a distinct, random-looking, non-zero span id for n.
func spanID(n uint64) pcommon.SpanID {
	var id pcommon.SpanID
	binary.BigEndian.PutUint64(id[:], mix(^n)|1)
	return id
}

// mix is splitmix64's finalizer: a bijection, so distinct inputs give distinct ids.
func mix(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// makeTraces builds one resource of service with nSpans spans in traces of 8 (a root and its
// children), starting at start, each lasting 1 ms; batch separates the ids of different calls.
func makeTraces(service string, batch uint64, nSpans int, start time.Time) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", service)
	rs.Resource().Attributes().PutStr("host.name", "box")
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("bench")
	ss.Scope().SetVersion("1.0.0")
	spans := ss.Spans()
	spans.EnsureCapacity(nSpans)
	for i := range nSpans {
		sp := spans.AppendEmpty()
		n := batch<<20 | uint64(i)
		sp.SetTraceID(traceID(batch<<20 | uint64(i/8)))
		sp.SetSpanID(spanID(n))
		if i%8 != 0 {
			sp.SetParentSpanID(spanID(batch<<20 | uint64(i-i%8)))
		}
		sp.SetName("GET /orders/{id}")
		sp.SetKind(ptrace.SpanKindServer)
		ts := start.Add(time.Duration(int(batch)*nSpans+i) * time.Microsecond)
		sp.SetStartTimestamp(pcommon.NewTimestampFromTime(ts))
		sp.SetEndTimestamp(pcommon.NewTimestampFromTime(ts.Add(time.Millisecond)))
		a := sp.Attributes()
		a.PutStr("http.request.method", "GET")
		a.PutInt("http.response.status_code", 200)
		a.PutStr("url.path", "/orders/42")
		a.PutStr("db.system", "postgresql")
		if i%50 == 0 {
			sp.Status().SetCode(ptrace.StatusCodeError)
			sp.Status().SetMessage("boom")
			ev := sp.Events().AppendEmpty()
			ev.SetName("exception")
			ev.SetTimestamp(pcommon.NewTimestampFromTime(ts))
			ev.Attributes().PutStr("exception.type", "ValueError")
			ev.Attributes().PutStr("exception.message", "bad \"order\"\n")
		}
	}
	return td
}

// makeLogs builds n log records of service at start, every third one an error correlated to
// a span of traceBatch.
func makeLogs(service string, n int, start time.Time) plog.Logs {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", service)
	records := rl.ScopeLogs().AppendEmpty().LogRecords()
	for i := range n {
		r := records.AppendEmpty()
		r.SetTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Duration(i) * time.Millisecond)))
		r.Body().SetStr("order processed")
		r.SetSeverityNumber(plog.SeverityNumberInfo)
		r.SetSeverityText("INFO")
		if i%3 == 0 {
			r.SetSeverityNumber(plog.SeverityNumberError)
			r.SetSeverityText("ERROR")
			r.SetTraceID(traceID(uint64(i)))
			r.SetSpanID(spanID(uint64(i)))
		}
		r.Attributes().PutInt("attempt", int64(i))
	}
	return ld
}
