package otlp

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	grpcencoding "google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"
)

// The gRPC receiver decodes its calls' messages itself. grpc-go answers a message its codec
// cannot read with INTERNAL, before any handler runs; the OTLP specification asks for
// INVALID_ARGUMENT for bad data (which exporters do not retry). So the server's codec hands a
// request over as bytes (rawMessage), the handler decodes it with pdata and refuses what does
// not decode, too-deep nesting included, as the HTTP receiver does with 400.

// rawMessage is a message as its wire bytes.
type rawMessage []byte

// serverCodec passes rawMessage through as bytes, and everything else to the codec it replaces.
type serverCodec struct{ delegate grpcencoding.CodecV2 }

// newServerCodec wraps the registered protobuf codec (pdata's, which gRPC's own falls back on).
func newServerCodec() serverCodec { return serverCodec{delegate: grpcencoding.GetCodecV2("proto")} }

func (c serverCodec) Marshal(v any) (mem.BufferSlice, error) {
	if m, ok := v.(*rawMessage); ok {
		return mem.BufferSlice{mem.SliceBuffer(*m)}, nil
	}
	return c.delegate.Marshal(v)
}

func (c serverCodec) Unmarshal(data mem.BufferSlice, v any) error {
	if m, ok := v.(*rawMessage); ok {
		*m = data.Materialize() // a copy: data is gRPC's, freed when this returns
		return nil
	}
	return c.delegate.Unmarshal(data, v)
}

func (serverCodec) Name() string { return "proto" }

// callHandler serves one Export call: the request's bytes in, the response's out.
type callHandler func(g *grpcReceiver, ctx context.Context, req []byte) ([]byte, error)

// exportService describes an OTLP service whose one method, Export, exchanges rawMessages.
func exportService(name, file string, export callHandler) *grpc.ServiceDesc {
	handler := func(srv any, ctx context.Context, dec func(any) error, intercept grpc.UnaryServerInterceptor) (any, error) {
		var req rawMessage
		if err := dec(&req); err != nil {
			return nil, err
		}
		call := func(ctx context.Context, req any) (any, error) {
			resp, err := export(srv.(*grpcReceiver), ctx, *req.(*rawMessage))
			if err != nil {
				return nil, err
			}
			return (*rawMessage)(&resp), nil
		}
		if intercept == nil {
			return call(ctx, &req)
		}
		return intercept(ctx, &req, &grpc.UnaryServerInfo{Server: srv, FullMethod: "/" + name + "/Export"}, call)
	}
	return &grpc.ServiceDesc{
		ServiceName: name,
		HandlerType: (*any)(nil),
		Methods:     []grpc.MethodDesc{{MethodName: "Export", Handler: handler}},
		Metadata:    file,
	}
}

// The three OTLP services, as their protos name them.
var (
	traceServiceDesc = exportService("opentelemetry.proto.collector.trace.v1.TraceService",
		"opentelemetry/proto/collector/trace/v1/trace_service.proto", (*grpcReceiver).exportTraces)
	logsServiceDesc = exportService("opentelemetry.proto.collector.logs.v1.LogsService",
		"opentelemetry/proto/collector/logs/v1/logs_service.proto", (*grpcReceiver).exportLogs)
	metricsServiceDesc = exportService("opentelemetry.proto.collector.metrics.v1.MetricsService",
		"opentelemetry/proto/collector/metrics/v1/metrics_service.proto", (*grpcReceiver).exportMetrics)
)

// invalidMessage is the answer to a request that does not decode; like HTTP's 400, it says
// why, bounded.
func invalidMessage(err error) error {
	return status.Error(codes.InvalidArgument, decodeError(encodingProto, err).Error())
}
