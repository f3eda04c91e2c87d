package compat

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// TestServeHostsTheGRPCReceiver runs `runlens serve` with both receivers on free ports. An app
// that sends only metrics over OTLP/gRPC is answered a partial success and the doctor says it
// sends nothing runlens keeps; then the OpenTelemetry SDK's gRPC exporter sends a span, which
// get_app_status counts, and the doctor's gRPC receiver check passes.
func TestServeHostsTheGRPCReceiver(t *testing.T) {
	root := newWorkspace(t)
	httpAddr, grpcAddr := freeAddr(t), freeAddr(t)
	s := startServe(t, root, nil, "--project-root", root, "--receiver", httpAddr, "--receiver-grpc", grpcAddr)
	eventually(t, 20*time.Second, "serve listens for OTLP/gRPC on "+grpcAddr, func() bool {
		c, err := net.Dial("tcp", grpcAddr)
		if err == nil {
			c.Close()
		}
		return err == nil
	})

	cc, err := grpc.NewClient(grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	md := pmetric.NewMetrics()
	m := md.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
	m.SetName("queue.depth")
	for i := range 3 {
		m.SetEmptyGauge().DataPoints().AppendEmpty().SetIntValue(int64(i))
	}
	points := md.DataPointCount()
	resp, err := pmetricotlp.NewGRPCClient(cc).Export(t.Context(), pmetricotlp.NewExportRequestFromMetrics(md))
	if err != nil || resp.PartialSuccess().RejectedDataPoints() != int64(points) || !strings.Contains(resp.PartialSuccess().ErrorMessage(), "traces and logs only") {
		t.Fatalf("metrics export: %v, partial success %d %q; want %d points rejected with the reason",
			err, resp.PartialSuccess().RejectedDataPoints(), resp.PartialSuccess().ErrorMessage(), points)
	}
	var doc doctorAnswer
	wantSuccess(t, "doctor", s.call(t, "doctor", map[string]any{}), &doc)
	if c := doc.check(t, "instrumentation", "metrics_dropped"); c.Status != "warn" || !strings.Contains(c.Summary, fmt.Sprint(points)) || !strings.Contains(c.Summary, "send traces and logs") {
		t.Errorf("doctor metrics check = %+v, want a warning that the app sends only metrics", c)
	}
	if c := doc.check(t, "store", "receiver_grpc_listening"); c.Status != "pass" || !strings.Contains(c.Summary, grpcAddr) {
		t.Errorf("doctor gRPC receiver check = %+v, want a pass naming %s", c, grpcAddr)
	}

	exp, err := otlptracegrpc.New(t.Context(), otlptracegrpc.WithEndpoint(grpcAddr), otlptracegrpc.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	_, span := tp.Tracer("compat").Start(context.Background(), "GET /health")
	span.End()
	if err := tp.Shutdown(t.Context()); err != nil {
		t.Fatalf("export over OTLP/gRPC: %v\nstderr:\n%s", err, tail(s.stderr.Bytes()))
	}
	var st appStatus
	wantSuccess(t, "get_app_status", s.call(t, "get_app_status", map[string]any{}), &st)
	if st.Counts.Spans != 1 {
		t.Errorf("get_app_status counts %d spans, want the 1 sent over gRPC", st.Counts.Spans)
	}
}

// TestServeSaysWhenTheGRPCPortIsBusy holds the gRPC port with a listener that is not gRPC:
// serve keeps serving, says on stderr that it does not receive OTLP/gRPC there and whose
// listener it is not, and the doctor fails its gRPC receiver check with the fix; `runlens
// collect` refuses to start on that port.
func TestServeSaysWhenTheGRPCPortIsBusy(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			fmt.Fprint(c, "SSH-2.0-OpenSSH_9.6\r\n")
			c.Close()
		}
	}()
	busy := ln.Addr().String()
	root := newWorkspace(t)
	s := startServe(t, root, nil, "--project-root", root, "--receiver", freeAddr(t), "--receiver-grpc", busy)
	eventually(t, 20*time.Second, "serve says on stderr that the gRPC port is taken", func() bool {
		e := string(s.stderr.Bytes())
		return strings.Contains(e, "otlp/grpc receiver address in use") && strings.Contains(e, busy) && strings.Contains(e, "not a runlens gRPC receiver")
	})
	var doc doctorAnswer
	wantSuccess(t, "doctor", s.call(t, "doctor", map[string]any{}), &doc)
	if c := doc.check(t, "store", "receiver_grpc_listening"); c.Status != "fail" || !strings.Contains(c.Fix, "grpcAddress") {
		t.Errorf("doctor gRPC receiver check = %+v, want a fail with the per-project gRPC port fix", c)
	}

	p := run(t, runOpts{dir: root, timeout: 20 * time.Second}, runlensBinary(t), "collect", "--project-root", root,
		"--listen", freeAddr(t), "--listen-grpc", busy)
	if p.exitCode == 0 || !strings.Contains(string(p.stderr), busy) || !strings.Contains(string(p.stderr), "not a runlens gRPC receiver") {
		t.Errorf("runlens collect on a taken gRPC port: exit %d, want a failure naming it:\n%s", p.exitCode, p.stderr)
	}
}
