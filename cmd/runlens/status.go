package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/runlens/runlens/internal/app"
	"github.com/runlens/runlens/internal/config"
)

// stopWait bounds how long `runlens stop` waits for the receiver to finish its in-flight
// exports and exit.
const stopWait = 15 * time.Second

// statusCmd shows the store's receiver process: the detached one serve started, or a
// `runlens collect` run by hand. It exits 1 when none runs.
func statusCmd(args []string, stdout, stderr io.Writer) int {
	a, code, ok := projectApp("status", args, stdout, stderr)
	if !ok {
		return code
	}
	defer a.Close()
	store := shown(a.Config.ProjectRoot, a.Config.Store.Path)
	p, running := a.RunningReceiver()
	if !running {
		fmt.Fprintf(stdout, "no receiver is running for the store %s\n", store)
		if a.Detachable() {
			fmt.Fprintln(stdout, "  the next `runlens serve` starts one; `runlens collect` runs one in the foreground")
		}
		return 1
	}
	now := time.Now()
	kind := "detached"
	if !p.Detached {
		kind = "runlens collect"
	}
	fmt.Fprintf(stdout, "receiver   pid %d (%s), up %s\n", p.PID, kind, age(now, p.StartedUnixMs))
	if p.HTTP != "" {
		fmt.Fprintf(stdout, "OTLP/HTTP  http://%s\n", p.HTTP)
	}
	if p.GRPC != "" {
		fmt.Fprintf(stdout, "OTLP/gRPC  %s\n", p.GRPC)
	} else if p.Ready {
		fmt.Fprintln(stdout, "OTLP/gRPC  off")
	}
	fmt.Fprintf(stdout, "store      %s\n", shown(a.Config.ProjectRoot, p.Store))
	received := fmt.Sprintf("%d spans, %d logs", p.Spans, p.Logs)
	if p.LastReceivedUnixMs > 0 {
		received += ", the last " + age(now, p.LastReceivedUnixMs) + " ago"
	}
	fmt.Fprintf(stdout, "received   %s (state of %s ago)\n", received, age(now, p.UpdatedUnixMs))
	if p.IdleExitMs > 0 {
		fmt.Fprintf(stdout, "idle exit  after %s with no telemetry and no session\n", time.Duration(p.IdleExitMs)*time.Millisecond)
	}
	if p.Problem != "" {
		fmt.Fprintf(stdout, "problem    %s\n", p.Problem)
	}
	return 0
}

// stopCmd ends the store's receiver process: SIGTERM, then it waits for the process to finish
// its in-flight exports and release its pid file.
func stopCmd(args []string, stdout, stderr io.Writer) int {
	a, code, ok := projectApp("stop", args, stdout, stderr)
	if !ok {
		return code
	}
	defer a.Close()
	p, running, err := a.StopReceiver(context.Background(), stopWait)
	switch {
	case err != nil:
		fmt.Fprintf(stderr, "runlens stop: %v\n", err)
		return 1
	case !running:
		fmt.Fprintf(stdout, "no receiver is running for the store %s\n", shown(a.Config.ProjectRoot, a.Config.Store.Path))
		return 0
	}
	fmt.Fprintf(stdout, "stopped the receiver (pid %d) after %s; it stored %d spans and %d logs\n",
		p.PID, age(time.Now(), p.StartedUnixMs), p.Spans, p.Logs)
	if a.Detachable() {
		fmt.Fprintln(stdout, "  the next `runlens serve` of this project starts it again")
	}
	return 0
}

// shown is path relative to the project root when it lies inside it.
func shown(root, path string) string {
	rel, err := filepath.Rel(root, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return path
	}
	return filepath.ToSlash(rel)
}

// age is the time since ms, rounded for people.
func age(now time.Time, ms int64) string {
	if ms <= 0 {
		return "?"
	}
	d := now.Sub(time.UnixMilli(ms))
	if d < time.Hour {
		return d.Round(time.Second).String()
	}
	return d.Round(time.Minute).String()
}

// projectApp parses the arguments of a command that takes only --project-root and opens the
// project's app; when !ok the command exits with code.
func projectApp(name string, args []string, stdout, stderr io.Writer) (a *app.App, code int, ok bool) {
	fs := newCLI(name, stdout, stderr)
	var o config.Overrides
	fs.StringVar(&o.ProjectRoot, "project-root", "", "project `folder`")
	fs.defaultIs("project-root", "$RUNLENS_PROJECT_ROOT, else the current directory")
	if code, ok := fs.parse(args); !ok {
		return nil, code, false
	}
	a, err := openApp(o, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "runlens: %v\n", err)
		return nil, 1, false
	}
	return a, 0, true
}
