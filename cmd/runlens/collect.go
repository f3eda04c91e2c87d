package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/runlens/runlens/internal/config"
	"github.com/runlens/runlens/internal/otlp"
)

// collect runs the OTLP/HTTP receiver in the foreground, writing into the embedded store, until
// SIGINT or SIGTERM. Every 200 it answers means the batch is committed.
func collect(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("collect", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o config.Overrides
	fs.StringVar(&o.ProjectRoot, "project-root", "", "project folder (default: current directory)")
	fs.StringVar(&o.Receiver, "listen", "", "address to listen on (default 127.0.0.1:4318)")
	fs.StringVar(&o.Store, "store", "", "SQLite store path (default .runlens/telemetry.db)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	a, err := openApp(o, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "runlens: %v\n", err)
		return 1
	}
	defer a.Close()
	cfg := a.Config

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	r, err := a.ListenReceiver(ctx, cfg.Receiver.Address)
	if errors.Is(err, otlp.ErrAddrInUse) {
		// Say whose receiver holds the port: this project's is a second collector, another
		// one means the app's telemetry goes to another project's store.
		s := a.ReceiverStatus(ctx)
		fmt.Fprintf(stderr, "runlens collect: cannot listen on %s: %s\n", cfg.Receiver.Address, s.Note)
		if s.Fix != "" {
			fmt.Fprintf(stderr, "  fix: %s\n", s.Fix)
		}
		return 1
	}
	if err != nil {
		fmt.Fprintf(stderr, "runlens collect: %v\n", err)
		return 1
	}
	fmt.Fprintf(stderr, "runlens collect: receiving OTLP/HTTP on http://%s (store %s)\n", r.Addr, cfg.Store.Path)
	<-ctx.Done()
	if err := r.Shutdown(context.Background()); err != nil {
		fmt.Fprintf(stderr, "runlens collect: shutdown: %v\n", err)
		return 1
	}
	return 0
}
