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
	srv := otlp.NewServer(otlp.NewHandler(st, otlp.Options{
		Logger:       a.Logger,
		AllowedHosts: a.Config.Receiver.AllowedHosts,
		StoreID:      otlp.StoreID(st.InstanceID()),
	}))
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

// HostReceiver starts hosting the receiver for `runlens serve` in the background, until ctx
// ends, and returns at once: start-up must not wait for the store or the port. A process that
// finds the port taken only reads the store, and says on stderr whose receiver holds it: this
// project's (another session, or `runlens collect`: the normal multi-session setup), another
// store's (the app's telemetry then lands in another project), or a program that is not runlens.
func (a *App) HostReceiver(ctx context.Context) {
	done := make(chan struct{})
	a.recv.mu.Lock()
	a.recv.hosting = done
	a.recv.mu.Unlock()
	go a.hostReceiver(ctx, done)
}

func (a *App) hostReceiver(ctx context.Context, done chan struct{}) {
	addr := a.Config.Receiver.Address
	r, err := a.ListenReceiver(ctx, addr)
	switch {
	case errors.Is(err, otlp.ErrAddrInUse):
		s := a.checkHolder(ctx)
		a.setReceiver(s)
		close(done)
		args := []any{"addr", addr, "state", string(s.State), "note", s.Note}
		if s.Fix != "" {
			args = append(args, "fix", s.Fix)
		}
		a.Logger.Warn("otlp receiver address in use; reading the store only", args...)
		return
	case err != nil:
		a.setReceiver(ReceiverStatus{Address: addr, State: ReceiverOff,
			Note: "runlens could not start its receiver on " + addr + ": " + receiverStartProblem(err),
			Fix:  "Fix the problem above and restart the MCP server, or run `runlens collect`."})
		close(done)
		a.Logger.Warn("otlp receiver not started", "addr", addr, "err", err)
		return
	}
	a.setReceiver(ReceiverStatus{Address: r.Addr, State: ReceiverHosted,
		Note: "This runlens process receives on " + r.Addr + " into this project's store."})
	close(done)
	a.Logger.Info("otlp receiver listening", "addr", r.Addr)
	<-ctx.Done()
	if err := r.Shutdown(context.WithoutCancel(ctx)); err != nil {
		a.Logger.Warn("otlp receiver shutdown", "err", err)
	}
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
