package goapp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"go.opentelemetry.io/contrib/bridges/otelslog"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"
	"go.opentelemetry.io/otel/trace"
)

// propagator is what the services use between them (W3C trace context), passed explicitly so
// the app touches no global OpenTelemetry state.
var propagator = propagation.TraceContext{}

// Protocol is how a service exports its telemetry.
type Protocol string

const (
	OTLPHTTP Protocol = "otlp/http"
	OTLPGRPC Protocol = "otlp/grpc"
)

// Endpoints are the receiver's addresses: HTTPURL as http://host:port, GRPCAddr as host:port.
type Endpoints struct {
	HTTPURL  string
	GRPCAddr string
}

// process is one instrumented service: its resource (service.name), its tracer provider and,
// when it logs through OpenTelemetry, its logger provider, exporting with the SDK's OTLP
// exporters. A counting processor in front of each exporter tallies what the SDK emitted.
type process struct {
	name     string
	protocol Protocol
	tp       *sdktrace.TracerProvider
	lp       *sdklog.LoggerProvider // nil for a service that logs through span events only
	tracer   trace.Tracer
	log      *slog.Logger
}

func newProcess(ctx context.Context, ep Endpoints, name string, proto Protocol, withLogs bool, t *tally) (*process, error) {
	res := resource.NewSchemaless(semconv.ServiceName(name), semconv.ServiceVersion("1.4.2"),
		semconv.DeploymentEnvironment("demo"))
	var (
		texp sdktrace.SpanExporter
		lexp sdklog.Exporter
		err  error
	)
	switch proto {
	case OTLPHTTP:
		texp, err = otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(ep.HTTPURL+"/v1/traces"), otlptracehttp.WithTimeout(10*time.Second))
		if err == nil && withLogs {
			lexp, err = otlploghttp.New(ctx, otlploghttp.WithEndpointURL(ep.HTTPURL+"/v1/logs"), otlploghttp.WithTimeout(10*time.Second))
		}
	case OTLPGRPC:
		texp, err = otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(ep.GRPCAddr), otlptracegrpc.WithInsecure(), otlptracegrpc.WithTimeout(10*time.Second))
		if err == nil && withLogs {
			lexp, err = otlploggrpc.New(ctx, otlploggrpc.WithEndpoint(ep.GRPCAddr), otlploggrpc.WithInsecure(), otlploggrpc.WithTimeout(10*time.Second))
		}
	default:
		err = fmt.Errorf("unknown protocol %q", proto)
	}
	if err != nil {
		return nil, fmt.Errorf("exporters for %s: %w", name, err)
	}
	p := &process{name: name, protocol: proto}
	p.tp = sdktrace.NewTracerProvider(sdktrace.WithResource(res),
		sdktrace.WithSpanProcessor(spanCounter{service: name, tally: t}),
		sdktrace.WithBatcher(texp, sdktrace.WithBatchTimeout(200*time.Millisecond)))
	p.tracer = p.tp.Tracer("shop/" + name)
	if withLogs {
		p.lp = sdklog.NewLoggerProvider(sdklog.WithResource(res),
			sdklog.WithProcessor(logCounter{service: name, tally: t}),
			sdklog.WithProcessor(sdklog.NewBatchProcessor(lexp, sdklog.WithExportInterval(200*time.Millisecond))))
		p.log = otelslog.NewLogger("shop/"+name, otelslog.WithLoggerProvider(p.lp))
	}
	return p, nil
}

// flush exports everything the process recorded and shuts its providers down; when it returns
// nil the receiver has acknowledged every span and log record.
func (p *process) flush(ctx context.Context) error {
	errs := []error{p.tp.ForceFlush(ctx), p.tp.Shutdown(ctx)}
	if p.lp != nil {
		errs = append(errs, p.lp.ForceFlush(ctx), p.lp.Shutdown(ctx))
	}
	return errors.Join(errs...)
}

// tally counts what the SDKs emitted, per service and per trace, and keeps a digest of every
// span so a failing assertion can show what was sent.
type tally struct {
	mu            sync.Mutex
	spans         map[string]int
	spansPerTrace map[trace.TraceID]int
	logs          map[string]int
	logsPerTrace  map[trace.TraceID]int
	digests       map[trace.TraceID][]SpanDigest
	logDigests    map[trace.TraceID][]string
}

func newTally() *tally {
	return &tally{spans: map[string]int{}, spansPerTrace: map[trace.TraceID]int{}, logs: map[string]int{},
		logsPerTrace: map[trace.TraceID]int{}, digests: map[trace.TraceID][]SpanDigest{},
		logDigests: map[trace.TraceID][]string{}}
}

// SpanDigest is what the SDK emitted for one span, for diagnosis.
type SpanDigest struct {
	Service, Name, Kind, Status, StatusMessage string
	SpanID, ParentSpanID                       string
	Duration                                   time.Duration
	Attributes                                 map[string]string
	Events                                     []string
}

func (d SpanDigest) String() string {
	s := fmt.Sprintf("%s %s %q kind=%s status=%s", d.SpanID, d.Service, d.Name, d.Kind, d.Status)
	if d.StatusMessage != "" {
		s += fmt.Sprintf(" (%q)", d.StatusMessage)
	}
	s += fmt.Sprintf(" %v parent=%s attrs=%v", d.Duration.Round(time.Microsecond), d.ParentSpanID, d.Attributes)
	for _, e := range d.Events {
		s += "\n      event " + e
	}
	return s
}

type spanCounter struct {
	service string
	tally   *tally
}

func (c spanCounter) OnStart(context.Context, sdktrace.ReadWriteSpan) {}
func (c spanCounter) OnEnd(s sdktrace.ReadOnlySpan) {
	d := SpanDigest{Service: c.service, Name: s.Name(), Kind: s.SpanKind().String(), Status: s.Status().Code.String(),
		StatusMessage: s.Status().Description, SpanID: s.SpanContext().SpanID().String(), Duration: s.EndTime().Sub(s.StartTime()),
		Attributes: map[string]string{}}
	if s.Parent().IsValid() {
		d.ParentSpanID = s.Parent().SpanID().String()
	}
	for _, a := range s.Attributes() {
		d.Attributes[string(a.Key)] = a.Value.String()
	}
	for _, e := range s.Events() {
		attrs := map[string]string{}
		for _, a := range e.Attributes {
			attrs[string(a.Key)] = a.Value.String()
		}
		d.Events = append(d.Events, fmt.Sprintf("%q %v", e.Name, attrs))
	}
	c.tally.mu.Lock()
	defer c.tally.mu.Unlock()
	c.tally.spans[c.service]++
	id := s.SpanContext().TraceID()
	c.tally.spansPerTrace[id]++
	c.tally.digests[id] = append(c.tally.digests[id], d)
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
		attrs := map[string]string{}
		r.WalkAttributes(func(kv attribute.KeyValue) bool {
			attrs[string(kv.Key)] = kv.Value.String()
			return true
		})
		c.tally.logDigests[r.TraceID()] = append(c.tally.logDigests[r.TraceID()],
			fmt.Sprintf("%s log %s %q span=%s %v", c.service, r.Severity(), r.Body().String(), r.SpanID(), attrs))
	}
	return nil
}
func (c logCounter) Enabled(context.Context, sdklog.EnabledParameters) bool { return true }
func (c logCounter) Shutdown(context.Context) error                         { return nil }
func (c logCounter) ForceFlush(context.Context) error                       { return nil }
