package store

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// spanRecord is a stored span read back for assertions.
type spanRecord struct {
	Seq, Timestamp, EndTimestamp, Duration    int64
	TraceID, SpanID, ParentSpanID, TraceState string
	SpanName, SpanKind, ServiceName           string
	ResourceAttributes, SpanAttributes        string
	ScopeName, ScopeVersion                   string
	StatusCode, StatusMessage, Events, Links  string
	IsRoot, IsError                           int64
}

func readSpans(t *testing.T, s *Store) []spanRecord {
	t.Helper()
	rows, err := s.DB().Query(`SELECT Seq, Timestamp, EndTimestamp, Duration, TraceId, SpanId,
		ParentSpanId, TraceState, SpanName, SpanKind, ServiceName, ` + resourceScopeColumn(TracesTable, "ResourceAttributes") + `,
		SpanAttributes, ` + resourceScopeColumn(TracesTable, "ScopeName") + `, ` + resourceScopeColumn(TracesTable, "ScopeVersion") + `,
		StatusCode, StatusMessage, EventsJSON, LinksJSON, IsRoot, IsError FROM otel_traces ORDER BY Seq`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []spanRecord
	for rows.Next() {
		var r spanRecord
		if err := rows.Scan(&r.Seq, &r.Timestamp, &r.EndTimestamp, &r.Duration, &r.TraceID, &r.SpanID,
			&r.ParentSpanID, &r.TraceState, &r.SpanName, &r.SpanKind, &r.ServiceName, &r.ResourceAttributes,
			&r.SpanAttributes, &r.ScopeName, &r.ScopeVersion, &r.StatusCode, &r.StatusMessage, &r.Events,
			&r.Links, &r.IsRoot, &r.IsError); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestIngestTracesStoresEveryColumnLikeTheExporter(t *testing.T) {
	s := openTestStore(t, Options{})
	start := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "checkout")
	rs.Resource().Attributes().PutInt("process.pid", 42)
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("net/http")
	ss.Scope().SetVersion("0.1")

	root := ss.Spans().AppendEmpty()
	root.SetTraceID(pcommon.TraceID{0x0a, 0xf7, 0x65, 0x19, 0x16, 0xcd, 0x43, 0xdd, 0x84, 0x48, 0xeb, 0x21, 0x1c, 0x80, 0x31, 0x9c})
	root.SetSpanID(pcommon.SpanID{0xb7, 0xad, 0x6b, 0x71, 0x69, 0x20, 0x33, 0x31})
	root.SetName("GET /orders")
	root.SetKind(ptrace.SpanKindServer)
	root.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
	root.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(1500 * time.Microsecond)))
	root.TraceState().FromRaw("vendor=1")
	root.Attributes().PutStr("http.request.method", "GET")
	root.Attributes().PutInt("http.response.status_code", 500)
	root.Attributes().PutBool("retry", true)
	root.Attributes().PutDouble("ratio", 0.5)
	root.Attributes().PutEmptySlice("tags").FromRaw([]any{"a", "b"})
	root.Status().SetCode(ptrace.StatusCodeError)
	root.Status().SetMessage("payment failed")
	ev := root.Events().AppendEmpty()
	ev.SetName("exception")
	ev.SetTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Millisecond)))
	ev.Attributes().PutStr("exception.type", "PaymentError")
	link := root.Links().AppendEmpty()
	link.SetTraceID(pcommon.TraceID{1})
	link.SetSpanID(pcommon.SpanID{2})

	child := ss.Spans().AppendEmpty()
	child.SetTraceID(root.TraceID())
	child.SetSpanID(pcommon.SpanID{0, 0, 0, 0, 0, 0, 0, 9})
	child.SetParentSpanID(root.SpanID())
	child.SetName("SELECT orders")
	child.SetKind(ptrace.SpanKindClient)
	child.SetStartTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Millisecond)))
	child.SetEndTimestamp(pcommon.NewTimestampFromTime(start)) // ends before it starts

	accepted, rejected, err := s.IngestTraces(context.Background(), td)
	if err != nil || accepted != 2 || rejected != 0 {
		t.Fatalf("IngestTraces = %d, %d, %v; want 2, 0, nil", accepted, rejected, err)
	}
	got := readSpans(t, s)
	if len(got) != 2 {
		t.Fatalf("stored %d spans, want 2", len(got))
	}
	r, c := got[0], got[1]
	checks := []struct {
		name      string
		got, want any
	}{
		{"trace id is lowercase hex", r.TraceID, "0af7651916cd43dd8448eb211c80319c"},
		{"span id is lowercase hex", r.SpanID, "b7ad6b7169203331"},
		{"a root has an empty parent", r.ParentSpanID, ""},
		{"a root is flagged", r.IsRoot, int64(1)},
		{"a child names its parent", c.ParentSpanID, "b7ad6b7169203331"},
		{"a child is not a root", c.IsRoot, int64(0)},
		{"start is nanoseconds", r.Timestamp, start.UnixNano()},
		{"duration is nanoseconds", r.Duration, int64(1500 * time.Microsecond)},
		{"end is start plus duration", r.EndTimestamp, start.Add(1500 * time.Microsecond).UnixNano()},
		{"an end before the start is a zero duration", c.Duration, int64(0)},
		{"kind is the exporter's word", r.SpanKind, "Server"},
		{"client kind", c.SpanKind, "Client"},
		{"status is the exporter's word", r.StatusCode, "Error"},
		{"an unset status", c.StatusCode, "Unset"},
		{"an error is flagged", r.IsError, int64(1)},
		{"a non-error is not", c.IsError, int64(0)},
		{"status message", r.StatusMessage, "payment failed"},
		{"service name from the resource", r.ServiceName, "checkout"},
		{"scope name", r.ScopeName, "net/http"},
		{"scope version", r.ScopeVersion, "0.1"},
		{"trace state", r.TraceState, "vendor=1"},
		{"span name", r.SpanName, "GET /orders"},
		{"sequence numbers are consecutive", c.Seq - r.Seq, int64(1)},
	}
	for _, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("%s: got %v, want %v", ch.name, ch.got, ch.want)
		}
	}

	wantAttrs := map[string]string{
		"http.request.method": "GET", "http.response.status_code": "500", "retry": "true",
		"ratio": "0.5", "tags": `["a","b"]`,
	}
	assertJSONObject(t, "SpanAttributes", r.SpanAttributes, wantAttrs)
	assertJSONObject(t, "ResourceAttributes", r.ResourceAttributes, map[string]string{"service.name": "checkout", "process.pid": "42"})
	assertJSONObject(t, "child SpanAttributes", c.SpanAttributes, map[string]string{})

	var events []struct {
		Timestamp  int64
		Name       string
		Attributes map[string]string
	}
	if err := json.Unmarshal([]byte(r.Events), &events); err != nil {
		t.Fatalf("EventsJSON %q: %v", r.Events, err)
	}
	if len(events) != 1 || events[0].Name != "exception" || events[0].Attributes["exception.type"] != "PaymentError" ||
		events[0].Timestamp != start.Add(time.Millisecond).UnixNano() {
		t.Errorf("EventsJSON = %s", r.Events)
	}
	var links []struct{ TraceId, SpanId, TraceState string }
	if err := json.Unmarshal([]byte(r.Links), &links); err != nil {
		t.Fatalf("LinksJSON %q: %v", r.Links, err)
	}
	if len(links) != 1 || links[0].TraceId != "01000000000000000000000000000000" || links[0].SpanId != "0200000000000000" {
		t.Errorf("LinksJSON = %s", r.Links)
	}
	if c.Events != "[]" || c.Links != "[]" {
		t.Errorf("a span without events or links stores %q and %q, want []", c.Events, c.Links)
	}
}

func assertJSONObject(t *testing.T, name, raw string, want map[string]string) {
	t.Helper()
	var got map[string]string
	if err := json.Unmarshal([]byte(raw), &got); err != nil {
		t.Fatalf("%s %q is not a JSON object of strings: %v", name, raw, err)
	}
	if len(got) != len(want) {
		t.Errorf("%s = %v, want %v", name, got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s[%q] = %q, want %q", name, k, got[k], v)
		}
	}
}

func TestIngestTracesRejectsSpansWithoutIDs(t *testing.T) {
	s := openTestStore(t, Options{})
	td := makeTraces("a", 1, 4, time.Now())
	spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	spans.At(1).SetTraceID(pcommon.NewTraceIDEmpty())
	spans.At(2).SetSpanID(pcommon.NewSpanIDEmpty())
	accepted, rejected, err := s.IngestTraces(context.Background(), td)
	if err != nil || accepted != 2 || rejected != 2 {
		t.Fatalf("IngestTraces = %d, %d, %v; want 2 accepted, 2 rejected", accepted, rejected, err)
	}
	if got := readSpans(t, s); len(got) != 2 {
		t.Errorf("stored %d spans, want the 2 valid ones", len(got))
	}
	if hw, _ := s.HighWater(context.Background()); hw != 2 {
		t.Errorf("HighWater = %d, want 2", hw)
	}
}

func TestHighWaterIsSharedByBothTablesAndNeverReused(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t, Options{Retention: time.Hour})
	old := time.Now().Add(-48 * time.Hour)
	if _, _, err := s.IngestTraces(ctx, makeTraces("a", 1, 5, old)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.IngestLogs(ctx, makeLogs("a", 3, old)); err != nil {
		t.Fatal(err)
	}
	if hw, _ := s.HighWater(ctx); hw != 8 {
		t.Fatalf("HighWater = %d after 5 spans and 3 logs, want 8", hw)
	}
	if n, err := s.Prune(ctx); err != nil || n != 8 {
		t.Fatalf("Prune = %d, %v; want every row deleted", n, err)
	}
	if _, _, err := s.IngestTraces(ctx, makeTraces("a", 2, 1, time.Now())); err != nil {
		t.Fatal(err)
	}
	var seq int64
	if err := s.DB().QueryRow("SELECT Seq FROM otel_traces").Scan(&seq); err != nil || seq != 9 {
		t.Errorf("the first row after pruning everything has Seq %d (%v), want 9", seq, err)
	}
}

func TestIngestLogsStoresRecords(t *testing.T) {
	s := openTestStore(t, Options{})
	observed := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", "worker")
	sl := rl.ScopeLogs().AppendEmpty()
	sl.Scope().SetName("slog")
	r := sl.LogRecords().AppendEmpty()
	r.SetObservedTimestamp(pcommon.NewTimestampFromTime(observed)) // no event time: falls back
	r.SetSeverityNumber(plog.SeverityNumberWarn)
	r.SetSeverityText("fatal")
	r.Body().SetEmptyMap().PutStr("msg", "disk full")
	r.SetTraceID(pcommon.TraceID{0xab})
	r.SetSpanID(pcommon.SpanID{0xcd})
	r.SetFlags(plog.DefaultLogRecordFlags.WithIsSampled(true))
	r.Attributes().PutInt("attempt", 3)
	plain := sl.LogRecords().AppendEmpty()
	plain.SetTimestamp(pcommon.NewTimestampFromTime(observed.Add(time.Second)))
	plain.Body().SetStr("ok")

	accepted, rejected, err := s.IngestLogs(context.Background(), ld)
	if err != nil || accepted != 2 || rejected != 0 {
		t.Fatalf("IngestLogs = %d, %d, %v", accepted, rejected, err)
	}
	var (
		ts, obsTS, flags, sevNum, isErr                 int64
		traceID, spanID, sevText, svc, body, attrs, scp string
	)
	err = s.DB().QueryRow(`SELECT Timestamp, ObservedTimestamp, TraceId, SpanId, TraceFlags,
		SeverityText, SeverityNumber, ServiceName, Body, LogAttributes, `+resourceScopeColumn(LogsTable, "ScopeName")+`, IsError
		FROM otel_logs ORDER BY Seq LIMIT 1`).Scan(&ts, &obsTS, &traceID, &spanID, &flags, &sevText,
		&sevNum, &svc, &body, &attrs, &scp, &isErr)
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"a missing event time falls back to the observed time", ts, observed.UnixNano()},
		{"observed time", obsTS, observed.UnixNano()},
		{"trace id is hex", traceID, "ab000000000000000000000000000000"},
		{"span id is hex", spanID, "cd00000000000000"},
		{"trace flags", flags, int64(1)},
		{"severity text", sevText, "fatal"},
		{"severity number", sevNum, int64(plog.SeverityNumberWarn)},
		{"service", svc, "worker"},
		{"a map body is JSON text", body, `{"msg":"disk full"}`},
		{"scope", scp, "slog"},
		{"fatal text is an error whatever the number", isErr, int64(1)},
	}
	for _, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("%s: got %v, want %v", ch.name, ch.got, ch.want)
		}
	}
	assertJSONObject(t, "LogAttributes", attrs, map[string]string{"attempt": "3"})
	var uncorrelated string
	if err := s.DB().QueryRow(`SELECT TraceId FROM otel_logs ORDER BY Seq DESC LIMIT 1`).Scan(&uncorrelated); err != nil || uncorrelated != "" {
		t.Errorf("an uncorrelated record stores TraceId %q (%v), want empty", uncorrelated, err)
	}
}

func TestIngestMarksErrorRecordsAsTheEngineDoes(t *testing.T) {
	cases := []struct {
		name   string
		number plog.SeverityNumber
		text   string
		want   bool
	}{
		{"ERROR by number is an error", plog.SeverityNumberError, "", true},
		{"FATAL4 by number is an error", plog.SeverityNumberFatal4, "", true},
		{"WARN4 by number is not", plog.SeverityNumberWarn4, "", false},
		{"error text in any case is an error", plog.SeverityNumberUnspecified, "Error", true},
		{"error text with spaces around is an error", plog.SeverityNumberUnspecified, " error ", true},
		{"FATAL text is an error", plog.SeverityNumberInfo, "FATAL", true},
		{"a text merely containing error is not", plog.SeverityNumberInfo, "noerror", false},
		{"info is not", plog.SeverityNumberInfo, "INFO", false},
	}
	s := openTestStore(t, Options{})
	ld := plog.NewLogs()
	records := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
	for i, c := range cases {
		r := records.AppendEmpty()
		r.SetTimestamp(pcommon.Timestamp(int64(i+1) * 1e9))
		r.SetSeverityNumber(c.number)
		r.SetSeverityText(c.text)
	}
	if _, _, err := s.IngestLogs(context.Background(), ld); err != nil {
		t.Fatal(err)
	}
	rows, err := s.DB().Query(`SELECT IsError FROM otel_logs ORDER BY Seq`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for i := 0; rows.Next(); i++ {
		var got bool
		if err := rows.Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != cases[i].want {
			t.Errorf("%s: stored IsError %v", cases[i].name, got)
		}
	}
}
