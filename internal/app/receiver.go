package app

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/runlens/runlens/internal/otlp"
)

// retentionEvery is how often the receiver's process prunes the store.
const retentionEvery = time.Minute

// Receiver is a running OTLP/HTTP receiver.
type Receiver struct {
	// Addr is where it listens (the real port when the configuration asked for port 0).
	Addr string
	srv  *http.Server
	done chan error
}

// ListenReceiver opens the configured receiver address (loopback only) and serves OTLP/HTTP
// into the embedded store, pruning it in the background. It fails with otlp.ErrAddrInUse when
// another process already receives there.
func (a *App) ListenReceiver(ctx context.Context, addr string) (*Receiver, error) {
	ln, err := otlp.Listen(addr)
	if err != nil {
		return nil, err
	}
	st, err := a.Store(ctx)
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("open store for the receiver: %w", err)
	}
	st.StartRetention(ctx, retentionEvery)
	srv := otlp.NewServer(otlp.NewHandler(st, otlp.Options{Logger: a.Logger, AllowedHosts: a.Config.Receiver.AllowedHosts}))
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
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	err := r.srv.Shutdown(ctx)
	return errors.Join(err, <-r.done)
}

// HostReceiver hosts the receiver for `runlens serve` until ctx ends. A process that finds
// the port taken (usually `runlens collect` or another serve) only reads the store; that is
// the normal multi-session setup, so it is logged, not reported as a failure.
func (a *App) HostReceiver(ctx context.Context) {
	r, err := a.ListenReceiver(ctx, a.Config.Receiver.Address)
	switch {
	case errors.Is(err, otlp.ErrAddrInUse):
		a.Logger.Info("otlp receiver address in use; reading the store only", "addr", a.Config.Receiver.Address)
		return
	case err != nil:
		a.Logger.Warn("otlp receiver not started", "err", err)
		return
	}
	a.Logger.Info("otlp receiver listening", "addr", r.Addr)
	<-ctx.Done()
	if err := r.Shutdown(context.WithoutCancel(ctx)); err != nil {
		a.Logger.Warn("otlp receiver shutdown", "err", err)
	}
}
