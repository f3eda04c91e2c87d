package otlp

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
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

// The SDK's OTLP/gRPC exporters, plain and gzip-compressed, reach the store through the gRPC
// receiver under the ids the SDK gave, as the HTTP ones do.
func TestOpenTelemetrySDKGRPCExportersReachTheStore(t *testing.T) {
	ctx := context.Background()
	_, st := startReceiver(t, Options{})
	addr, _ := serveGRPC(t, st, Options{})
	res := resource.NewWithAttributes(semconv.SchemaURL, semconv.ServiceName("grpc-sdk-app"))

	for _, compressor := range []string{"", "gzip"} {
		opts := []otlptracegrpc.Option{otlptracegrpc.WithEndpoint(addr), otlptracegrpc.WithInsecure()}
		if compressor != "" {
			opts = append(opts, otlptracegrpc.WithCompressor(compressor))
		}
		exp, err := otlptracegrpc.New(ctx, opts...)
		if err != nil {
			t.Fatal(err)
		}
		tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp), sdktrace.WithResource(res))
		rootCtx, root := tp.Tracer("sdk-test").Start(ctx, "GET /orders", trace.WithSpanKind(trace.SpanKindServer))
		_, child := tp.Tracer("sdk-test").Start(rootCtx, "SELECT orders", trace.WithSpanKind(trace.SpanKindClient))
		child.SetStatus(codes.Error, "query failed")
		child.End()
		root.End()
		if err := tp.Shutdown(ctx); err != nil {
			t.Fatalf("trace exporter (compressor %q): %v", compressor, err)
		}
		sc := child.SpanContext()
		var parent, status, service string
		if err := st.DB().QueryRow(`SELECT ParentSpanId, StatusCode, ServiceName FROM otel_traces WHERE TraceId = ? AND SpanId = ?`,
			sc.TraceID().String(), sc.SpanID().String()).Scan(&parent, &status, &service); err != nil {
			t.Fatalf("compressor %q: the child span is not stored under the SDK's ids: %v", compressor, err)
		}
		if parent != root.SpanContext().SpanID().String() || status != "Error" || service != "grpc-sdk-app" {
			t.Errorf("compressor %q: child stored with parent %q status %q service %q", compressor, parent, status, service)
		}
	}

	logExp, err := otlploggrpc.New(ctx, otlploggrpc.WithEndpoint(addr), otlploggrpc.WithInsecure(), otlploggrpc.WithCompressor("gzip"))
	if err != nil {
		t.Fatal(err)
	}
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewSimpleProcessor(logExp)), sdklog.WithResource(res))
	var rec otellog.Record
	rec.SetSeverity(otellog.SeverityWarn)
	rec.SetBody(attribute.StringValue("retrying payment"))
	lp.Logger("sdk-test").Emit(ctx, rec)
	if err := lp.Shutdown(ctx); err != nil {
		t.Fatalf("log exporter: %v", err)
	}
	var body, service string
	if err := st.DB().QueryRow(`SELECT Body, ServiceName FROM otel_logs`).Scan(&body, &service); err != nil || body != "retrying payment" || service != "grpc-sdk-app" {
		t.Errorf("log stored as %q from %q (%v)", body, service, err)
	}
}

// busyOnceSink refuses its first batch as a store behind on writes does, then stores.
type busyOnceSink struct {
	Sink
	calls atomic.Int32
}

func (b *busyOnceSink) IngestTraces(ctx context.Context, td ptrace.Traces) (int, int, error) {
	if b.calls.Add(1) == 1 {
		return busySink{}.IngestTraces(ctx, td)
	}
	return b.Sink.IngestTraces(ctx, td)
}

// The SDK exporters honour the receiver's backpressure: refused once with 429 and Retry-After
// (HTTP) or UNAVAILABLE with RetryInfo (gRPC), they wait the delay, send the batch again, and
// it is stored once.
func TestOpenTelemetrySDKExportersRetryAfterBackpressure(t *testing.T) {
	ctx := context.Background()
	// A short initial interval: only the receiver's delay can make the exporter wait a second.
	httpRetry := otlptracehttp.RetryConfig{Enabled: true, InitialInterval: 10 * time.Millisecond, MaxInterval: 5 * time.Second, MaxElapsedTime: 30 * time.Second}
	grpcRetry := otlptracegrpc.RetryConfig(httpRetry)
	exporters := []struct {
		name string
		new  func(t *testing.T, sink Sink) sdktrace.SpanExporter
	}{
		{"otlptracehttp", func(t *testing.T, sink Sink) sdktrace.SpanExporter {
			exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(serveSink(t, sink, Options{})+TracesPath), otlptracehttp.WithRetry(httpRetry))
			if err != nil {
				t.Fatal(err)
			}
			return exp
		}},
		{"otlptracegrpc", func(t *testing.T, sink Sink) sdktrace.SpanExporter {
			addr, _ := serveGRPC(t, sink, Options{})
			exp, err := otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(addr), otlptracegrpc.WithInsecure(), otlptracegrpc.WithRetry(grpcRetry))
			if err != nil {
				t.Fatal(err)
			}
			return exp
		}},
	}
	for _, e := range exporters {
		t.Run(e.name, func(t *testing.T) {
			_, st := startReceiver(t, Options{})
			sink := &busyOnceSink{Sink: st}
			exp := e.new(t, sink)
			tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
			began := time.Now()
			_, span := tp.Tracer("sdk-test").Start(ctx, "job")
			span.End()
			if err := tp.Shutdown(ctx); err != nil {
				t.Fatalf("export after backpressure: %v", err)
			}
			if waited := time.Since(began); waited < 900*time.Millisecond {
				t.Errorf("the exporter retried after %s, before the 1 s delay the receiver asked for", waited)
			}
			if n := sink.calls.Load(); n != 2 {
				t.Errorf("%d exports reached the sink, want 2 (refused, then stored)", n)
			}
			if n := countRows(t, st, "otel_traces"); n != 1 {
				t.Errorf("stored %d spans, want 1", n)
			}
		})
	}
}
