package doctor

import (
	"context"
	"fmt"
	"time"

	"github.com/runlens/runlens/internal/telemetry/store"
)

// instrumentationLookback is how far back the instrumentation checks read.
const instrumentationLookback = 24 * time.Hour

// instrumentationChecks look at what the app sends, in the embedded store: services seen, spans
// without service.name, clock skew, legacy database attribute names, and error logs whose trace
// was sampled away. Each query reads one day of data through indexes, bounded by LIMITs.
func instrumentationChecks(ctx context.Context, d Deps) ([]Check, error) {
	if d.Store == nil {
		return []Check{{Name: "instrumentation_embedded", Status: Pass, Summary: "Instrumentation checks read the embedded store; the configured source is remote."}}, nil
	}
	st, err := d.Store(ctx)
	if err != nil {
		return []Check{{Name: "instrumentation_store", Status: Fail, Summary: "The embedded store cannot be opened.", Fix: "See the store checks."}}, nil
	}
	db := st.DB()
	now := d.Now()
	since := now.Add(-instrumentationLookback).UnixNano()

	var services, spans, unnamed int64
	err = db.QueryRowContext(ctx, `SELECT COUNT(DISTINCT ServiceName), COUNT(*), COALESCE(SUM(ServiceName = ''), 0)
		FROM `+store.TracesTable+` WHERE Timestamp >= ?`, since).Scan(&services, &spans, &unnamed)
	if err != nil {
		return nil, fmt.Errorf("count services: %w", err)
	}
	metrics := metricsCheck(ctx, d, spans)
	if spans == 0 {
		checks := []Check{{Name: "services_seen", Status: Warn, Summary: "No spans arrived in the last 24 h.",
			Fix: "Instrument the app with OpenTelemetry and export to http://" + d.ReceiverAddr + "."}}
		if metrics != nil {
			checks = append(checks, *metrics)
		}
		return checks, nil
	}
	checks := []Check{{Name: "services_seen", Status: Pass, Summary: fmt.Sprintf("%d service(s) sent %d spans in the last 24 h.", services, spans)}}
	if metrics != nil {
		checks = append(checks, *metrics)
	}

	if unnamed > 0 {
		checks = append(checks, Check{Name: "service_name_set", Status: Warn,
			Summary: fmt.Sprintf("%d span(s) have no service.name and show as unknown.", unnamed),
			Fix:     "Set OTEL_SERVICE_NAME (or the service.name resource attribute) in every instrumented process."})
	} else {
		checks = append(checks, Check{Name: "service_name_set", Status: Pass, Summary: "Every span carries service.name."})
	}

	var future int64
	skew := now.Add(time.Minute).UnixNano()
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+store.TracesTable+` WHERE Timestamp > ?`, skew).Scan(&future); err != nil {
		return nil, fmt.Errorf("count future spans: %w", err)
	}
	if future > 0 {
		checks = append(checks, Check{Name: "clock_skew", Status: Warn,
			Summary: fmt.Sprintf("%d span(s) start more than a minute in the future.", future),
			Fix:     "Synchronise the clock of the machine or container that runs the app (NTP)."})
	} else {
		checks = append(checks, Check{Name: "clock_skew", Status: Pass, Summary: "No span starts in the future."})
	}

	var legacy, stable int64
	err = db.QueryRowContext(ctx, `SELECT
		COALESCE(SUM(instr(SpanAttributes, '"db.statement"') > 0 OR instr(SpanAttributes, '"db.system"') > 0), 0),
		COALESCE(SUM(instr(SpanAttributes, '"db.query.text"') > 0 OR instr(SpanAttributes, '"db.system.name"') > 0), 0)
		FROM (SELECT SpanAttributes FROM `+store.TracesTable+` WHERE Timestamp >= ? AND instr(SpanAttributes, '"db.') > 0 LIMIT 100000)`, since).Scan(&legacy, &stable)
	if err != nil {
		return nil, fmt.Errorf("count database attribute names: %w", err)
	}
	switch {
	case legacy > 0:
		checks = append(checks, Check{Name: "db_attribute_names", Status: Warn,
			Summary: fmt.Sprintf("%d database span(s) use the legacy db.statement/db.system names (%d use the stable ones); both are understood.", legacy, stable),
			Fix:     "Set OTEL_SEMCONV_STABILITY_OPT_IN=database in the app to emit the stable db.* names."})
	case stable > 0:
		checks = append(checks, Check{Name: "db_attribute_names", Status: Pass, Summary: fmt.Sprintf("%d database span(s) use the stable db.* names.", stable)})
	}

	var orphaned int64
	err = db.QueryRowContext(ctx, `SELECT COUNT(*) FROM (SELECT l.TraceId FROM `+store.LogsTable+` l
		WHERE l.IsError = 1 AND l.Timestamp >= ? AND l.TraceId != ''
		AND NOT EXISTS (SELECT 1 FROM `+store.TracesTable+` t WHERE t.TraceId = l.TraceId) LIMIT 10000)`, since).Scan(&orphaned)
	if err != nil {
		return nil, fmt.Errorf("count error logs without spans: %w", err)
	}
	if orphaned > 0 {
		checks = append(checks, Check{Name: "sampling_keeps_errors", Status: Warn,
			Summary: fmt.Sprintf("%d error log(s) belong to traces whose spans never arrived: sampling may be hiding failures.", orphaned),
			Fix:     "Sample with parentbased_always_on while debugging (OTEL_TRACES_SAMPLER), or keep error traces in the collector's tail sampling."})
	} else {
		checks = append(checks, Check{Name: "sampling_keeps_errors", Status: Pass, Summary: "Every error log's trace has its spans."})
	}
	return checks, nil
}

// metricsCheck reports metrics the receiver dropped, nil when none arrived. An app that sends
// only metrics would otherwise look healthy but silent: its exporter succeeds, and no span
// ever arrives.
func metricsCheck(ctx context.Context, d Deps, spans int64) *Check {
	if d.MetricPointsDropped == nil {
		return nil
	}
	n := d.MetricPointsDropped(ctx)
	if n <= 0 {
		return nil
	}
	if spans == 0 {
		return &Check{Name: "metrics_dropped", Status: Warn,
			Summary: fmt.Sprintf("The app sends metrics (%d data points since the receiver started), which runlens does not keep, and no spans: send traces and logs.", n),
			Fix:     "Turn on the app's trace and log exporters (OTEL_TRACES_EXPORTER=otlp, OTEL_LOGS_EXPORTER=otlp) towards http://" + d.ReceiverAddr + ", and set OTEL_METRICS_EXPORTER=none to stop sending metrics."}
	}
	return &Check{Name: "metrics_dropped", Status: Pass,
		Summary: fmt.Sprintf("%d metric data points were dropped since the receiver started: runlens keeps traces and logs only (set OTEL_METRICS_EXPORTER=none to stop sending them).", n)}
}
