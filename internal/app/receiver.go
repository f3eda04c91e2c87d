package app

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/runlens/runlens/internal/otlp"
	"github.com/runlens/runlens/internal/telemetry/store"
)

// retentionEvery is how often the receiver's process prunes the store.
const retentionEvery = time.Minute

// shutdownGrace bounds how long a receiver's in-flight exports may take to finish at shutdown.
const shutdownGrace = 5 * time.Second

// Receiver is a running OTLP/HTTP receiver.
type Receiver struct {
	// Addr is where it listens (the real port when the configuration asked for port 0).
	Addr string
	srv  *http.Server
	done chan error
}

// GRPCReceiver is a running OTLP/gRPC receiver.
type GRPCReceiver struct {
	// Addr is where it listens.
	Addr string
	srv  *otlp.GRPCServer
	done chan error
}

// receiverStore opens the store a receiver writes and starts pruning it, once per process.
func (a *App) receiverStore(ctx context.Context) (*store.Store, error) {
	st, err := a.Store(ctx)
	if err != nil {
		return nil, fmt.Errorf("open store for the receiver: %w", err)
	}
	a.retentionOnce.Do(func() {
		st.StartRetention(ctx, retentionEvery)
		a.guard.watch(st.Path())
	})
	return st, nil
}

// receiverOptions are the options both receivers of this process share: the Host rules, the
// store's published id, and one set of counters.
func (a *App) receiverOptions(st *store.Store) otlp.Options {
	return otlp.Options{
		Logger:       a.Logger,
		AllowedHosts: a.Config.Receiver.AllowedHosts,
		StoreID:      otlp.StoreID(st.InstanceID()),
		Stats:        &a.otlpStats,
	}
}

// ListenReceiver opens the configured receiver address (loopback only) and serves OTLP/HTTP
// into the embedded store, pruning it in the background. It fails with otlp.ErrAddrInUse when
// another process already receives there.
func (a *App) ListenReceiver(ctx context.Context, addr string) (*Receiver, error) {
	ln, err := otlp.Listen(addr)
	if err != nil {
		return nil, err
	}
	st, err := a.receiverStore(ctx)
	if err != nil {
		ln.Close()
		return nil, err
	}
	srv := otlp.NewServer(otlp.NewHandler(a.sink(st), a.receiverOptions(st)))
	r := &Receiver{Addr: ln.Addr().String(), srv: srv, done: make(chan error, 1)}
	go func() {
		err := srv.Serve(ln)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		r.done <- err
	}()
	return r, nil
}

// Shutdown stops accepting, lets in-flight exports finish (bounded), and waits for the server.
func (r *Receiver) Shutdown(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, shutdownGrace)
	defer cancel()
	err := r.srv.Shutdown(ctx)
	return errors.Join(err, <-r.done)
}

// ListenGRPCReceiver is ListenReceiver for OTLP/gRPC, into the same store with the same rules.
func (a *App) ListenGRPCReceiver(ctx context.Context, addr string) (*GRPCReceiver, error) {
	ln, err := otlp.Listen(addr)
	if err != nil {
		return nil, err
	}
	st, err := a.receiverStore(ctx)
	if err != nil {
		ln.Close()
		return nil, err
	}
	srv := otlp.NewGRPCServer(a.sink(st), a.receiverOptions(st))
	r := &GRPCReceiver{Addr: ln.Addr().String(), srv: srv, done: make(chan error, 1)}
	go func() { r.done <- srv.Serve(ln) }()
	return r, nil
}

// Shutdown stops accepting, lets in-flight exports finish (bounded), and waits for the server.
func (r *GRPCReceiver) Shutdown(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, shutdownGrace)
	defer cancel()
	err := r.srv.Shutdown(ctx)
	return errors.Join(err, <-r.done)
}

// MetricPointsDropped is how many metric data points the receivers of this project dropped:
// this process's own, plus what a runlens process sharing the store says it dropped (the
// largest count, when both of its addresses are held by other processes).
func (a *App) MetricPointsDropped(ctx context.Context) int64 {
	var shared int64
	for _, s := range []ReceiverStatus{a.ReceiverStatus(ctx), a.GRPCReceiverStatus(ctx)} {
		if s.State == ReceiverShared {
			shared = max(shared, s.MetricPointsDropped)
		}
	}
	return a.otlpStats.MetricPointsDropped() + shared
}

// HostReceiver starts hosting the receivers for `runlens serve` in the background, until ctx
// ends, and returns at once: start-up must not wait for the store, the ports or gRPC. The gRPC
// server starts once OTLP/HTTP has listened (or failed to), on the same store, so the MCP loop
// is long up by then, and without waiting for a holder of the HTTP port to say who it is. A
// process that finds a port taken only reads the store, and says on stderr whose receiver
// holds it: this project's (another session, or `runlens collect`: the normal multi-session
// setup), another store's (the app's telemetry then lands in another project), or a program
// that is not runlens.
//
// With receiver.detached (the default) it does not listen itself: it makes sure the store's
// detached receiver runs, starting it if need be (see hostDetached).
func (a *App) HostReceiver(ctx context.Context) {
	if a.Detachable() {
		a.detaching = make(chan struct{})
		go func() {
			defer close(a.detaching)
			a.hostDetached(ctx)
		}()
		return
	}
	cfg := a.Config.Receiver
	listened := make(chan struct{})
	if cfg.Enabled {
		done := a.recv.startHosting()
		go a.hostHTTP(ctx, done, listened)
	} else {
		close(listened)
	}
	if cfg.GRPCEnabled {
		done := a.grpcRecv.startHosting()
		go func() {
			<-listened
			a.hostGRPC(ctx, done)
		}()
	}
}

// hostHTTP hosts the OTLP/HTTP receiver until ctx ends. It closes listened once it has tried
// to listen, and done once the attempt has a status.
func (a *App) hostHTTP(ctx context.Context, done, listened chan struct{}) {
	addr := a.Config.Receiver.Address
	r, err := a.ListenReceiver(ctx, addr)
	close(listened)
	if err != nil {
		a.notHosted(ctx, &a.recv, "otlp receiver", "reading the store only", addr, err)
		close(done)
		return
	}
	a.recv.set(ReceiverStatus{Address: r.Addr, State: ReceiverHosted,
		Note: "This runlens process receives on " + r.Addr + " into this project's store."})
	close(done)
	a.Logger.Info("otlp receiver listening", "addr", r.Addr)
	<-ctx.Done()
	if err := r.Shutdown(context.WithoutCancel(ctx)); err != nil {
		a.Logger.Warn("otlp receiver shutdown", "err", err)
	}
}

// hostGRPC is hostHTTP for the OTLP/gRPC receiver.
func (a *App) hostGRPC(ctx context.Context, done chan struct{}) {
	addr := a.Config.Receiver.GRPCAddress
	r, err := a.ListenGRPCReceiver(ctx, addr)
	if err != nil {
		a.notHosted(ctx, &a.grpcRecv, "otlp/grpc receiver", "not receiving OTLP/gRPC", addr, err)
		close(done)
		return
	}
	a.grpcRecv.set(ReceiverStatus{Address: r.Addr, State: ReceiverHosted,
		Note: "This runlens process receives OTLP/gRPC on " + r.Addr + " into this project's store."})
	close(done)
	a.Logger.Info("otlp/grpc receiver listening", "addr", r.Addr)
	<-ctx.Done()
	if err := r.Shutdown(context.WithoutCancel(ctx)); err != nil {
		a.Logger.Warn("otlp/grpc receiver shutdown", "err", err)
	}
}

// notHosted records and logs why this process does not host a receiver: the port is taken
// (and by whom), or it could not start.
func (a *App) notHosted(ctx context.Context, r *receiverState, what, instead, addr string, err error) {
	if errors.Is(err, otlp.ErrAddrInUse) {
		s := a.checkHolder(ctx, r.proto)
		r.set(s)
		args := []any{"addr", addr, "state", string(s.State), "note", s.Note}
		if s.Fix != "" {
			args = append(args, "fix", s.Fix)
		}
		a.Logger.Warn(what+" address in use; "+instead, args...)
		return
	}
	r.set(ReceiverStatus{Address: addr, State: ReceiverOff,
		Note: "runlens could not start its " + r.proto.name + " on " + addr + ": " + receiverStartProblem(err),
		Fix:  "Fix the problem above and restart the MCP server, or run `runlens collect`."})
	a.Logger.Warn(what+" not started", "addr", addr, "err", err)
}

// receiverStartProblem says why the receiver did not start, in words safe to show a client:
// the store's own problem when it has a fix, else a generic reason (the error may name paths).
func receiverStartProblem(err error) string {
	var missing *missingStoreError
	switch {
	case errors.As(err, &missing):
		return missing.Error() + "."
	case errors.Is(err, otlp.ErrNotLoopback):
		return "the address is not a loopback address."
	}
	return "the store could not be opened or the address could not be bound (the server log has the details)."
}
