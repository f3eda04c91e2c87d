// Package flatten turns OTLP traces and logs (pdata) into the telemetry engine's rows, the one
// way every source that receives OTLP — the embedded store's receiver, sources that answer in
// OTLP JSON, the in-memory backend of the tests — reads ids, service names, attribute values,
// events and severities.
package flatten

import (
	"encoding/hex"
	"math"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/conventions"
)

// ServiceNameKey is the resource attribute that names a service.
const ServiceNameKey = "service.name"

// Spans flattens td into rows, attributes and events included. Spans with an empty trace or
// span id cannot be correlated and are rejected (counted, not returned).
func Spans(td ptrace.Traces) (rows []telemetry.SpanRow, rejected int) {
	rows = make([]telemetry.SpanRow, 0, td.SpanCount())
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		service := ServiceName(rs.Resource().Attributes())
		res := Attributes(rs.Resource().Attributes())
		sss := rs.ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				sp := spans.At(k)
				if sp.TraceID().IsEmpty() || sp.SpanID().IsEmpty() {
					rejected++
					continue
				}
				row := Span(sp, service)
				row.Resource = res
				rows = append(rows, row)
			}
		}
	}
	return rows, rejected
}

// Span flattens one span of a resource whose service.name is service.
func Span(sp ptrace.Span, service string) telemetry.SpanRow {
	start, end := Nanos(sp.StartTimestamp()), Nanos(sp.EndTimestamp())
	r := telemetry.SpanRow{
		TraceID:       TraceID(sp.TraceID()),
		SpanID:        SpanID(sp.SpanID()),
		Name:          sp.Name(),
		Kind:          Kind(sp.Kind()),
		Service:       service,
		StartNs:       start,
		DurationNs:    max(end-start, 0),
		StatusCode:    StatusCode(sp.Status().Code()),
		StatusMessage: sp.Status().Message(),
		Attributes:    Attributes(sp.Attributes()),
	}
	if !sp.ParentSpanID().IsEmpty() {
		r.ParentSpanID = SpanID(sp.ParentSpanID())
	}
	if evs := sp.Events(); evs.Len() > 0 {
		r.Events = make([]telemetry.SpanEvent, 0, evs.Len())
		for i := 0; i < evs.Len(); i++ {
			ev := evs.At(i)
			r.Events = append(r.Events, telemetry.SpanEvent{TimeNs: Nanos(ev.Timestamp()), Name: ev.Name(), Attributes: Attributes(ev.Attributes())})
		}
	}
	return r
}

// Logs flattens ld into rows. A record's time is its time_unix_nano, else its observed time,
// else received (as the Collector's exporters do).
func Logs(ld plog.Logs, received time.Time) []telemetry.LogRow {
	rows := make([]telemetry.LogRow, 0, ld.LogRecordCount())
	rls := ld.ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		rl := rls.At(i)
		service := ServiceName(rl.Resource().Attributes())
		res := Attributes(rl.Resource().Attributes())
		sls := rl.ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			records := sls.At(j).LogRecords()
			for k := 0; k < records.Len(); k++ {
				row := Log(records.At(k), service, received)
				row.Resource = res
				rows = append(rows, row)
			}
		}
	}
	return rows
}

// Log flattens one log record of a resource whose service.name is service.
func Log(r plog.LogRecord, service string, received time.Time) telemetry.LogRow {
	ts := Nanos(r.Timestamp())
	if ts == 0 {
		ts = Nanos(r.ObservedTimestamp())
	}
	if ts == 0 {
		ts = received.UnixNano()
	}
	row := telemetry.LogRow{
		TimeNs:         ts,
		Service:        service,
		SeverityNumber: int32(r.SeverityNumber()),
		SeverityText:   r.SeverityText(),
		Body:           r.Body().AsString(),
		Attributes:     Attributes(r.Attributes()),
	}
	if !r.TraceID().IsEmpty() {
		row.TraceID = TraceID(r.TraceID())
	}
	if !r.SpanID().IsEmpty() {
		row.SpanID = SpanID(r.SpanID())
	}
	return row
}

// ServiceName is the service.name of a resource, empty when absent.
func ServiceName(res pcommon.Map) string {
	if v, ok := res.Get(ServiceNameKey); ok {
		return v.AsString()
	}
	return ""
}

// Attributes is the string view of an attribute map: every value in its canonical text form
// (pcommon.Value.AsString: 42 -> "42", true -> "true", arrays and maps as JSON), as the
// Collector's ClickHouse exporter writes them.
func Attributes(m pcommon.Map) conventions.Attributes {
	out := make(conventions.Attributes, m.Len())
	m.Range(func(k string, v pcommon.Value) bool {
		out[k] = v.AsString()
		return true
	})
	return out
}

// TraceID is a trace id as 32 lowercase hex characters.
func TraceID(id pcommon.TraceID) string { return hex.EncodeToString(id[:]) }

// SpanID is a span id as 16 lowercase hex characters.
func SpanID(id pcommon.SpanID) string { return hex.EncodeToString(id[:]) }

// Nanos converts an OTLP timestamp to int64 nanoseconds, saturating.
func Nanos(t pcommon.Timestamp) int64 {
	if uint64(t) > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(t)
}

// Kind is a span kind as the exporter writes it.
func Kind(k ptrace.SpanKind) string {
	switch k {
	case ptrace.SpanKindInternal:
		return telemetry.KindInternal
	case ptrace.SpanKindServer:
		return telemetry.KindServer
	case ptrace.SpanKindClient:
		return telemetry.KindClient
	case ptrace.SpanKindProducer:
		return telemetry.KindProducer
	case ptrace.SpanKindConsumer:
		return telemetry.KindConsumer
	}
	return telemetry.KindUnspecified
}

// StatusCode is a status code as the exporter writes it.
func StatusCode(c ptrace.StatusCode) string {
	switch c {
	case ptrace.StatusCodeOk:
		return telemetry.CodeOk
	case ptrace.StatusCodeError:
		return telemetry.CodeError
	}
	return telemetry.CodeUnset
}
