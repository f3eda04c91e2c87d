package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/runlens/runlens/internal/demo"
)

// demoCmd runs the end-to-end demonstration on the embedded default.
func demoCmd(args []string, stdout, stderr io.Writer) int {
	fs := newCLI("demo", stdout, stderr)
	requests := fs.Int("requests", 60, "how many API requests the demo app serves")
	if code, ok := fs.parse(args); !ok {
		return code
	}
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "runlens demo: %v\n", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := demo.Run(ctx, demo.Options{Exe: exe, Out: stdout, Progress: stderr, Requests: *requests}); err != nil {
		fmt.Fprintf(stderr, "runlens demo: %v\n", err)
		return 1
	}
	return 0
}
