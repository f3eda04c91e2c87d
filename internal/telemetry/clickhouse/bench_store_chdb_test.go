//go:build chdb

package clickhouse_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/runlens/runlens/internal/telemetry/clickhouse/chfront"
	"github.com/runlens/runlens/internal/telemetry/store"
)

// copyToStore reads the benchmark's tables back from chDB in slices of whole traces and
// ingests them into a new embedded store through its own OTLP ingest, so both sources answer
// over the same spans and records.
func copyToStore(b *testing.B, e *chfront.Engine, tb chfront.Tables, slices int) *store.Store {
	b.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, store.Options{Path: filepath.Join(b.TempDir(), "telemetry.db"), Retention: 48 * time.Hour, MaxBytes: 8 << 30})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.Close() })
	db := "`" + tb.Database + "`"
	for i := 0; i < slices; i++ {
		out, err := e.Query(fmt.Sprintf(`SELECT toUnixTimestamp64Nano(Timestamp) AS ts, TraceId AS trace, SpanId AS span, ParentSpanId AS parent,
  SpanName AS name, SpanKind AS kind, ServiceName AS service, SpanAttributes AS attrs, toInt64(Duration) AS dur, StatusCode AS code,
  StatusMessage AS msg, arrayMap(t -> toUnixTimestamp64Nano(t), `+"`Events.Timestamp`"+`) AS ev_ts, `+"`Events.Name`"+` AS ev_name,
  `+"`Events.Attributes`"+` AS ev_attrs FROM %s.%s WHERE cityHash64(TraceId) %% %d = %d`, db, "`"+tb.Traces+"`", slices, i), "JSONEachRow")
		if err != nil {
			b.Fatal(err)
		}
		td := ptrace.NewTraces()
		scopes := map[string]ptrace.SpanSlice{}
		sc := bufio.NewScanner(bytes.NewReader(out))
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			var r struct {
				Ts      int64               `json:"ts"`
				Trace   string              `json:"trace"`
				Span    string              `json:"span"`
				Parent  string              `json:"parent"`
				Name    string              `json:"name"`
				Kind    string              `json:"kind"`
				Service string              `json:"service"`
				Attrs   map[string]string   `json:"attrs"`
				Dur     int64               `json:"dur"`
				Code    string              `json:"code"`
				Msg     string              `json:"msg"`
				EvTs    []int64             `json:"ev_ts"`
				EvName  []string            `json:"ev_name"`
				EvAttrs []map[string]string `json:"ev_attrs"`
			}
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				b.Fatal(err)
			}
			spans, ok := scopes[r.Service]
			if !ok {
				rs := td.ResourceSpans().AppendEmpty()
				rs.Resource().Attributes().PutStr("service.name", r.Service)
				spans = rs.ScopeSpans().AppendEmpty().Spans()
				scopes[r.Service] = spans
			}
			sp := spans.AppendEmpty()
			sp.SetTraceID(traceID(b, r.Trace))
			sp.SetSpanID(spanID(b, r.Span))
			if r.Parent != "" {
				sp.SetParentSpanID(spanID(b, r.Parent))
			}
			sp.SetName(r.Name)
			sp.SetKind(map[string]ptrace.SpanKind{"Server": ptrace.SpanKindServer, "Client": ptrace.SpanKindClient, "Internal": ptrace.SpanKindInternal,
				"Producer": ptrace.SpanKindProducer, "Consumer": ptrace.SpanKindConsumer}[r.Kind])
			sp.SetStartTimestamp(pcommon.Timestamp(r.Ts))
			sp.SetEndTimestamp(pcommon.Timestamp(r.Ts + r.Dur))
			for k, v := range r.Attrs {
				sp.Attributes().PutStr(k, v)
			}
			if r.Code == "Error" {
				sp.Status().SetCode(ptrace.StatusCodeError)
			} else if r.Code == "Ok" {
				sp.Status().SetCode(ptrace.StatusCodeOk)
			}
			sp.Status().SetMessage(r.Msg)
			for j := range r.EvName {
				ev := sp.Events().AppendEmpty()
				ev.SetName(r.EvName[j])
				ev.SetTimestamp(pcommon.Timestamp(r.EvTs[j]))
				for k, v := range r.EvAttrs[j] {
					ev.Attributes().PutStr(k, v)
				}
			}
		}
		if _, rejected, err := st.IngestTraces(ctx, td); err != nil || rejected != 0 {
			b.Fatalf("ingest spans: %d rejected, %v", rejected, err)
		}
		out, err = e.Query(fmt.Sprintf(`SELECT toUnixTimestamp64Nano(Timestamp) AS ts, TraceId AS trace, SpanId AS span, SeverityText AS sev_text,
  toInt32(SeverityNumber) AS sev_num, ServiceName AS service, Body AS body, LogAttributes AS attrs
  FROM %s.%s WHERE cityHash64(TraceId) %% %d = %d`, db, "`"+tb.Logs+"`", slices, i), "JSONEachRow")
		if err != nil {
			b.Fatal(err)
		}
		ld := plog.NewLogs()
		recs := map[string]plog.LogRecordSlice{}
		sc = bufio.NewScanner(bytes.NewReader(out))
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			var r struct {
				Ts      int64             `json:"ts"`
				Trace   string            `json:"trace"`
				Span    string            `json:"span"`
				SevText string            `json:"sev_text"`
				SevNum  int32             `json:"sev_num"`
				Service string            `json:"service"`
				Body    string            `json:"body"`
				Attrs   map[string]string `json:"attrs"`
			}
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				b.Fatal(err)
			}
			rl, ok := recs[r.Service]
			if !ok {
				res := ld.ResourceLogs().AppendEmpty()
				res.Resource().Attributes().PutStr("service.name", r.Service)
				rl = res.ScopeLogs().AppendEmpty().LogRecords()
				recs[r.Service] = rl
			}
			lr := rl.AppendEmpty()
			lr.SetTimestamp(pcommon.Timestamp(r.Ts))
			if r.Trace != "" {
				lr.SetTraceID(traceID(b, r.Trace))
			}
			if r.Span != "" {
				lr.SetSpanID(spanID(b, r.Span))
			}
			lr.SetSeverityText(r.SevText)
			lr.SetSeverityNumber(plog.SeverityNumber(r.SevNum))
			lr.Body().SetStr(r.Body)
			for k, v := range r.Attrs {
				lr.Attributes().PutStr(k, v)
			}
		}
		if _, rejected, err := st.IngestLogs(ctx, ld); err != nil || rejected != 0 {
			b.Fatalf("ingest records: %d rejected, %v", rejected, err)
		}
	}
	return st
}

// hexID decodes a hex id of n bytes.
func hexID(b *testing.B, s string, n int) []byte {
	raw, err := hex.DecodeString(s)
	if err != nil || len(raw) != n {
		b.Fatalf("bad id %q", s)
	}
	return raw
}

func traceID(b *testing.B, s string) (id pcommon.TraceID) { copy(id[:], hexID(b, s, 16)); return id }
func spanID(b *testing.B, s string) (id pcommon.SpanID)   { copy(id[:], hexID(b, s, 8)); return id }
