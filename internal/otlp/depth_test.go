package otlp

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// nestValue fills the value v so that it spans levels messages, itself included, as the
// protobuf decoder counts them: a map level adds three (KeyValueList, KeyValue, AnyValue), an
// array level two (ArrayValue, AnyValue), an empty array one; shape picks maps, arrays or
// both in turn.
func nestValue(v pcommon.Value, levels int, shape string) {
	useMap := shape == "maps"
	for r := levels - 1; r > 0; {
		switch {
		case r == 1:
			v.SetEmptySlice()
			return
		case useMap && r >= 3:
			v = v.SetEmptyMap().PutEmpty("k")
			r -= 3
		default:
			v = v.SetEmptySlice().AppendEmpty()
			r -= 2
		}
		if shape == "mixed" {
			useMap = !useMap
		}
	}
	v.SetStr("leaf")
}

// deepAttribute is where a deep value can sit, and how to encode a request with it there,
// levels messages deep counting from the first KeyValue or AnyValue of the family.
type deepAttribute struct {
	name   string
	encode func(levels int, shape string) (protobuf, json []byte, err error)
}

var deepAttributes = []deepAttribute{
	{"a span attribute", func(levels int, shape string) ([]byte, []byte, error) {
		td := makeTraces("deep", 1, 0, 1)
		nestValue(td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes().PutEmpty("deep"), levels-1, shape)
		return traceBodies(td)
	}},
	{"a resource attribute", func(levels int, shape string) ([]byte, []byte, error) {
		td := makeTraces("deep", 1, 0, 1)
		nestValue(td.ResourceSpans().At(0).Resource().Attributes().PutEmpty("deep"), levels-1, shape)
		return traceBodies(td)
	}},
	{"a span event attribute", func(levels int, shape string) ([]byte, []byte, error) {
		td := makeTraces("deep", 1, 0, 1)
		ev := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Events().AppendEmpty()
		nestValue(ev.Attributes().PutEmpty("deep"), levels-1, shape)
		return traceBodies(td)
	}},
	{"a log body", func(levels int, shape string) ([]byte, []byte, error) {
		ld := makeLogs(1)
		nestValue(ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).Body(), levels, shape)
		return logBodies(ld)
	}},
	{"a log attribute", func(levels int, shape string) ([]byte, []byte, error) {
		ld := makeLogs(1)
		nestValue(ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).Attributes().PutEmpty("deep"), levels-1, shape)
		return logBodies(ld)
	}},
	{"an exemplar's filtered attribute", func(levels int, shape string) ([]byte, []byte, error) {
		md := makeMetrics(2)
		ex := md.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics().At(0).Gauge().DataPoints().At(0).Exemplars().AppendEmpty()
		nestValue(ex.FilteredAttributes().PutEmpty("deep"), levels-1, shape)
		p, err := (&pmetric.ProtoMarshaler{}).MarshalMetrics(md)
		if err != nil {
			return nil, nil, err
		}
		j, err := (&pmetric.JSONMarshaler{}).MarshalMetrics(md)
		return p, j, err
	}},
}

func traceBodies(td ptrace.Traces) ([]byte, []byte, error) {
	p, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	if err != nil {
		return nil, nil, err
	}
	j, err := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
	return p, j, err
}

func logBodies(ld plog.Logs) ([]byte, []byte, error) {
	p, err := (&plog.ProtoMarshaler{}).MarshalLogs(ld)
	if err != nil {
		return nil, nil, err
	}
	j, err := (&plog.JSONMarshaler{}).MarshalLogs(ld)
	return p, j, err
}

// protoAccepts decodes a protobuf body of the kind deep encodes.
func protoAccepts(name string, body []byte) bool {
	var err error
	switch {
	case strings.HasPrefix(name, "a log"):
		_, err = (&plog.ProtoUnmarshaler{}).UnmarshalLogs(body)
	case strings.HasPrefix(name, "an exemplar"):
		_, err = (&pmetric.ProtoUnmarshaler{}).UnmarshalMetrics(body)
	default:
		_, err = (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(body)
	}
	return err == nil
}

// OTLP/JSON accepts exactly the attribute values the protobuf decoder does: wherever the value
// sits, whatever it nests (maps, arrays, both), 100 levels pass in both encodings and 101 fail
// in both.
func TestJSONValueDepthLimitIsTheProtobufOne(t *testing.T) {
	for _, at := range deepAttributes {
		for _, shape := range []string{"maps", "arrays", "mixed"} {
			for _, levels := range []int{2, 99, 100, 101, 102} {
				pb, js, err := at.encode(levels, shape)
				if err != nil {
					t.Fatal(err)
				}
				wantOK := levels <= maxValueDepth
				if got := protoAccepts(at.name, pb); got != wantOK {
					t.Fatalf("%s, %s, %d levels: protobuf accepts %v, want %v (the test counts levels wrong)", at.name, shape, levels, got, wantOK)
				}
				if err := checkJSONDepth(js); (err == nil) != wantOK {
					t.Errorf("%s, %s, %d levels: JSON check says %v, want accepted %v", at.name, shape, levels, err, wantOK)
				}
			}
		}
	}
}

// deepJSONTraces is a span whose attribute holds maps kvlist levels, then arrays array
// levels, as text: 2 + 3×maps + 2×arrays messages as the protobuf decoder counts them.
func deepJSONTraces(maps, arrays int) []byte {
	var b strings.Builder
	b.WriteString(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"5b8efff798038103d269b633813fc60c","spanId":"eee19b7ec3c1b174","name":"deep","attributes":[{"key":"k","value":`)
	b.WriteString(strings.Repeat(`{"kvlistValue":{"values":[{"key":"k","value":`, maps))
	b.WriteString(strings.Repeat(`{"arrayValue":{"values":[`, arrays))
	b.WriteString(`{"stringValue":"leaf"}`)
	b.WriteString(strings.Repeat(`]}}`, arrays))
	b.WriteString(strings.Repeat(`}]}}`, maps))
	b.WriteString(`}]}]}]}]}`)
	return []byte(b.String())
}

// Over HTTP, a JSON body nesting attribute values past the protobuf limit is a bad request with
// the reason in an OTLP Status, and is refused before decoding, so a value nested 400,000 deep
// costs a few milliseconds; at the limit it is stored.
func TestReceiverRefusesJSONNestedPastTheLimit(t *testing.T) {
	url, st := startReceiver(t, Options{})
	// 2 + 2×49 = 100 levels, the limit.
	if status, body, _ := post(t, url+TracesPath, ctJSON, "", deepJSONTraces(0, 49)); status != http.StatusOK {
		t.Fatalf("a value nested at the limit: status %d %s", status, body)
	}
	if n := countRows(t, st, "otel_traces"); n != 1 {
		t.Errorf("stored %d spans, want 1", n)
	}
	for _, deep := range []struct{ maps, arrays, levels int }{{1, 48, 101}, {0, 400_000, 800_002}} {
		levels, body := deep.levels, deepJSONTraces(deep.maps, deep.arrays)
		start := time.Now()
		status, resp, ct := post(t, url+TracesPath, ctJSON, "", body)
		took := time.Since(start)
		var s rpcStatus
		if err := json.Unmarshal(resp, &s); err != nil || status != http.StatusBadRequest || ct != ctJSON || s.Code != 3 ||
			!strings.Contains(s.Message, "nested too deeply") {
			t.Errorf("%d levels: status %d, %s %s (%v), want 400 with a Status saying it nests too deeply", levels, status, ct, resp, err)
		}
		if took > 2*time.Second { // decoding it whole took 10.5 s: the bound tells the two apart on a busy machine
			t.Errorf("%d levels (%d kB): refused after %s, want it refused before it is decoded", levels, len(body)>>10, took)
		}
		t.Logf("%d levels (%d kB): %d in %s", levels, len(body)>>10, status, took.Round(time.Millisecond))
	}
}
