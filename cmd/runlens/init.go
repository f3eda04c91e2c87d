package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/runlens/runlens/internal/app"
	"github.com/runlens/runlens/internal/config"
	"github.com/runlens/runlens/internal/hostcfg"
)

// initCmd writes the project-scoped MCP registration for each host and keeps the store folder
// out of version control.
func initCmd(args []string, stdout, stderr io.Writer) int {
	fs := newCLI("init", stdout, stderr)
	host := fs.String("host", "all", "`host` to register with: claude, codex, vscode, cursor or all")
	root := fs.String("project-root", "", "project `folder`")
	command := fs.String("command", "", "the `program` hosts start: a name on PATH or an absolute path")
	fs.defaultIs("project-root", "the current directory")
	fs.defaultIs("command", "runlens when it is on PATH, else the absolute path of this binary")
	if code, ok := fs.parse(args); !ok {
		return code
	}
	hosts, err := hostcfg.ParseHosts(*host)
	if err != nil {
		fmt.Fprintf(stderr, "runlens init: %v\n", err)
		return 2
	}
	if *root == "" {
		*root, _ = os.Getwd()
	}
	if *command == "" {
		var note string
		*command, note = defaultCommand(exec.LookPath, os.Executable)
		if note != "" {
			fmt.Fprintln(stdout, note)
		}
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
	for _, r := range hostcfg.Registered(*root, server.Name) {
		if _, err := hostcfg.Resolve(r.Command); err != nil {
			fmt.Fprintf(stdout, "warning: %s registers %q, which hosts cannot start: %v\n  fix: %s\n", r.File, r.Command, err, installHint)
		}
	}
	if added, err := hostcfg.Ignore(*root, ".runlens/"); err != nil {
		fmt.Fprintf(stderr, "runlens init: %v\n", err)
		failed = true
	} else if added {
		fmt.Fprintln(stdout, "added .runlens/ to .gitignore")
	}
	if !claimPorts(*root, stdout, stderr) {
		failed = true
	}
	if failed {
		return 1
	}
	return 0
}

// claimPorts checks the project's receiver addresses and, when another store's receiver (or
// a program that is not runlens, or a connection) holds one, writes free ports of the
// project's own into runlens.json and says where the app should export: otherwise the app's
// telemetry would land in the other project's store.
func claimPorts(root string, stdout, stderr io.Writer) bool {
	cfg, err := app.LoadConfig(root, os.Getenv, config.Overrides{ProjectRoot: root})
	if err != nil {
		fmt.Fprintln(stdout, "runlens.json has problems, so the receiver ports were not checked; run `runlens doctor`")
		return true
	}
	a, err := app.New(cfg, nil)
	if err != nil {
		return true
	}
	defer a.Close()
	ctx := context.Background()
	taken := func(s app.ReceiverStatus) bool {
		return s.State == app.ReceiverForeign || s.State == app.ReceiverUnknown
	}
	var held []app.ReceiverStatus
	httpStatus := a.ReceiverStatus(ctx)
	httpTaken := cfg.Receiver.Enabled && taken(httpStatus)
	if httpTaken {
		held = append(held, httpStatus)
	}
	var grpcTaken bool
	if cfg.Receiver.GRPCEnabled {
		g := a.GRPCReceiverStatus(ctx)
		if grpcTaken = taken(g); grpcTaken {
			held = append(held, g)
		}
	}
	if len(held) == 0 {
		return true
	}
	for _, s := range held {
		fmt.Fprintf(stdout, "receiver %s: %s\n", s.Address, s.Note)
	}
	httpAddr, grpcAddr := a.ProposePorts()
	if !httpTaken {
		httpAddr = cfg.Receiver.Address
	}
	if !grpcTaken {
		grpcAddr = cfg.Receiver.GRPCAddress
	}
	var set [][2]string
	var shown []string
	if httpTaken {
		set = append(set, [2]string{"address", httpAddr})
		shown = append(shown, fmt.Sprintf("%q: %q", "address", httpAddr))
	}
	if grpcTaken {
		set = append(set, [2]string{"grpcAddress", grpcAddr})
		shown = append(shown, fmt.Sprintf("%q: %q", "grpcAddress", grpcAddr))
	}
	file := filepath.Join(root, config.FileName)
	if err := hostcfg.SetObjectKeys(file, "receiver", set); err != nil {
		fmt.Fprintf(stderr, "runlens init: write the receiver ports into %s: %v\n", config.FileName, err)
		return false
	}
	fmt.Fprintf(stdout, "wrote \"receiver\": {%s} into %s: this project's own ports\n", strings.Join(shown, ", "), config.FileName)
	for _, name := range []string{config.EnvReceiver, config.EnvReceiverGRPC} {
		if os.Getenv(name) != "" {
			fmt.Fprintf(stdout, "  note: %s is set and overrides runlens.json in this shell\n", name)
		}
	}
	fmt.Fprintf(stdout, "export the app's telemetry there:\n  OTEL_EXPORTER_OTLP_ENDPOINT=http://%s OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf\n", httpAddr)
	if cfg.Receiver.GRPCEnabled {
		fmt.Fprintf(stdout, "  or, over gRPC: OTEL_EXPORTER_OTLP_ENDPOINT=http://%s OTEL_EXPORTER_OTLP_PROTOCOL=grpc\n", grpcAddr)
	}
	return true
}

// installHint is how to put runlens where hosts find it.
const installHint = "put runlens on PATH with `go install ./cmd/runlens` or `make install` in its source folder, or run `runlens init --command /absolute/path/to/runlens`"

// defaultCommand picks the command init registers: "runlens" when PATH has it, else the
// absolute path of the running binary, so the registration starts something either way. A
// binary of `go run` lives in a temporary build folder that is deleted when it exits, so then
// it registers "runlens" and says clearly that hosts will not find it yet.
func defaultCommand(lookPath func(string) (string, error), executable func() (string, error)) (command, note string) {
	if _, err := lookPath("runlens"); err == nil {
		return "runlens", ""
	}
	exe, err := executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil || temporaryBuild(exe) {
		return "runlens", "runlens is not on PATH, so hosts cannot start the registered command `runlens` yet: " + installHint + "."
	}
	return exe, "runlens is not on PATH; registered this binary by its absolute path, " + exe + "."
}

// temporaryBuild reports whether exe is a binary `go run` or `go test` built in one of the
// go-build folders it deletes afterwards.
func temporaryBuild(exe string) bool {
	for _, part := range strings.Split(filepath.ToSlash(exe), "/") {
		if strings.HasPrefix(part, "go-build") {
			return true
		}
	}
	return false
}
