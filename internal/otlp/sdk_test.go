package otlp

import (
	"context"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	otellog "go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// The OpenTelemetry Go SDK's own OTLP/HTTP exporters — a client nobody here wrote — send to the
// receiver, and what they sent is stored under the same hex ids the SDK gave it.
func TestOpenTelemetrySDKExportersReachTheStore(t *testing.T) {
	ctx := context.Background()
	url, st := startReceiver(t, Options{})
	res := resource.NewWithAttributes(semconv.SchemaURL, semconv.ServiceName("sdk-app"))

	for _, compression := range []otlptracehttp.Compression{otlptracehttp.NoCompression, otlptracehttp.GzipCompression} {
		exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(url+TracesPath), otlptracehttp.WithCompression(compression))
		if err != nil {
			t.Fatal(err)
		}
		tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp), sdktrace.WithResource(res))
		tracer := tp.Tracer("sdk-test")
		rootCtx, root := tracer.Start(ctx, "GET /orders", trace.WithSpanKind(trace.SpanKindServer),
			trace.WithAttributes(attribute.Int("http.response.status_code", 500)))
		_, child := tracer.Start(rootCtx, "SELECT orders", trace.WithSpanKind(trace.SpanKindClient))
		child.RecordError(errTest)
		child.SetStatus(codes.Error, "query failed")
		child.End()
		root.End()
		if err := tp.Shutdown(ctx); err != nil {
			t.Fatalf("trace exporter (compression %d): %v", compression, err)
		}

		rootSC, childSC := root.SpanContext(), child.SpanContext()
		var kind, parent, status, events, attrs, service string
		err = st.DB().QueryRow(`SELECT SpanKind, ParentSpanId, StatusCode, EventsJSON, ServiceName
			FROM otel_traces WHERE TraceId = ? AND SpanId = ?`,
			childSC.TraceID().String(), childSC.SpanID().String()).Scan(&kind, &parent, &status, &events, &service)
		if err != nil {
			t.Fatalf("the child span %s/%s is not stored under the SDK's ids: %v", childSC.TraceID(), childSC.SpanID(), err)
		}
		if kind != "Client" || parent != rootSC.SpanID().String() || status != "Error" || service != "sdk-app" ||
			!strings.Contains(events, `"Name":"exception"`) {
			t.Errorf("child stored as kind %q parent %q status %q service %q events %s", kind, parent, status, service, events)
		}
		if err := st.DB().QueryRow(`SELECT SpanAttributes FROM otel_traces WHERE SpanId = ? AND IsRoot = 1`,
			rootSC.SpanID().String()).Scan(&attrs); err != nil || !strings.Contains(attrs, `"http.response.status_code":"500"`) {
			t.Errorf("root span attributes %s (%v)", attrs, err)
		}
	}

	logExp, err := otlploghttp.New(ctx, otlploghttp.WithEndpointURL(url+LogsPath))
	if err != nil {
		t.Fatal(err)
	}
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewSimpleProcessor(logExp)), sdklog.WithResource(res))
	tp := sdktrace.NewTracerProvider(sdktrace.WithResource(res))
	spanCtx, span := tp.Tracer("sdk-test").Start(ctx, "job")
	var rec otellog.Record
	rec.SetSeverity(otellog.SeverityError)
	rec.SetSeverityText("ERROR")
	rec.SetBody(attribute.StringValue("payment declined"))
	rec.AddAttributes(attribute.Int("attempt", 2))
	lp.Logger("sdk-test").Emit(spanCtx, rec)
	span.End()
	if err := lp.Shutdown(ctx); err != nil {
		t.Fatalf("log exporter: %v", err)
	}
	sc := span.SpanContext()
	var body, sev, logAttrs string
	var isErr int
	err = st.DB().QueryRow(`SELECT Body, SeverityText, LogAttributes, IsError FROM otel_logs WHERE TraceId = ? AND SpanId = ?`,
		sc.TraceID().String(), sc.SpanID().String()).Scan(&body, &sev, &logAttrs, &isErr)
	if err != nil {
		t.Fatalf("the log record is not stored under the SDK's trace and span ids: %v", err)
	}
	if body != "payment declined" || sev != "ERROR" || isErr != 1 || logAttrs != `{"attempt":"2"}` {
		t.Errorf("log stored as body %q severity %q error %d attributes %s", body, sev, isErr, logAttrs)
	}
}

type testError struct{}

func (testError) Error() string { return "connection reset" }

var errTest = testError{}
