package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/runlens/runlens/internal/app"
	"github.com/runlens/runlens/internal/config"
	"github.com/runlens/runlens/internal/gcpolicy"
	"github.com/runlens/runlens/internal/otlp"
)

// stateEvery is how often collect rewrites its state file and checks its store, its project
// and, when detached, whether it has been idle long enough to exit.
const stateEvery = time.Second

// collect runs the OTLP receivers in the foreground, OTLP/HTTP and (unless turned off)
// OTLP/gRPC, writing into the embedded store, until SIGINT or SIGTERM. Every OK it answers
// means the batch is committed. It holds the store's pid file while it runs, so sessions find
// it and `runlens status` and `runlens stop` reach it; serve starts it with --detached.
func collect(args []string, stdout, stderr io.Writer) int {
	fs := newCLI("collect", stdout, stderr)
	var o config.Overrides
	fs.StringVar(&o.ProjectRoot, "project-root", "", "project `folder`")
	fs.StringVar(&o.Receiver, "listen", "", "OTLP/HTTP `address` to listen on")
	fs.StringVar(&o.ReceiverGRPC, "listen-grpc", "", "OTLP/gRPC `address` to listen on, or off")
	fs.StringVar(&o.Store, "store", "", "SQLite store `path`, relative to the project root")
	idle := fs.Duration("idle-exit", 0, "exit after this `duration` with no telemetry received and no session attached; 0 never")
	detached := fs.Bool("detached", false, "run as the store's detached receiver started by serve")
	fs.hide("detached")
	fs.defaultIs("project-root", "$RUNLENS_PROJECT_ROOT, else the current directory")
	fs.defaultIs("listen", "$RUNLENS_RECEIVER, else runlens.json, else 127.0.0.1:4318")
	fs.defaultIs("listen-grpc", "$RUNLENS_RECEIVER_GRPC, else runlens.json, else 127.0.0.1:4317")
	fs.defaultIs("store", "runlens.json, else .runlens/telemetry.db")
	fs.defaultIs("idle-exit", "0 (never); "+app.DefaultIdleExit.String()+" when serve starts it")
	if code, ok := fs.parse(args); !ok {
		return code
	}
	// Decoding and writing batches allocates in bursts over a small live heap: the default GC
	// target collected after every few batches (B5: 17% less CPU per span with this one).
	gcpolicy.Ingest()
	a, err := openApp(o, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "runlens: %v\n", err)
		return 1
	}
	lock, err := a.LockReceiver()
	if err != nil {
		a.Close()
		fmt.Fprintf(stderr, "runlens collect: %v\n", err)
		if errors.Is(err, app.ErrReceiverRunning) {
			fmt.Fprintln(stderr, "  `runlens status` shows it, `runlens stop` ends it")
		}
		return 1
	}
	defer lock.Release()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c := &collector{lock: lock, stderr: stderr, detached: *detached, idle: *idle, stats: &app.IngestStats{},
		started: time.Now(), configFile: a.Config.File, root: a.Config.ProjectRoot}
	for {
		code, again := c.run(ctx, a)
		a.Close()
		if !again {
			return code
		}
		// The store was deleted under the receivers: open a new one at the same path, unless
		// the configuration no longer loads.
		if a, err = openApp(o, stderr); err != nil {
			fmt.Fprintf(stderr, "runlens collect: %v\n", err)
			return 1
		}
	}
}

// collector is one collect process: its pid file, its counts, and what ends it.
type collector struct {
	lock       *app.ReceiverLock
	stderr     io.Writer
	detached   bool
	idle       time.Duration
	stats      *app.IngestStats
	started    time.Time
	configFile string
	root       string
	problem    string
}

// run listens on the App's addresses until a signal (code, false), a reason to exit (the
// project or its runlens.json deleted, idle; code, false), or the store's file deleted
// (again true: the caller opens a new store and runs again).
func (c *collector) run(ctx context.Context, a *app.App) (code int, again bool) {
	cfg := a.Config
	a.SetIngestStats(c.stats)
	stderr := c.stderr
	r, err := a.ListenReceiver(ctx, cfg.Receiver.Address)
	if err != nil {
		return cannotListen(ctx, stderr, cfg.Receiver.Address, err, a.ReceiverStatus), false
	}
	fmt.Fprintf(stderr, "runlens collect: receiving OTLP/HTTP on http://%s (store %s)\n", r.Addr, cfg.Store.Path)
	var g *app.GRPCReceiver
	if cfg.Receiver.GRPCEnabled {
		g, err = a.ListenGRPCReceiver(ctx, cfg.Receiver.GRPCAddress)
		if err != nil {
			_ = r.Shutdown(context.Background())
			return cannotListen(ctx, stderr, cfg.Receiver.GRPCAddress, err, a.GRPCReceiverStatus), false
		}
		fmt.Fprintf(stderr, "runlens collect: receiving OTLP/gRPC on %s\n", g.Addr)
	}
	state := app.ReceiverProcess{Detached: c.detached, Ready: true, Store: cfg.Store.Path,
		Listen: cfg.Receiver.Address, ListenGRPC: config.Off, HTTP: r.Addr,
		StartedUnixMs: c.started.UnixMilli(), IdleExitMs: c.idle.Milliseconds()}
	if g != nil {
		state.ListenGRPC, state.GRPC = cfg.Receiver.GRPCAddress, g.Addr
	}
	write := func() {
		state.UpdatedUnixMs = time.Now().UnixMilli()
		state.Spans, state.Logs = c.stats.Spans(), c.stats.Logs()
		if last := c.stats.Last(); !last.IsZero() {
			state.LastReceivedUnixMs = last.UnixMilli()
		}
		state.Problem = c.problem
		if err := c.lock.WriteState(state); err != nil {
			fmt.Fprintf(stderr, "runlens collect: %v\n", err)
		}
	}
	write()

	tick := time.NewTicker(stateEvery)
	defer tick.Stop()
	active := time.Now() // the last time it received or saw a session
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case <-a.StoreGone():
			again = true
			break loop
		case <-tick.C:
		}
		if !a.StoreIntact() {
			again = true
			break
		}
		if why := c.exitReason(); why != "" {
			fmt.Fprintf(stderr, "runlens collect: %s; exiting\n", why)
			break
		}
		if c.detached && c.idle > 0 {
			if c.lock.SessionsAttached() || c.stats.Last().After(active) {
				active = time.Now()
			} else if time.Since(active) >= c.idle && c.idleExit(r, g) {
				return 0, false
			}
		}
		write()
	}
	if again {
		c.problem = fmt.Sprintf("the store %s was deleted or replaced at %s; a new one was created", cfg.Store.Path, time.Now().Format(time.RFC3339))
		fmt.Fprintf(stderr, "runlens collect: the store %s was deleted or replaced; batches were refused (503) until a new store is open\n", cfg.Store.Path)
		if !c.lock.Intact() {
			// The receiver folder went with it (a removed .runlens): nothing tells sessions
			// this process runs any more, so let the next session start a receiver.
			fmt.Fprintln(stderr, "runlens collect: its pid file was removed too; exiting")
			again = false
		}
	}
	return c.shutdown(r, g), again
}

// idleExit stops the receivers of an idle detached receiver and releases its pid file, unless
// a session is deciding meanwhile whether it runs (it holds the start lock) or has attached.
// It reports whether it stopped them.
func (c *collector) idleExit(r *app.Receiver, g *app.GRPCReceiver) bool {
	release, ok := c.lock.TryStartLock()
	if !ok {
		return false
	}
	defer release()
	if c.lock.SessionsAttached() {
		return false
	}
	fmt.Fprintf(c.stderr, "runlens collect: no telemetry and no session for %s; exiting\n", c.idle)
	c.shutdown(r, g)
	// Released before the start lock, so the next session finds no receiver and starts one.
	c.lock.Release()
	return true
}

// exitReason says why a receiver should stop although nobody asked: a detached one whose
// project folder or runlens.json was deleted has nobody left to receive for.
func (c *collector) exitReason() string {
	if !c.detached {
		return ""
	}
	if _, err := os.Stat(c.root); err != nil {
		return "the project folder " + c.root + " is gone"
	}
	if c.configFile != "" {
		if _, err := os.Stat(c.configFile); err != nil {
			return "the configuration file " + c.configFile + " is gone"
		}
	}
	if !c.lock.Intact() {
		return "its pid file was removed"
	}
	return ""
}

// shutdown stops both receivers, letting in-flight exports finish.
func (c *collector) shutdown(r *app.Receiver, g *app.GRPCReceiver) int {
	code := 0
	if err := r.Shutdown(context.Background()); err != nil {
		fmt.Fprintf(c.stderr, "runlens collect: shutdown: %v\n", err)
		code = 1
	}
	if g != nil {
		if err := g.Shutdown(context.Background()); err != nil {
			fmt.Fprintf(c.stderr, "runlens collect: shutdown: %v\n", err)
			code = 1
		}
	}
	return code
}

// cannotListen reports a receiver that could not start and returns the exit code. For a port
// already taken it says whose receiver holds it: this project's is a second collector, another
// one means the app's telemetry goes to another project's store.
func cannotListen(ctx context.Context, stderr io.Writer, addr string, err error, status func(context.Context) app.ReceiverStatus) int {
	if !errors.Is(err, otlp.ErrAddrInUse) {
		fmt.Fprintf(stderr, "runlens collect: %v\n", err)
		return 1
	}
	s := status(ctx)
	fmt.Fprintf(stderr, "runlens collect: cannot listen on %s: %s\n", addr, s.Note)
	if s.Fix != "" {
		fmt.Fprintf(stderr, "  fix: %s\n", s.Fix)
	}
	return 1
}
