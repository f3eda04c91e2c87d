// Command failprog is a test program instrumented with the OpenTelemetry Go SDK, configured
// only by the standard OTEL_* environment: it runs a "test" that panics in applyDiscount,
// records the panic with its stack trace on the failing span, and exits 1 — what a failing
// test run looks like to runlens's execute_command.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
	"go.opentelemetry.io/otel/trace"
)

func main() {
	ctx := context.Background()
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "exporter:", err)
		os.Exit(2)
	}
	res, err := resource.New(ctx, resource.WithFromEnv(), resource.WithAttributes(semconv.ServiceName("cart-tests")))
	if err != nil {
		fmt.Fprintln(os.Stderr, "resource:", err)
		os.Exit(2)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	tracer := tp.Tracer("failprog")
	ctx, run := tracer.Start(ctx, "TestCheckout", trace.WithSpanKind(trace.SpanKindServer))
	err = checkout(ctx, tracer, 3)
	if err != nil {
		run.RecordError(err)
		run.SetStatus(codes.Error, err.Error())
	}
	run.End()
	if err := tp.Shutdown(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "flush:", err)
	}
	if err != nil {
		fmt.Println("--- FAIL: TestCheckout")
		os.Exit(1)
	}
}

// checkout applies a discount, recovering the panic applyDiscount raises into an error
// recorded with the stack trace of where it happened.
func checkout(ctx context.Context, tracer trace.Tracer, items int) (err error) {
	_, span := tracer.Start(ctx, "apply discount", trace.WithAttributes(attribute.Int("cart.items", items)))
	defer span.End()
	defer func() {
		if r := recover(); r != nil {
			err = errors.New(fmt.Sprint(r))
			span.RecordError(err, trace.WithStackTrace(true))
			span.SetStatus(codes.Error, err.Error())
		}
	}()
	fmt.Println("total:", applyDiscount(100*items, 0))
	return nil
}

func applyDiscount(total, percent int) int {
	return total / percent * 100
}
