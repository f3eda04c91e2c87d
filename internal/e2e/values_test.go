package e2e

import (
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/runlens/runlens/internal/telemetry/fixture"
	"github.com/runlens/runlens/internal/telemetry/store"
)

// The fixture speaks the telemetry of ordinary services; this batch holds what it does not: every
// attribute value type, unsorted and empty resources, trace state, links, producer, consumer and
// unspecified kinds, a status message with quotes, and log bodies that are not strings. It must
// be stored the same whichever way it arrives.
func TestUnusualValuesAreStoredTheSameEveryWay(t *testing.T) {
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "")
	t.Setenv("OTEL_SERVICE_NAME", "")
	d := &fixture.Dataset{Now: fixtureNow, Traces: unusualTraces(), Logs: unusualLogs()}
	var traces, logs any
	for _, w := range ways {
		t.Run(w.name, func(t *testing.T) {
			st := w.load(t, d)
			gotTraces, gotLogs := storedRows(t, st, store.TracesTable), storedRows(t, st, store.LogsTable)
			if traces == nil {
				traces, logs = gotTraces, gotLogs
				if n := len(gotTraces.([]any)); n != d.Traces.SpanCount() {
					t.Fatalf("%d spans stored, want %d", n, d.Traces.SpanCount())
				}
				return
			}
			if w.sdk {
				acceptSDKLimits(t, traces, logs, gotTraces, gotLogs)
			}
			mismatch(t, "the stored spans", traces, gotTraces)
			mismatch(t, "the stored log records", logs, gotLogs)
		})
		if traces == nil {
			t.Fatalf("the reference way %s failed; nothing to compare with", w.name)
		}
	}
}

// acceptSDKLimits overwrites, in the SDK way's rows, the two things the SDK cannot send as
// given, after checking they differ exactly as documented:
//   - a link's trace state: the OTLP trace exporters (v1.47, HTTP and gRPC alike, which share
//     one transform) never set Span.Link.trace_state, so it arrives empty;
//   - a log record's observed time when it had none: the SDK Logger stamps the emit time, as
//     the logs specification asks of an SDK.
//
// Everything else must match.
func acceptSDKLimits(t *testing.T, refTraces, refLogs, traces, logs any) {
	t.Helper()
	refSpans, spans := refTraces.([]any), traces.([]any)
	for i := range min(len(refSpans), len(spans)) {
		refLinks, _ := refSpans[i].(map[string]any)["LinksJSON"].([]any)
		links, _ := spans[i].(map[string]any)["LinksJSON"].([]any)
		for j := range min(len(refLinks), len(links)) {
			want, got := refLinks[j].(map[string]any), links[j].(map[string]any)
			if got["TraceState"] == "" && want["TraceState"] != "" {
				got["TraceState"] = want["TraceState"]
			}
		}
	}
	refRecords, records := refLogs.([]any), logs.([]any)
	for i := range min(len(refRecords), len(records)) {
		want, got := refRecords[i].(map[string]any), records[i].(map[string]any)
		if want["ObservedTimestamp"] == "0" {
			if got["ObservedTimestamp"] == "0" {
				t.Errorf("log record %d: the SDK sent no observed time either", i)
			}
			got["ObservedTimestamp"] = "0"
		}
	}
}

var (
	unusualTrace = pcommon.TraceID{0x5b, 0x8e, 0xff, 0xf7, 0x98, 0x03, 0x81, 0x03, 0xd2, 0x69, 0xb6, 0x33, 0x81, 0x3f, 0xc6, 0x0c}
	linkedTrace  = pcommon.TraceID{0x0a, 0xf7, 0x65, 0x19, 0x16, 0xcd, 0x43, 0xdd, 0x84, 0x48, 0xeb, 0x21, 0x1c, 0x80, 0x31, 0x9c}
)

func unusualSpanID(n byte) pcommon.SpanID {
	return pcommon.SpanID{0xb7, 0xad, 0x6b, 0x71, 0x69, 0x20, 0x33, n}
}

func at(ago time.Duration) pcommon.Timestamp {
	return pcommon.NewTimestampFromTime(fixtureNow.Add(-ago))
}

// putEveryType puts one attribute of each OTLP value type into m.
func putEveryType(m pcommon.Map) {
	m.PutDouble("ratio", 0.25)
	m.PutBool("cached", false)
	m.PutEmptyBytes("digest").FromRaw([]byte{0, 1, 2, 0xfe})
	strs := m.PutEmptySlice("tags")
	strs.AppendEmpty().SetStr("a")
	strs.AppendEmpty().SetStr("b")
	ints := m.PutEmptySlice("ports")
	ints.AppendEmpty().SetInt(80)
	ints.AppendEmpty().SetInt(443)
	mixed := m.PutEmptySlice("mixed")
	mixed.AppendEmpty().SetStr("x")
	mixed.AppendEmpty().SetInt(1)
	mixed.AppendEmpty().SetBool(true)
	nested := m.PutEmptyMap("owner")
	nested.PutStr("team", "payments")
	nested.PutInt("size", 3)
	m.PutStr("quoted", "line one\nsaid \"two\"\t✓")
	m.PutInt("negative", -7)
}

func unusualTraces() ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "odd")
	rs.Resource().Attributes().PutStr("z.first", "sent first")
	rs.Resource().Attributes().PutInt("host.cores", 8)
	rs.Resource().Attributes().PutBool("deployment.canary", true)
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("odd/scope")
	ss.Scope().SetVersion("1.2.3")

	producer := ss.Spans().AppendEmpty()
	producer.SetTraceID(unusualTrace)
	producer.SetSpanID(unusualSpanID(1))
	producer.TraceState().FromRaw("vendor=abc,other=1")
	producer.SetFlags(1)
	producer.SetName("publish orders")
	producer.SetKind(ptrace.SpanKindProducer)
	producer.SetStartTimestamp(at(3 * time.Minute))
	producer.SetEndTimestamp(at(3*time.Minute - 1500*time.Microsecond))
	putEveryType(producer.Attributes())
	producer.Status().SetCode(ptrace.StatusCodeOk)
	retry := producer.Events().AppendEmpty()
	retry.SetName("retry")
	retry.SetTimestamp(at(3*time.Minute - time.Millisecond))
	retry.Attributes().PutInt("attempt", 2)
	link := producer.Links().AppendEmpty()
	link.SetTraceID(linkedTrace)
	link.SetSpanID(unusualSpanID(9))
	link.TraceState().FromRaw("vendor=linked")
	link.Attributes().PutBool("follows", true)

	consumer := ss.Spans().AppendEmpty()
	consumer.SetTraceID(unusualTrace)
	consumer.SetSpanID(unusualSpanID(2))
	consumer.SetParentSpanID(unusualSpanID(1))
	consumer.SetName("consume orders")
	consumer.SetKind(ptrace.SpanKindConsumer)
	consumer.SetStartTimestamp(at(2 * time.Minute))
	consumer.SetEndTimestamp(at(2*time.Minute - 30*time.Millisecond))
	back := consumer.Links().AppendEmpty()
	back.SetTraceID(unusualTrace)
	back.SetSpanID(unusualSpanID(1))

	failed := ss.Spans().AppendEmpty()
	failed.SetTraceID(unusualTrace)
	failed.SetSpanID(unusualSpanID(3))
	failed.SetParentSpanID(unusualSpanID(2))
	failed.SetName("apply order")
	failed.SetStartTimestamp(at(2*time.Minute - 5*time.Millisecond))
	failed.SetEndTimestamp(at(2*time.Minute - 25*time.Millisecond))
	failed.Status().SetCode(ptrace.StatusCodeError)
	failed.Status().SetMessage(`order "A-1" rejected`)
	exc := failed.Events().AppendEmpty()
	exc.SetName("exception")
	exc.SetTimestamp(at(2*time.Minute - 25*time.Millisecond))
	exc.Attributes().PutStr("exception.type", "RejectedError")
	exc.Attributes().PutStr("exception.message", `order "A-1" rejected`)
	exc.Attributes().PutStr("exception.stacktrace", "at apply()\n\tat consume()")

	bare := td.ResourceSpans().AppendEmpty()
	lone := bare.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	lone.SetTraceID(linkedTrace)
	lone.SetSpanID(unusualSpanID(9))
	lone.SetName("anonymous")
	lone.SetStartTimestamp(at(time.Minute))
	lone.SetEndTimestamp(at(time.Minute - time.Millisecond))
	return td
}

func unusualLogs() plog.Logs {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", "odd")
	rl.Resource().Attributes().PutStr("z.first", "sent first")
	sl := rl.ScopeLogs().AppendEmpty()
	sl.Scope().SetName("odd/scope")
	sl.Scope().SetVersion("1.2.3")
	add := func(ago time.Duration) plog.LogRecord {
		r := sl.LogRecords().AppendEmpty()
		r.SetTimestamp(at(ago))
		r.SetObservedTimestamp(at(ago - time.Millisecond))
		return r
	}

	r := add(3 * time.Minute)
	r.Body().SetInt(42)
	r.SetSeverityNumber(plog.SeverityNumberInfo)
	r.SetTraceID(unusualTrace)
	r.SetSpanID(unusualSpanID(1))
	r.SetFlags(plog.DefaultLogRecordFlags.WithIsSampled(true))
	putEveryType(r.Attributes())

	r = add(2*time.Minute + time.Second)
	body := r.Body().SetEmptyMap()
	body.PutStr("event", "order.rejected")
	body.PutInt("attempt", 2)
	r.SetSeverityText("Fatal") // an error by its text alone
	r.SetEventName("order.rejected")

	r = add(2 * time.Minute)
	items := r.Body().SetEmptySlice()
	items.AppendEmpty().SetStr("a")
	items.AppendEmpty().SetDouble(1.5)
	r.SetSeverityNumber(plog.SeverityNumberWarn2)
	r.SetSeverityText("WARN")

	r = add(time.Minute)
	r.SetTimestamp(0) // only the observed time is known
	r.Body().SetEmptyBytes().FromRaw([]byte("raw\x00bytes"))
	r.SetSeverityNumber(plog.SeverityNumberError)

	anon := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	anon.SetTimestamp(at(30 * time.Second))
	anon.Body().SetStr("from a process without a resource")
	return ld
}
