package e2e

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/encoding/gzip"

	"github.com/runlens/runlens/internal/otlp"
	"github.com/runlens/runlens/internal/telemetry/fixture"
	"github.com/runlens/runlens/internal/telemetry/store"
)

// gRPC methods of the OTLP services.
const (
	grpcTraces = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
	grpcLogs   = "/opentelemetry.proto.collector.logs.v1.LogsService/Export"
)

// grpcCalls records, from the client's side, every OTLP/gRPC call and what it was answered, so
// a way of sending over gRPC is held to "every call succeeded and nothing was rejected" as the
// HTTP ways are.
type grpcCalls struct {
	mu       sync.Mutex
	calls    map[string]int
	problems []string
}

// interceptor records each call's error and the partial success of its answer.
func (g *grpcCalls) interceptor() grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		err := invoker(ctx, method, req, reply, cc, opts...)
		problem := ""
		if err != nil {
			problem = err.Error()
		} else if rejected, derr := rejectedInReply(method, reply); derr != nil || rejected != 0 {
			problem = fmt.Sprintf("rejected %d (%v)", rejected, derr)
		}
		g.mu.Lock()
		defer g.mu.Unlock()
		g.calls[method]++
		if problem != "" {
			g.problems = append(g.problems, method+": "+problem)
		}
		return err
	}
}

// rejectedInReply re-encodes an answer with the codec gRPC used and reads its partial success.
func rejectedInReply(method string, reply any) (int64, error) {
	bufs, err := encoding.GetCodecV2("proto").Marshal(reply)
	if err != nil {
		return 0, err
	}
	b := bufs.Materialize()
	bufs.Free()
	switch method {
	case grpcTraces:
		resp := ptraceotlp.NewExportResponse()
		if err := resp.UnmarshalProto(b); err != nil {
			return 0, err
		}
		return resp.PartialSuccess().RejectedSpans(), nil
	case grpcLogs:
		resp := plogotlp.NewExportResponse()
		if err := resp.UnmarshalProto(b); err != nil {
			return 0, err
		}
		return resp.PartialSuccess().RejectedLogRecords(), nil
	}
	return 0, fmt.Errorf("unexpected method %s", method)
}

// check fails t unless both services were called and every call succeeded whole.
func (g *grpcCalls) check(t *testing.T) {
	t.Helper()
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, p := range g.problems {
		t.Error(p)
	}
	for _, m := range []string{grpcTraces, grpcLogs} {
		if g.calls[m] == 0 {
			t.Errorf("%s was never called (calls: %v)", m, g.calls)
		}
	}
}

// serveGRPCReceiver serves the real OTLP/gRPC receiver into st on a loopback port and returns
// its address and a recorder for clients to dial with.
func serveGRPCReceiver(t *testing.T, st *store.Store) (string, *grpcCalls) {
	t.Helper()
	ln, err := otlp.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := otlp.NewGRPCServer(st, otlp.Options{})
	go srv.Serve(ln) //nolint:errcheck // ends when stopped at cleanup
	t.Cleanup(srv.Stop)
	return ln.Addr().String(), &grpcCalls{calls: map[string]int{}}
}

// loadGRPC sends the fixture with pdata's OTLP/gRPC client, compressed with gzip or not.
func loadGRPC(compress bool) func(t *testing.T, d *fixture.Dataset) *store.Store {
	return func(t *testing.T, d *fixture.Dataset) *store.Store {
		st := openStore(t)
		addr, calls := serveGRPCReceiver(t, st)
		cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithUnaryInterceptor(calls.interceptor()))
		if err != nil {
			t.Fatal(err)
		}
		defer cc.Close()
		var opts []grpc.CallOption
		if compress {
			opts = append(opts, grpc.UseCompressor(gzip.Name))
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, terr := ptraceotlp.NewGRPCClient(cc).Export(ctx, ptraceotlp.NewExportRequestFromTraces(d.Traces), opts...)
		_, lerr := plogotlp.NewGRPCClient(cc).Export(ctx, plogotlp.NewExportRequestFromLogs(d.Logs), opts...)
		if terr != nil || lerr != nil {
			t.Fatalf("export traces: %v; export logs: %v", terr, lerr)
		}
		calls.check(t)
		return st
	}
}

// loadSDKGRPC sends the fixture through the OpenTelemetry Go SDK's OTLP/gRPC exporters.
func loadSDKGRPC(t *testing.T, d *fixture.Dataset) *store.Store {
	st := openStore(t)
	addr, calls := serveGRPCReceiver(t, st)
	ctx := context.Background()
	if err := sendSDKGRPCTraces(ctx, addr, calls, d.Traces); err != nil {
		t.Fatal(err)
	}
	if err := sendSDKGRPCLogs(ctx, addr, calls, d.Logs); err != nil {
		t.Fatal(err)
	}
	calls.check(t)
	return st
}

// sendSDKGRPCTraces exports every span of td through the otlptracegrpc exporter to addr.
func sendSDKGRPCTraces(ctx context.Context, addr string, calls *grpcCalls, td ptrace.Traces) error {
	stubs, err := spanStubs(td)
	if err != nil {
		return err
	}
	exp, err := otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(addr), otlptracegrpc.WithInsecure(),
		otlptracegrpc.WithDialOption(grpc.WithUnaryInterceptor(calls.interceptor())),
		otlptracegrpc.WithTimeout(10*time.Second), otlptracegrpc.WithRetry(otlptracegrpc.RetryConfig{Enabled: false}))
	if err != nil {
		return fmt.Errorf("trace exporter: %w", err)
	}
	if err := exp.ExportSpans(ctx, stubs.Snapshots()); err != nil {
		_ = exp.Shutdown(ctx)
		return fmt.Errorf("export spans: %w", err)
	}
	if err := exp.Shutdown(ctx); err != nil {
		return fmt.Errorf("shut down trace exporter: %w", err)
	}
	return nil
}

// sendSDKGRPCLogs is sendSDKLogs over the otlploggrpc exporter.
func sendSDKGRPCLogs(ctx context.Context, addr string, calls *grpcCalls, ld plog.Logs) error {
	for i := 0; i < ld.ResourceLogs().Len(); i++ {
		rl := ld.ResourceLogs().At(i)
		res, err := sdkResource(rl.Resource(), rl.SchemaUrl())
		if err != nil {
			return err
		}
		exp, err := otlploggrpc.New(ctx, otlploggrpc.WithEndpoint(addr), otlploggrpc.WithInsecure(),
			otlploggrpc.WithDialOption(grpc.WithUnaryInterceptor(calls.interceptor())),
			otlploggrpc.WithTimeout(10*time.Second), otlploggrpc.WithRetry(otlploggrpc.RetryConfig{Enabled: false}))
		if err != nil {
			return fmt.Errorf("log exporter: %w", err)
		}
		lp := sdklog.NewLoggerProvider(sdklog.WithResource(res), sdklog.WithProcessor(sdklog.NewBatchProcessor(exp)))
		emitErr := emitScopes(ctx, lp, rl.ScopeLogs())
		if err := lp.Shutdown(ctx); err != nil {
			return fmt.Errorf("flush logs: %w", err)
		}
		if emitErr != nil {
			return emitErr
		}
	}
	return nil
}
