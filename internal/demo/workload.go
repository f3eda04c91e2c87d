// Package demo is `runlens demo`: a small application instrumented with the real OpenTelemetry
// Go SDK sends traces and logs to runlens's receiver, then a runlens server answers an MCP
// client about what happened — the whole path an agent session takes, on one machine, in seconds.
package demo

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	otellog "go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"
	"go.opentelemetry.io/otel/trace"
)

// Workload is the demo application: an HTTP API with database calls and a slow report, and a
// background billing job that sometimes fails.
type Workload struct {
	// Endpoint is the receiver's base URL, e.g. http://127.0.0.1:4318.
	Endpoint string
	// Requests is how many API requests to simulate (default 60).
	Requests int
	// Seed makes the run repeatable.
	Seed uint64
	// Progress is called after each simulated unit of work.
	Progress func(done, total int)
}

// service is one instrumented process of the demo: its tracer and logger providers.
type service struct {
	tp *sdktrace.TracerProvider
	lp *sdklog.LoggerProvider
}

func newService(ctx context.Context, endpoint, name string) (*service, error) {
	res := resource.NewSchemaless(semconv.ServiceName(name), semconv.ServiceVersion("1.4.2"))
	texp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(endpoint+"/v1/traces"))
	if err != nil {
		return nil, fmt.Errorf("trace exporter: %w", err)
	}
	lexp, err := otlploghttp.New(ctx, otlploghttp.WithEndpointURL(endpoint+"/v1/logs"))
	if err != nil {
		return nil, fmt.Errorf("log exporter: %w", err)
	}
	return &service{
		tp: sdktrace.NewTracerProvider(sdktrace.WithBatcher(texp, sdktrace.WithBatchTimeout(200*time.Millisecond)), sdktrace.WithResource(res)),
		lp: sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewBatchProcessor(lexp, sdklog.WithExportInterval(200*time.Millisecond))), sdklog.WithResource(res)),
	}, nil
}

// shutdown flushes everything the service recorded to the receiver.
func (s *service) shutdown(ctx context.Context) error {
	return errors.Join(s.tp.Shutdown(ctx), s.lp.Shutdown(ctx))
}

// Run simulates the workload and flushes it; when it returns nil, the receiver has
// acknowledged every span and log record.
func (w Workload) Run(ctx context.Context) error {
	if w.Requests <= 0 {
		w.Requests = 60
	}
	api, err := newService(ctx, w.Endpoint, "shop-api")
	if err != nil {
		return err
	}
	worker, err := newService(ctx, w.Endpoint, "billing-worker")
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(w.Seed, 42))
	jobs := 4
	total := w.Requests + jobs
	done := 0
	step := func() {
		done++
		if w.Progress != nil {
			w.Progress(done, total)
		}
	}

	tracer := api.tp.Tracer("shop-api/http")
	logger := api.lp.Logger("shop-api/http")
	for i := range w.Requests {
		if err := ctx.Err(); err != nil {
			return err
		}
		switch {
		case i%10 == 9:
			salesReport(ctx, tracer, logger, rng)
		case i%3 == 2:
			checkout(ctx, tracer, logger, rng, i)
		default:
			products(ctx, tracer, logger, rng)
		}
		step()
	}
	jt := worker.tp.Tracer("billing-worker/jobs")
	jl := worker.lp.Logger("billing-worker/jobs")
	for i := range jobs {
		invoiceJob(ctx, jt, jl, rng, i)
		step()
	}
	flushCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	return errors.Join(api.shutdown(flushCtx), worker.shutdown(flushCtx))
}

// at returns a time d after start, so simulated durations need no sleeping.
func at(start time.Time, d time.Duration) trace.SpanStartEventOption {
	return trace.WithTimestamp(start.Add(d))
}

func ms(rng *rand.Rand, lo, hi int) time.Duration {
	return time.Duration(lo+rng.IntN(hi-lo+1)) * time.Millisecond
}

// products is a fast GET that reads the catalog with stable db.* attributes.
func products(ctx context.Context, t trace.Tracer, l otellog.Logger, rng *rand.Rand) {
	start := time.Now()
	ctx, span := t.Start(ctx, "GET /products", trace.WithSpanKind(trace.SpanKindServer), trace.WithTimestamp(start),
		trace.WithAttributes(attribute.String("http.request.method", "GET"), attribute.String("http.route", "/products"), attribute.Int("http.response.status_code", 200)))
	dbDur := ms(rng, 2, 9)
	_, db := t.Start(ctx, "SELECT products", trace.WithSpanKind(trace.SpanKindClient), at(start, time.Millisecond),
		trace.WithAttributes(attribute.String("db.system.name", "postgresql"), attribute.String("db.operation.name", "SELECT"),
			attribute.String("db.collection.name", "products"), attribute.String("db.query.text", fmt.Sprintf("SELECT id, name FROM products WHERE category = '%s' LIMIT 20", []string{"books", "tools", "toys"}[rng.IntN(3)]))))
	db.End(trace.WithTimestamp(start.Add(time.Millisecond + dbDur)))
	emit(ctx, l, otellog.SeverityInfo, "listed products")
	span.End(trace.WithTimestamp(start.Add(dbDur + ms(rng, 3, 8))))
}

// checkout writes an order with legacy db.* attributes and fails now and then.
func checkout(ctx context.Context, t trace.Tracer, l otellog.Logger, rng *rand.Rand, i int) {
	start := time.Now()
	failed := i%9 == 8
	status := 201
	if failed {
		status = 500
	}
	ctx, span := t.Start(ctx, "POST /checkout", trace.WithSpanKind(trace.SpanKindServer), trace.WithTimestamp(start),
		trace.WithAttributes(attribute.String("http.request.method", "POST"), attribute.String("http.route", "/checkout"), attribute.Int("http.response.status_code", status)))
	dbDur := ms(rng, 8, 25)
	_, db := t.Start(ctx, "INSERT orders", trace.WithSpanKind(trace.SpanKindClient), at(start, 2*time.Millisecond),
		trace.WithAttributes(attribute.String("db.system", "postgresql"), attribute.String("db.statement", fmt.Sprintf("INSERT INTO orders (customer_id, total) VALUES (%d, %d.%02d)", 1000+rng.IntN(50), rng.IntN(300), rng.IntN(100)))))
	if failed {
		err := fmt.Errorf("payment declined for order %d: card expired", 5000+i)
		db.End(trace.WithTimestamp(start.Add(2*time.Millisecond + dbDur)))
		span.RecordError(err, trace.WithAttributes(attribute.String("exception.type", "PaymentDeclinedError")))
		span.SetStatus(codes.Error, err.Error())
		emit(ctx, l, otellog.SeverityError, err.Error())
	} else {
		db.End(trace.WithTimestamp(start.Add(2*time.Millisecond + dbDur)))
		emit(ctx, l, otellog.SeverityInfo, "order placed")
	}
	span.End(trace.WithTimestamp(start.Add(dbDur + ms(rng, 10, 30))))
}

// salesReport is the slow path: an unindexed aggregate query.
func salesReport(ctx context.Context, t trace.Tracer, l otellog.Logger, rng *rand.Rand) {
	start := time.Now()
	ctx, span := t.Start(ctx, "GET /reports/sales", trace.WithSpanKind(trace.SpanKindServer), trace.WithTimestamp(start),
		trace.WithAttributes(attribute.String("http.request.method", "GET"), attribute.String("http.route", "/reports/sales"), attribute.Int("http.response.status_code", 200)))
	dbDur := ms(rng, 600, 1400)
	_, db := t.Start(ctx, "SELECT orders", trace.WithSpanKind(trace.SpanKindClient), at(start, 3*time.Millisecond),
		trace.WithAttributes(attribute.String("db.system.name", "postgresql"), attribute.String("db.query.summary", "SELECT orders GROUP BY day"),
			attribute.String("db.query.text", "SELECT date(created_at), sum(total) FROM orders WHERE created_at > now() - interval '90 days' GROUP BY 1")))
	db.End(trace.WithTimestamp(start.Add(3*time.Millisecond + dbDur)))
	emit(ctx, l, otellog.SeverityWarn, "sales report took longer than 500 ms")
	span.End(trace.WithTimestamp(start.Add(dbDur + ms(rng, 20, 60))))
}

// invoiceJob is the background job: the third run fails with exit code 2.
func invoiceJob(ctx context.Context, t trace.Tracer, l otellog.Logger, rng *rand.Rand, i int) {
	// Runs a few milliseconds apart, so "the last run" is the last one started even when the
	// loop runs them within one millisecond (tools order by millisecond).
	start := time.Now().Add(time.Duration(i) * 3 * time.Millisecond)
	failed := i == 2
	status, exit := "succeeded", "0"
	if failed {
		status, exit = "failed", "2"
	}
	ctx, span := t.Start(ctx, "nightly-invoices", trace.WithTimestamp(start),
		trace.WithAttributes(attribute.String("job.id", fmt.Sprintf("inv-%04d", 100+i)), attribute.String("job.name", "nightly-invoices"),
			attribute.String("job.status", status), attribute.String("job.exit_code", exit), attribute.String("faas.trigger", "timer")))
	_, db := t.Start(ctx, "UPDATE invoices", trace.WithSpanKind(trace.SpanKindClient), at(start, 5*time.Millisecond),
		trace.WithAttributes(attribute.String("db.system", "postgresql"), attribute.String("db.operation", "UPDATE"), attribute.String("db.sql.table", "invoices")))
	db.End(trace.WithTimestamp(start.Add(5*time.Millisecond + ms(rng, 40, 90))))
	if failed {
		err := errors.New("smtp: connection refused while mailing invoice 77")
		span.RecordError(err, trace.WithAttributes(attribute.String("exception.type", "MailDeliveryError")))
		span.SetStatus(codes.Error, err.Error())
		emit(ctx, l, otellog.SeverityError, "invoice run failed: "+err.Error())
	} else {
		emit(ctx, l, otellog.SeverityInfo, "invoice run finished")
	}
	span.End(trace.WithTimestamp(start.Add(ms(rng, 150, 300))))
}

// emit writes a log record correlated with the span in ctx.
func emit(ctx context.Context, l otellog.Logger, sev otellog.Severity, msg string) {
	var r otellog.Record
	r.SetTimestamp(time.Now())
	r.SetSeverity(sev)
	r.SetSeverityText(sev.String())
	r.SetBody(attribute.StringValue(msg))
	l.Emit(ctx, r)
}
