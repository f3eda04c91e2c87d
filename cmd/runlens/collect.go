package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/runlens/runlens/internal/config"
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
