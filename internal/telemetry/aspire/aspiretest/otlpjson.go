package aspiretest

import (
	"strconv"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// The OTLP JSON the dashboard writes. It keeps attribute values as text, so every value goes
// out as a stringValue (an exit code 1 as "1"); a span whose status is unset has no status.

type keyValue struct {
	Key   string   `json:"key"`
	Value anyValue `json:"value"`
}

type anyValue struct {
	StringValue string `json:"stringValue"`
}

type resourceJSON struct {
	Attributes []keyValue `json:"attributes,omitempty"`
}

type scopeJSON struct {
	Name string `json:"name,omitempty"`
}

type spanJSON struct {
	TraceID           string      `json:"traceId"`
	SpanID            string      `json:"spanId"`
	ParentSpanID      string      `json:"parentSpanId,omitempty"`
	Name              string      `json:"name"`
	Kind              int         `json:"kind"`
	StartTimeUnixNano string      `json:"startTimeUnixNano"`
	EndTimeUnixNano   string      `json:"endTimeUnixNano"`
	Attributes        []keyValue  `json:"attributes,omitempty"`
	Events            []eventJSON `json:"events,omitempty"`
	Status            *statusJSON `json:"status,omitempty"`
}

type eventJSON struct {
	TimeUnixNano string     `json:"timeUnixNano"`
	Name         string     `json:"name"`
	Attributes   []keyValue `json:"attributes,omitempty"`
}

type statusJSON struct {
	Code    int    `json:"code"`
	Message string `json:"message,omitempty"`
}

type logJSON struct {
	TimeUnixNano   string     `json:"timeUnixNano"`
	SeverityNumber int        `json:"severityNumber,omitempty"`
	SeverityText   string     `json:"severityText,omitempty"`
	Body           *anyValue  `json:"body,omitempty"`
	Attributes     []keyValue `json:"attributes,omitempty"`
	TraceID        string     `json:"traceId,omitempty"`
	SpanID         string     `json:"spanId,omitempty"`
}

type resourceSpansJSON struct {
	Resource   resourceJSON     `json:"resource"`
	ScopeSpans []scopeSpansJSON `json:"scopeSpans"`
}

type scopeSpansJSON struct {
	Scope scopeJSON  `json:"scope"`
	Spans []spanJSON `json:"spans"`
}

type resourceLogsJSON struct {
	Resource  resourceJSON    `json:"resource"`
	ScopeLogs []scopeLogsJSON `json:"scopeLogs"`
}

type scopeLogsJSON struct {
	Scope      scopeJSON `json:"scope"`
	LogRecords []logJSON `json:"logRecords"`
}

// envelope is every list answer: the OTLP data and the counts.
type envelope struct {
	Data          any `json:"data"`
	TotalCount    int `json:"totalCount"`
	ReturnedCount int `json:"returnedCount"`
}

func textAttrs(m pcommon.Map) []keyValue {
	out := make([]keyValue, 0, m.Len())
	m.Range(func(k string, v pcommon.Value) bool {
		out = append(out, keyValue{Key: k, Value: anyValue{StringValue: v.AsString()}})
		return true
	})
	return out
}

func nanos(t pcommon.Timestamp) string { return strconv.FormatUint(uint64(t), 10) }

func spanOf(sp ptrace.Span) spanJSON {
	out := spanJSON{
		TraceID: sp.TraceID().String(), SpanID: sp.SpanID().String(),
		Name: sp.Name(), Kind: int(sp.Kind()),
		StartTimeUnixNano: nanos(sp.StartTimestamp()), EndTimeUnixNano: nanos(sp.EndTimestamp()),
		Attributes: textAttrs(sp.Attributes()),
	}
	if !sp.ParentSpanID().IsEmpty() {
		out.ParentSpanID = sp.ParentSpanID().String()
	}
	for i := 0; i < sp.Events().Len(); i++ {
		ev := sp.Events().At(i)
		out.Events = append(out.Events, eventJSON{TimeUnixNano: nanos(ev.Timestamp()), Name: ev.Name(), Attributes: textAttrs(ev.Attributes())})
	}
	if c := sp.Status().Code(); c != ptrace.StatusCodeUnset {
		out.Status = &statusJSON{Code: int(c), Message: sp.Status().Message()}
	}
	return out
}

func logOf(r plog.LogRecord) logJSON {
	t := r.Timestamp()
	if t == 0 {
		t = r.ObservedTimestamp()
	}
	out := logJSON{
		TimeUnixNano: nanos(t), SeverityNumber: int(r.SeverityNumber()), SeverityText: r.SeverityText(),
		Attributes: textAttrs(r.Attributes()),
	}
	if body := r.Body().AsString(); body != "" {
		out.Body = &anyValue{StringValue: body}
	}
	if !r.TraceID().IsEmpty() {
		out.TraceID = r.TraceID().String()
	}
	if !r.SpanID().IsEmpty() {
		out.SpanID = r.SpanID().String()
	}
	return out
}
