package doctor

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/runlens/runlens/internal/telemetry"
)

// instrumentationLookback is how far back the instrumentation checks read.
const instrumentationLookback = 24 * time.Hour

// instrumentationChecks look at what the app sends, through the telemetry source: services
// seen, spans without service.name, clock skew, legacy database attribute names, and error
// logs whose trace was sampled away. They judge a bounded sample of the newest data (the
// engine reads at most 20,000 spans and 5,000 error logs) and say when it was a sample.
func instrumentationChecks(ctx context.Context, d Deps) ([]Check, error) {
	if d.Telemetry == nil {
		return []Check{{Name: "instrumentation_source", Status: Warn, Summary: "No telemetry source is configured.", Fix: "See the source checks."}}, nil
	}
	now := d.Now()
	in, err := d.Telemetry.Instrumentation(ctx, telemetry.InstrumentationQuery{
		Window: telemetry.Window{StartMs: now.Add(-instrumentationLookback).UnixMilli(), EndMs: now.UnixMilli() + 1},
		NowMs:  now.UnixMilli(),
	})
	if err != nil {
		return []Check{{Name: "instrumentation_source", Status: Fail, Summary: "The telemetry source cannot be read.", Fix: "See the source checks."}}, nil
	}
	metrics := metricsCheck(ctx, d, in.Spans)
	if in.Spans == 0 {
		checks := []Check{{Name: "services_seen", Status: Warn, Summary: "No spans arrived in the last 24 h.",
			Fix: "Instrument the app with OpenTelemetry and export to http://" + d.ReceiverAddr + "."}}
		if metrics != nil {
			checks = append(checks, *metrics)
		}
		return checks, nil
	}
	sample := fmt.Sprintf("%d spans", in.Spans)
	if in.Limited {
		sample = fmt.Sprintf("the newest %d spans", in.Spans)
	}
	checks := []Check{{Name: "services_seen", Status: Pass, Summary: fmt.Sprintf("%d service(s) in %s of the last 24 h.", len(in.Services), sample)}}
	if metrics != nil {
		checks = append(checks, *metrics)
	}

	if in.Unnamed > 0 {
		checks = append(checks, Check{Name: "service_name_set", Status: Warn,
			Summary: fmt.Sprintf("%d of %s have no service.name and show as unknown.", in.Unnamed, sample),
			Fix:     "Set OTEL_SERVICE_NAME (or the service.name resource attribute) in every instrumented process."})
	} else {
		checks = append(checks, Check{Name: "service_name_set", Status: Pass, Summary: "Every span carries service.name."})
	}
	if in.Future > 0 {
		checks = append(checks, Check{Name: "clock_skew", Status: Warn,
			Summary: fmt.Sprintf("%d span(s) start more than a minute in the future.", in.Future),
			Fix:     "Synchronise the clock of the machine or container that runs the app (NTP)."})
	} else {
		checks = append(checks, Check{Name: "clock_skew", Status: Pass, Summary: "No span starts in the future."})
	}
	switch {
	case in.LegacyDB > 0:
		checks = append(checks, Check{Name: "db_attribute_names", Status: Warn,
			Summary: fmt.Sprintf("%d database span(s) use the legacy db.statement/db.system names (%d use the stable ones); both are understood.", in.LegacyDB, in.StableDB),
			Fix:     "Set OTEL_SEMCONV_STABILITY_OPT_IN=database in the app to emit the stable db.* names."})
	case in.StableDB > 0:
		checks = append(checks, Check{Name: "db_attribute_names", Status: Pass, Summary: fmt.Sprintf("%d database span(s) use the stable db.* names.", in.StableDB)})
	}
	if in.DBLookalikes > 0 {
		fix := "Add the attribute key that holds the statement to the conventions in runlens.json, e.g. " +
			`{"conventions": {"db": {"keyPrefixes": ["db.", "sql.", "<prefix>."], "statementKeys": ["db.query.text", "db.statement", "sql.query", "<key>"]}}}` +
			" (docs/conventions.md), or emit db.query.text and db.system.name."
		if len(in.DBLookalikeKeys) > 0 {
			fix = fmt.Sprintf("Their statements are under %s: add that key to \"statementKeys\" and its prefix to \"keyPrefixes\" under \"conventions\": {\"db\": …} in runlens.json (docs/conventions.md), or emit db.query.text and db.system.name.",
				strings.Join(in.DBLookalikeKeys, ", "))
		}
		checks = append(checks, Check{Name: "db_spans_recognized", Status: Warn,
			Summary: fmt.Sprintf("%d client span(s) look like database calls but are not counted as database operations (%s).",
				in.DBLookalikes, strings.Join(in.DBLookalikeSpans, "; ")),
			Fix: fix})
	}
	if in.Orphaned > 0 {
		checks = append(checks, Check{Name: "sampling_keeps_errors", Status: Warn,
			Summary: fmt.Sprintf("%d of %d error log(s) belong to traces whose spans never arrived: sampling may be hiding failures.", in.Orphaned, in.ErrorLogs),
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
