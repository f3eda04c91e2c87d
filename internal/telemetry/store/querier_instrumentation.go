package store

import (
	"context"
	"errors"

	"github.com/runlens/runlens/internal/telemetry"
)

// Instrumentation implements telemetry.Source until the store answers through the engine.
func (q *Querier) Instrumentation(context.Context, telemetry.InstrumentationQuery) (telemetry.Instrumentation, error) {
	return telemetry.Instrumentation{}, errors.New("instrumentation sampling needs the engine")
}

// Spans implements telemetry.Source until the store answers through the engine.
func (q *Querier) Spans(context.Context, []telemetry.SpanRef) ([]telemetry.SpanRow, error) {
	return nil, errors.New("span lookups need the engine")
}

// Invocation implements telemetry.Source until the store answers through the engine.
func (q *Querier) Invocation(context.Context, telemetry.InvocationQuery) (telemetry.InvocationReport, error) {
	return telemetry.InvocationReport{}, errors.New("invocation reports need the engine")
}
