package main

import (
	"flag"
	"fmt"
	"io"
	"os"

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
	if failed {
		return 1
	}
	return 0
}
