package e2e

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	otellog "go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/runlens/runlens/internal/otlp"
)

// The OpenTelemetry Go SDK is driven from the fixture's OTLP payloads rather than its model, so
// whatever the fixture puts on the wire (resources, scopes, kinds, typed attributes, status,
// events, links, log severities and bodies) is what the SDK is asked to send. Spans go in as
// tracetest.SpanStub snapshots straight to the exporter: a TracerProvider would mint its own
// ids and clock. A span stub carries exactly the resource it is given, so the span the fixture
// sends without service.name leaves the SDK without one too (a TracerProvider would have
// added the SDK's default unknown_service name). Log records go through a real LoggerProvider
// and batch processor, one provider per resource since the resource is the provider's.

// sendSDKTraces exports every span of td through the otlptracehttp exporter to baseURL.
func sendSDKTraces(ctx context.Context, baseURL string, td ptrace.Traces) error {
	stubs, err := spanStubs(td)
	if err != nil {
		return err
	}
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(baseURL+otlp.TracesPath),
		otlptracehttp.WithTimeout(10*time.Second), otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false}))
	if err != nil {
		return fmt.Errorf("trace exporter: %w", err)
	}
	if err := exp.ExportSpans(ctx, stubs.Snapshots()); err != nil {
		_ = exp.Shutdown(ctx)
		return fmt.Errorf("export spans: %w", err)
	}
	if err := exp.Shutdown(ctx); err != nil {
		return fmt.Errorf("shut down trace exporter: %w", err)
	}
	return nil
}

// spanStubs converts every span of td, with its resource and scope, to a SDK span stub.
func spanStubs(td ptrace.Traces) (tracetest.SpanStubs, error) {
	var stubs tracetest.SpanStubs
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		rs := td.ResourceSpans().At(i)
		res, err := sdkResource(rs.Resource(), rs.SchemaUrl())
		if err != nil {
			return nil, err
		}
		for j := 0; j < rs.ScopeSpans().Len(); j++ {
			ss := rs.ScopeSpans().At(j)
			scope, err := sdkScope(ss.Scope(), ss.SchemaUrl())
			if err != nil {
				return nil, err
			}
			for k := 0; k < ss.Spans().Len(); k++ {
				stub, err := spanStub(ss.Spans().At(k))
				if err != nil {
					return nil, err
				}
				stub.Resource, stub.InstrumentationScope = res, scope
				stubs = append(stubs, stub)
			}
		}
	}
	return stubs, nil
}

func spanStub(sp ptrace.Span) (tracetest.SpanStub, error) {
	attrs, err := keyValues(sp.Attributes())
	if err != nil {
		return tracetest.SpanStub{}, fmt.Errorf("span %s attributes: %w", sp.Name(), err)
	}
	sc, err := spanContext(sp.TraceID(), sp.SpanID(), sp.Flags(), sp.TraceState().AsRaw())
	if err != nil {
		return tracetest.SpanStub{}, fmt.Errorf("span %s: %w", sp.Name(), err)
	}
	stub := tracetest.SpanStub{
		Name: sp.Name(), SpanContext: sc, SpanKind: spanKind(sp.Kind()),
		StartTime: sp.StartTimestamp().AsTime(), EndTime: sp.EndTimestamp().AsTime(),
		Attributes: attrs, Status: sdktrace.Status{Code: statusCode(sp.Status().Code()), Description: sp.Status().Message()},
	}
	if !sp.ParentSpanID().IsEmpty() {
		stub.Parent = trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID(sp.TraceID()), SpanID: trace.SpanID(sp.ParentSpanID())})
	}
	for i := 0; i < sp.Events().Len(); i++ {
		ev := sp.Events().At(i)
		evAttrs, err := keyValues(ev.Attributes())
		if err != nil {
			return tracetest.SpanStub{}, fmt.Errorf("span %s event %s: %w", sp.Name(), ev.Name(), err)
		}
		stub.Events = append(stub.Events, sdktrace.Event{Name: ev.Name(), Time: ev.Timestamp().AsTime(), Attributes: evAttrs})
	}
	for i := 0; i < sp.Links().Len(); i++ {
		l := sp.Links().At(i)
		lsc, err := spanContext(l.TraceID(), l.SpanID(), l.Flags(), l.TraceState().AsRaw())
		if err != nil {
			return tracetest.SpanStub{}, fmt.Errorf("span %s link: %w", sp.Name(), err)
		}
		lAttrs, err := keyValues(l.Attributes())
		if err != nil {
			return tracetest.SpanStub{}, fmt.Errorf("span %s link: %w", sp.Name(), err)
		}
		stub.Links = append(stub.Links, sdktrace.Link{SpanContext: lsc, Attributes: lAttrs})
	}
	return stub, nil
}

func spanContext(tid pcommon.TraceID, sid pcommon.SpanID, flags uint32, state string) (trace.SpanContext, error) {
	ts, err := trace.ParseTraceState(state)
	if err != nil {
		return trace.SpanContext{}, fmt.Errorf("trace state %q: %w", state, err)
	}
	return trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID(tid), SpanID: trace.SpanID(sid), TraceFlags: trace.TraceFlags(flags & 0xff), TraceState: ts,
	}), nil
}

func spanKind(k ptrace.SpanKind) trace.SpanKind {
	switch k {
	case ptrace.SpanKindInternal:
		return trace.SpanKindInternal
	case ptrace.SpanKindServer:
		return trace.SpanKindServer
	case ptrace.SpanKindClient:
		return trace.SpanKindClient
	case ptrace.SpanKindProducer:
		return trace.SpanKindProducer
	case ptrace.SpanKindConsumer:
		return trace.SpanKindConsumer
	default:
		return trace.SpanKindUnspecified
	}
}

func statusCode(c ptrace.StatusCode) codes.Code {
	switch c {
	case ptrace.StatusCodeOk:
		return codes.Ok
	case ptrace.StatusCodeError:
		return codes.Error
	default:
		return codes.Unset
	}
}

func sdkResource(r pcommon.Resource, schemaURL string) (*resource.Resource, error) {
	attrs, err := keyValues(r.Attributes())
	if err != nil {
		return nil, fmt.Errorf("resource attributes: %w", err)
	}
	if schemaURL == "" {
		return resource.NewSchemaless(attrs...), nil
	}
	return resource.NewWithAttributes(schemaURL, attrs...), nil
}

func sdkScope(s pcommon.InstrumentationScope, schemaURL string) (instrumentation.Scope, error) {
	attrs, err := keyValues(s.Attributes())
	if err != nil {
		return instrumentation.Scope{}, fmt.Errorf("scope %s attributes: %w", s.Name(), err)
	}
	return instrumentation.Scope{Name: s.Name(), Version: s.Version(), SchemaURL: schemaURL, Attributes: attribute.NewSet(attrs...)}, nil
}

// keyValues converts an OTLP attribute map to SDK attributes of the same types, in key order.
func keyValues(m pcommon.Map) ([]attribute.KeyValue, error) {
	out := make([]attribute.KeyValue, 0, m.Len())
	var err error
	m.Range(func(k string, v pcommon.Value) bool {
		var av attribute.Value
		if av, err = attrValue(v); err != nil {
			err = fmt.Errorf("%s: %w", k, err)
			return false
		}
		out = append(out, attribute.KeyValue{Key: attribute.Key(k), Value: av})
		return true
	})
	return out, err
}

// attrValue converts one OTLP value, keeping its type (an integer stays an integer).
func attrValue(v pcommon.Value) (attribute.Value, error) {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		return attribute.StringValue(v.Str()), nil
	case pcommon.ValueTypeInt:
		return attribute.Int64Value(v.Int()), nil
	case pcommon.ValueTypeDouble:
		return attribute.Float64Value(v.Double()), nil
	case pcommon.ValueTypeBool:
		return attribute.BoolValue(v.Bool()), nil
	case pcommon.ValueTypeBytes:
		return attribute.ByteSliceValue(v.Bytes().AsRaw()), nil
	case pcommon.ValueTypeSlice:
		items := make([]attribute.Value, 0, v.Slice().Len())
		for i := 0; i < v.Slice().Len(); i++ {
			item, err := attrValue(v.Slice().At(i))
			if err != nil {
				return attribute.Value{}, err
			}
			items = append(items, item)
		}
		return attribute.SliceValue(items...), nil
	case pcommon.ValueTypeMap:
		kvs, err := keyValues(v.Map())
		if err != nil {
			return attribute.Value{}, err
		}
		return attribute.MapValue(kvs...), nil
	case pcommon.ValueTypeEmpty:
		return attribute.Value{}, nil
	}
	return attribute.Value{}, fmt.Errorf("unsupported attribute type %s", v.Type())
}

// sendSDKLogs emits every record of ld through an SDK LoggerProvider per resource, exporting
// with otlploghttp to baseURL, and flushes by shutting the providers down.
func sendSDKLogs(ctx context.Context, baseURL string, ld plog.Logs) error {
	for i := 0; i < ld.ResourceLogs().Len(); i++ {
		rl := ld.ResourceLogs().At(i)
		res, err := sdkResource(rl.Resource(), rl.SchemaUrl())
		if err != nil {
			return err
		}
		exp, err := otlploghttp.New(ctx, otlploghttp.WithEndpointURL(baseURL+otlp.LogsPath),
			otlploghttp.WithTimeout(10*time.Second), otlploghttp.WithRetry(otlploghttp.RetryConfig{Enabled: false}))
		if err != nil {
			return fmt.Errorf("log exporter: %w", err)
		}
		lp := sdklog.NewLoggerProvider(sdklog.WithResource(res), sdklog.WithProcessor(sdklog.NewBatchProcessor(exp)))
		emitErr := emitScopes(ctx, lp, rl.ScopeLogs())
		if err := lp.Shutdown(ctx); err != nil {
			return fmt.Errorf("flush logs: %w", err)
		}
		if emitErr != nil {
			return emitErr
		}
	}
	return nil
}

func emitScopes(ctx context.Context, lp *sdklog.LoggerProvider, sls plog.ScopeLogsSlice) error {
	for j := 0; j < sls.Len(); j++ {
		sl := sls.At(j)
		scopeAttrs, err := keyValues(sl.Scope().Attributes())
		if err != nil {
			return fmt.Errorf("log scope %s: %w", sl.Scope().Name(), err)
		}
		logger := lp.Logger(sl.Scope().Name(), otellog.WithInstrumentationVersion(sl.Scope().Version()),
			otellog.WithSchemaURL(sl.SchemaUrl()), otellog.WithInstrumentationAttributes(scopeAttrs...))
		for k := 0; k < sl.LogRecords().Len(); k++ {
			lr := sl.LogRecords().At(k)
			rec, err := logRecord(lr)
			if err != nil {
				return err
			}
			logger.Emit(recordContext(ctx, lr), rec)
		}
	}
	return nil
}

// recordContext carries the record's span context, the only way the SDK sets a record's trace
// and span ids. A record with a trace id but no span id cannot be sent by the SDK at all (its
// span context is invalid); the fixture has none.
func recordContext(ctx context.Context, lr plog.LogRecord) context.Context {
	if lr.TraceID().IsEmpty() {
		return ctx
	}
	return trace.ContextWithSpanContext(ctx, trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID(lr.TraceID()), SpanID: trace.SpanID(lr.SpanID()), TraceFlags: trace.TraceFlags(lr.Flags() & 0xff),
	}))
}

func logRecord(lr plog.LogRecord) (otellog.Record, error) {
	var rec otellog.Record
	if lr.Timestamp() != 0 {
		rec.SetTimestamp(lr.Timestamp().AsTime())
	}
	if lr.ObservedTimestamp() != 0 {
		rec.SetObservedTimestamp(lr.ObservedTimestamp().AsTime())
	}
	rec.SetSeverity(otellog.Severity(lr.SeverityNumber()))
	rec.SetSeverityText(lr.SeverityText())
	rec.SetEventName(lr.EventName())
	body, err := attrValue(lr.Body())
	if err != nil {
		return rec, fmt.Errorf("log body: %w", err)
	}
	rec.SetBody(body)
	attrs, err := keyValues(lr.Attributes())
	if err != nil {
		return rec, fmt.Errorf("log attributes: %w", err)
	}
	rec.AddAttributes(attrs...)
	return rec, nil
}
