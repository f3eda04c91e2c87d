package e2e

import (
	"context"
	"testing"

	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/runlens/runlens/internal/otlp"
	"github.com/runlens/runlens/internal/telemetry/fixture"
	"github.com/runlens/runlens/internal/telemetry/store"
)

// way is one way of getting the fixture into a fresh store.
type way struct {
	name string
	load func(t *testing.T, d *fixture.Dataset) *store.Store
	// sdk is true when the client is the OpenTelemetry Go SDK, which cannot send a few
	// things as given (see acceptSDKLimits).
	sdk bool
}

// ways lists the reference first: every other way's answers are compared with its answers.
var ways = []way{
	{name: "direct", load: loadDirect},
	{name: "sdk exporters", load: loadSDK, sdk: true},
	{name: "otlp json", load: loadJSON},
	{name: "gzip protobuf", load: loadGzipProtobuf},
	{name: "grpc protobuf", load: loadGRPC(false)},
	{name: "grpc gzip protobuf", load: loadGRPC(true)},
	{name: "sdk grpc exporters", load: loadSDKGRPC, sdk: true},
}

// loadDirect stores the fixture with IngestTraces and IngestLogs, no receiver involved.
func loadDirect(t *testing.T, d *fixture.Dataset) *store.Store {
	st := openStore(t)
	ctx := context.Background()
	if accepted, rejected, err := st.IngestTraces(ctx, d.Traces); err != nil || rejected != 0 || accepted != d.Traces.SpanCount() {
		t.Fatalf("ingest traces: accepted %d of %d, rejected %d: %v", accepted, d.Traces.SpanCount(), rejected, err)
	}
	if accepted, rejected, err := st.IngestLogs(ctx, d.Logs); err != nil || rejected != 0 || accepted != d.Logs.LogRecordCount() {
		t.Fatalf("ingest logs: accepted %d of %d, rejected %d: %v", accepted, d.Logs.LogRecordCount(), rejected, err)
	}
	return st
}

// loadSDK sends the fixture through the receiver with the OpenTelemetry Go SDK exporters.
func loadSDK(t *testing.T, d *fixture.Dataset) *store.Store {
	st := openStore(t)
	url, log := serveReceiver(t, st)
	ctx := context.Background()
	if err := sendSDKTraces(ctx, url, d.Traces); err != nil {
		t.Fatal(err)
	}
	if err := sendSDKLogs(ctx, url, d.Logs); err != nil {
		t.Fatal(err)
	}
	log.check(t)
	return st
}

// loadJSON posts the fixture as OTLP/JSON, whose trace and span ids are hex strings.
func loadJSON(t *testing.T, d *fixture.Dataset) *store.Store {
	st := openStore(t)
	url, log := serveReceiver(t, st)
	traces, err := ptraceotlp.NewExportRequestFromTraces(d.Traces).MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	logs, err := plogotlp.NewExportRequestFromLogs(d.Logs).MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	post(t, url+otlp.TracesPath, "application/json", false, traces)
	post(t, url+otlp.LogsPath, "application/json", false, logs)
	log.check(t)
	return st
}

// loadGzipProtobuf posts the fixture as gzip-compressed OTLP protobuf.
func loadGzipProtobuf(t *testing.T, d *fixture.Dataset) *store.Store {
	st := openStore(t)
	url, log := serveReceiver(t, st)
	traces, err := ptraceotlp.NewExportRequestFromTraces(d.Traces).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	logs, err := plogotlp.NewExportRequestFromLogs(d.Logs).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	post(t, url+otlp.TracesPath, "application/x-protobuf", true, gzipBytes(t, traces))
	post(t, url+otlp.LogsPath, "application/x-protobuf", true, gzipBytes(t, logs))
	log.check(t)
	return st
}
