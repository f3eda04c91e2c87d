package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/runlens/runlens/internal/app"
	"github.com/runlens/runlens/internal/config"
	"github.com/runlens/runlens/internal/hostcfg"
)

// initCmd writes the project-scoped MCP registration for each host and keeps the store folder
// out of version control.
func initCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("init", flag.ContinueOnError)
	fs.SetOutput(stderr)
	host := fs.String("host", "all", "claude, codex, vscode, cursor or all")
	root := fs.String("project-root", "", "project folder (default: current directory)")
	command := fs.String("command", "runlens", "the program hosts start (on PATH, or an absolute path)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	hosts, err := hostcfg.ParseHosts(*host)
	if err != nil {
		fmt.Fprintf(stderr, "runlens init: %v\n", err)
		return 2
	}
	if *root == "" {
		*root, _ = os.Getwd()
	}
	server := hostcfg.Server{Name: "runlens", Command: *command, Args: []string{"serve"}}
	failed := false
	for _, h := range hosts {
		res, err := hostcfg.Register(*root, h, server)
		if err != nil {
			fmt.Fprintf(stderr, "runlens init: %s: %v\n", h, err)
			failed = true
			continue
		}
		fmt.Fprintf(stdout, "%-7s %-20s %s\n", h, res.File, res.Note)
	}
	if added, err := hostcfg.Ignore(*root, ".runlens/"); err != nil {
		fmt.Fprintf(stderr, "runlens init: %v\n", err)
		failed = true
	} else if added {
		fmt.Fprintln(stdout, "added .runlens/ to .gitignore")
	}
	proposePort(*root, stdout)
	if failed {
		return 1
	}
	return 0
}

// proposePort checks the project's receiver address and, when another store's receiver (or a
// program that is not runlens) holds it, proposes a free port of the project's own: otherwise
// the app's telemetry would land in the other project's store.
func proposePort(root string, stdout io.Writer) {
	cfg, err := app.LoadConfig(root, os.Getenv, config.Overrides{ProjectRoot: root})
	if err != nil {
		fmt.Fprintln(stdout, "runlens.json has problems, so the receiver port was not checked; run `runlens doctor`")
		return
	}
	a, err := app.New(cfg, nil)
	if err != nil {
		return
	}
	defer a.Close()
	s := a.ReceiverStatus(context.Background())
	if s.State != app.ReceiverForeign && s.State != app.ReceiverUnknown {
		return
	}
	fmt.Fprintf(stdout, "receiver %s\n  %s\n  %s\n", s.Address, s.Note, s.Fix)
}
