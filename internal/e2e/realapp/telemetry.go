package realapp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"go.opentelemetry.io/contrib/bridges/otelslog"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	otellog "go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/propagation"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"
	"go.opentelemetry.io/otel/trace"
)

// propagator is what the services use between them (W3C trace context), passed explicitly so
// the workload touches no global OpenTelemetry state.
var propagator = propagation.TraceContext{}

// process is one instrumented service: its own resource (service.name), tracer and logger
// providers exporting with the real OTLP/HTTP exporters, and an slog logger through the
// OpenTelemetry log bridge. Counting processors in front of the exporters tally what the SDK
// emitted, so the truth includes how many spans and log records there are without asking
// runlens.
type process struct {
	name   string
	tp     *sdktrace.TracerProvider
	lp     *sdklog.LoggerProvider
	tracer trace.Tracer
	log    *slog.Logger
	tally  *tally
}

func newProcess(ctx context.Context, endpoint, name string, t *tally) (*process, error) {
	res := resource.NewSchemaless(semconv.ServiceName(name), semconv.ServiceVersion("2.3.0"))
	texp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(endpoint+"/v1/traces"),
		otlptracehttp.WithTimeout(10*time.Second))
	if err != nil {
		return nil, fmt.Errorf("trace exporter for %s: %w", name, err)
	}
	lexp, err := otlploghttp.New(ctx, otlploghttp.WithEndpointURL(endpoint+"/v1/logs"),
		otlploghttp.WithTimeout(10*time.Second))
	if err != nil {
		return nil, fmt.Errorf("log exporter for %s: %w", name, err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithResource(res),
		sdktrace.WithSpanProcessor(spanCounter{service: name, tally: t}),
		sdktrace.WithBatcher(texp, sdktrace.WithBatchTimeout(200*time.Millisecond)))
	lp := sdklog.NewLoggerProvider(sdklog.WithResource(res),
		sdklog.WithProcessor(logCounter{service: name, tally: t}),
		sdklog.WithProcessor(sdklog.NewBatchProcessor(lexp, sdklog.WithExportInterval(200*time.Millisecond))))
	return &process{
		name: name, tp: tp, lp: lp, tally: t,
		tracer: tp.Tracer("runlens.test/realapp/" + name),
		log:    otelslog.NewLogger("runlens.test/realapp/"+name, otelslog.WithLoggerProvider(lp)),
	}, nil
}

// flush exports everything the process recorded and shuts its providers down; when it returns
// nil the receiver has acknowledged every span and log record.
func (p *process) flush(ctx context.Context) error {
	return errors.Join(p.tp.ForceFlush(ctx), p.lp.ForceFlush(ctx), p.tp.Shutdown(ctx), p.lp.Shutdown(ctx))
}

// tally counts what the SDK emitted, per service and per trace.
type tally struct {
	mu            sync.Mutex
	spans         map[string]int
	spansPerTrace map[trace.TraceID]int
	logs          map[string]int
	logsPerTrace  map[trace.TraceID]int
	// errorLogs counts error records by whether they carry a trace id.
	errorLogsInTrace, errorLogsOutside int
}

func newTally() *tally {
	return &tally{spans: map[string]int{}, spansPerTrace: map[trace.TraceID]int{}, logs: map[string]int{}, logsPerTrace: map[trace.TraceID]int{}}
}

type spanCounter struct {
	service string
	tally   *tally
}

func (c spanCounter) OnStart(context.Context, sdktrace.ReadWriteSpan) {}
func (c spanCounter) OnEnd(s sdktrace.ReadOnlySpan) {
	c.tally.mu.Lock()
	defer c.tally.mu.Unlock()
	c.tally.spans[c.service]++
	c.tally.spansPerTrace[s.SpanContext().TraceID()]++
}
func (c spanCounter) Shutdown(context.Context) error   { return nil }
func (c spanCounter) ForceFlush(context.Context) error { return nil }

type logCounter struct {
	service string
	tally   *tally
}

func (c logCounter) OnEmit(_ context.Context, r *sdklog.Record) error {
	c.tally.mu.Lock()
	defer c.tally.mu.Unlock()
	c.tally.logs[c.service]++
	if r.TraceID().IsValid() {
		c.tally.logsPerTrace[r.TraceID()]++
	}
	if r.Severity() >= otellog.SeverityError {
		if r.TraceID().IsValid() {
			c.tally.errorLogsInTrace++
		} else {
			c.tally.errorLogsOutside++
		}
	}
	return nil
}
func (c logCounter) Enabled(context.Context, sdklog.EnabledParameters) bool { return true }
func (c logCounter) Shutdown(context.Context) error                         { return nil }
func (c logCounter) ForceFlush(context.Context) error                       { return nil }
