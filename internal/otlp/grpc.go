package otlp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"strconv"
	"sync"
	"syscall"
	"time"

	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	_ "google.golang.org/grpc/encoding/gzip" // registers the gzip decompressor exporters use
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/tap"
	"google.golang.org/protobuf/types/known/durationpb"
)

// The OTLP/gRPC receiver serves TraceService, LogsService and MetricsService Export with the
// guarantees of the HTTP one:
//
//   - an OK answer only once the batch is committed (the Sink's contract);
//   - partial success for rejected records, and for every metric data point (dropped);
//   - Options.MaxBodyBytes per message, before and after gzip (RESOURCE_EXHAUSTED beyond);
//   - the Host rules, applied to :authority (and to an origin header, which browsers cannot
//     send over gRPC, since they never speak cleartext HTTP/2);
//   - "retry later" when the store is behind or too many calls are in progress: UNAVAILABLE
//     with a RetryInfo delay, which the OTLP exporters honour;
//   - bounded connections: at most DefaultMaxConnections per listener (see Listen), a silent
//     connection closed after Options.HandshakeTimeout, an idle one after two minutes, a call
//     after requestTimeout, and at most maxStreamsPerConn calls per connection (gRPC shares
//     write buffers between connections, so an idle one keeps none of its own).
//
// The answer to a call over its size limit is gRPC's own ("grpc: received message larger than
// max (N vs. M)"): the library refuses it before any code of ours sees the message.

const (
	// requestTimeout bounds one call, reading its message included, as HTTP's read and write
	// timeouts bound a request: a sender trickling a message cannot hold a slot for ever.
	requestTimeout = 60 * time.Second
	// maxStreamsPerConn bounds the calls one connection may have in progress.
	maxStreamsPerConn = 16
	// busyRetryDelay is the pause asked of a sender refused because too many calls are in
	// progress.
	busyRetryDelay = time.Second
)

// gRPC method names, as the OTLP protos fix them.
const (
	grpcTraces  = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
	grpcLogs    = "/opentelemetry.proto.collector.logs.v1.LogsService/Export"
	grpcMetrics = "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export"
)

// GRPCServer is the OTLP/gRPC receiver.
type GRPCServer struct {
	srv *grpc.Server
}

// grpcReceiver holds what the three services share.
type grpcReceiver struct {
	sink  Sink
	opts  Options
	log   *slog.Logger
	rules hostRules
	// slots bounds the calls in progress; a call that finds none free is refused.
	slots chan struct{}
}

// NewGRPCServer returns the OTLP/gRPC receiver writing into sink. Serve it on a listener from
// Listen, so that it is loopback only and holds a bounded number of connections.
func NewGRPCServer(sink Sink, o Options) *GRPCServer {
	o = o.withDefaults()
	g := &grpcReceiver{sink: sink, opts: o, log: o.Logger, rules: newHostRules(o.AllowedHosts),
		slots: make(chan struct{}, o.MaxConcurrent)}
	srv := grpc.NewServer(
		grpc.MaxRecvMsgSize(int(min(o.MaxBodyBytes, math.MaxInt32))),
		grpc.MaxConcurrentStreams(maxStreamsPerConn),
		grpc.MaxHeaderListSize(maxHeaderBytes),
		grpc.ConnectionTimeout(o.HandshakeTimeout),
		grpc.KeepaliveParams(keepalive.ServerParameters{MaxConnectionIdle: idleTimeout}),
		// Exporters that ping to keep a connection warm are tolerated down to every 10 s
		// rather than sent away; MaxConnectionIdle still closes a connection without calls.
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 10 * time.Second, PermitWithoutStream: true}),
		grpc.InTapHandle(g.admit),
		grpc.ForceServerCodecV2(newServerCodec()), // see rawMessage
	)
	srv.RegisterService(traceServiceDesc, g)
	srv.RegisterService(logsServiceDesc, g)
	srv.RegisterService(metricsServiceDesc, g)
	return &GRPCServer{srv: srv}
}

// Serve accepts connections on ln until Stop or GracefulStop; it returns nil after either.
func (s *GRPCServer) Serve(ln net.Listener) error {
	err := s.srv.Serve(ln)
	if errors.Is(err, grpc.ErrServerStopped) {
		return nil
	}
	return err
}

// Shutdown stops accepting and waits for calls in progress until ctx ends, then closes every
// connection.
func (s *GRPCServer) Shutdown(ctx context.Context) error {
	done := make(chan struct{})
	go func() {
		s.srv.GracefulStop()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		s.srv.Stop()
		<-done
		return fmt.Errorf("otlp/grpc shutdown: %w", ctx.Err())
	}
}

// Stop closes every connection at once.
func (s *GRPCServer) Stop() { s.srv.Stop() }

// admit runs when a call's headers arrive, before its message is read: it applies the Host
// rules and takes a slot, which the call gives back when it ends. Refusing here costs the
// connection nothing: the message is never read.
func (g *grpcReceiver) admit(ctx context.Context, info *tap.Info) (context.Context, error) {
	if !g.rules.hostAllowed(hostOnly(first(info.Header.Get(":authority")))) {
		g.log.Debug("otlp/grpc call refused", "authority", first(info.Header.Get(":authority")), "method", info.FullMethodName)
		return ctx, status.Error(codes.PermissionDenied, "refused: "+refusedAuthority)
	}
	if origin := first(info.Header.Get("origin")); origin != "" && !g.rules.originAllowed(origin) {
		g.log.Debug("otlp/grpc call refused", "origin", origin, "method", info.FullMethodName)
		return ctx, status.Error(codes.PermissionDenied, "refused: "+refusedOrigin)
	}
	switch info.FullMethodName {
	case grpcTraces, grpcLogs, grpcMetrics:
	default:
		return ctx, nil // answered Unimplemented by the server, without reading a message
	}
	select {
	case g.slots <- struct{}{}:
	default:
		g.log.Debug("otlp/grpc call refused: too many in progress", "method", info.FullMethodName)
		return ctx, retryLater(fmt.Sprintf("too many exports in progress (%d); retry after %s", cap(g.slots), busyRetryDelay), busyRetryDelay)
	}
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	// The call's context ends when the call does, however it ends (answered, cancelled, reset,
	// connection lost): the slot goes back then.
	context.AfterFunc(ctx, func() {
		cancel()
		<-g.slots
	})
	return ctx, nil
}

func first(values []string) string {
	if len(values) == 0 {
		return ""
	}
	return values[0]
}

// retryLater is UNAVAILABLE with a RetryInfo detail: the OTLP specification's backpressure
// signal, which exporters retry after the delay.
func retryLater(msg string, delay time.Duration) error {
	st, err := status.New(codes.Unavailable, msg).WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(delay)})
	if err != nil {
		return status.Error(codes.Unavailable, msg) // cannot happen: RetryInfo always marshals
	}
	return st.Err()
}

// sinkError turns a Sink failure into the call's status. Like HTTP's, the message names no
// path: the error itself stays in the log.
func (g *grpcReceiver) sinkError(what string, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return status.FromContextError(err).Err()
	}
	if delay, busy := retryDelay(err); busy {
		g.log.Debug("otlp/grpc batch refused: store busy", "signal", what)
		return retryLater(busyMessage(what, delay), max(delay, time.Second))
	}
	g.log.Warn("otlp/grpc batch not stored", "signal", what, "err", err)
	return retryLater(what+" not stored, retry later", time.Second)
}

func (g *grpcReceiver) exportTraces(ctx context.Context, msg []byte) ([]byte, error) {
	req := ptraceotlp.NewExportRequest()
	if err := req.UnmarshalProto(msg); err != nil {
		return nil, invalidMessage(err)
	}
	g.identify(ctx)
	accepted, rejected, err := g.sink.IngestTraces(ctx, req.Traces())
	if err != nil {
		return nil, g.sinkError("traces", err)
	}
	g.log.Debug("otlp/grpc traces stored", "accepted", accepted, "rejected", rejected)
	return tracesResponse(rejected).MarshalProto()
}

func (g *grpcReceiver) exportLogs(ctx context.Context, msg []byte) ([]byte, error) {
	req := plogotlp.NewExportRequest()
	if err := req.UnmarshalProto(msg); err != nil {
		return nil, invalidMessage(err)
	}
	g.identify(ctx)
	accepted, rejected, err := g.sink.IngestLogs(ctx, req.Logs())
	if err != nil {
		return nil, g.sinkError("logs", err)
	}
	g.log.Debug("otlp/grpc logs stored", "accepted", accepted, "rejected", rejected)
	return logsResponse(rejected).MarshalProto()
}

func (g *grpcReceiver) exportMetrics(ctx context.Context, msg []byte) ([]byte, error) {
	req := pmetricotlp.NewExportRequest()
	if err := req.UnmarshalProto(msg); err != nil {
		return nil, invalidMessage(err)
	}
	g.identify(ctx)
	return g.opts.Stats.dropMetrics(req.Metrics()).MarshalProto()
}

// Response headers in which a runlens gRPC receiver says whose it is, as the HTTP receiver does
// at IdentityPath: the gRPC port can be taken by another project's runlens too.
const (
	grpcStoreHeader   = "runlens-store"
	grpcMetricsHeader = "runlens-metric-points-dropped"
)

// identify names the receiver's store in the call's response headers, to loopback callers
// only (see identityHandler).
func (g *grpcReceiver) identify(ctx context.Context) {
	if g.opts.StoreID == "" {
		return
	}
	if p, ok := peer.FromContext(ctx); !ok || !isLoopbackRemote(p.Addr.String()) {
		return
	}
	_ = grpc.SetHeader(ctx, metadata.Pairs(grpcStoreHeader, g.opts.StoreID,
		grpcMetricsHeader, strconv.FormatInt(g.opts.Stats.MetricPointsDropped(), 10)))
}

// ProbeGRPC asks the OTLP/gRPC receiver at addr (host:port) whose it is, with an empty trace
// export, which stores nothing in any OTLP receiver. Like Probe, it returns ErrNoListener when
// nothing listens, ErrNotRunlens when the listener answers without a runlens identity (another
// OTLP receiver, or not gRPC at all), and another error when it did not answer in time.
func ProbeGRPC(ctx context.Context, addr string) (Identity, error) {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
	if errors.Is(err, syscall.ECONNREFUSED) {
		return Identity{}, fmt.Errorf("probe %s: %w", addr, ErrNoListener)
	}
	if err != nil {
		return Identity{}, fmt.Errorf("probe %s: %w", addr, err)
	}
	defer conn.Close()
	// The connection just opened is the client's only one: the probe dials once.
	var once sync.Once
	cc, err := grpc.NewClient("passthrough:///"+addr,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(context.Context, string) (net.Conn, error) {
			c, err := net.Conn(nil), errors.New("the probe dials once")
			once.Do(func() { c, err = conn, nil })
			return c, err
		}))
	if err != nil {
		return Identity{}, fmt.Errorf("probe %s: %w", addr, err)
	}
	defer cc.Close()
	var header metadata.MD
	_, err = ptraceotlp.NewGRPCClient(cc).Export(ctx, ptraceotlp.NewExportRequest(), grpc.Header(&header))
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return Identity{}, fmt.Errorf("probe %s: no answer: %w", addr, err)
	case status.Code(err) == codes.Unavailable && len(status.Convert(err).Details()) > 0:
		return Identity{}, fmt.Errorf("probe %s: busy: %w", addr, err) // a receiver asking to retry
	default:
		return Identity{}, fmt.Errorf("probe %s: %w: %v", addr, ErrNotRunlens, err)
	}
	id := Identity{Service: identityService, Store: first(header.Get(grpcStoreHeader))}
	if id.Store == "" {
		return Identity{}, fmt.Errorf("probe %s: %w", addr, ErrNotRunlens)
	}
	id.MetricPointsDropped, _ = strconv.ParseInt(first(header.Get(grpcMetricsHeader)), 10, 64)
	return id, nil
}
