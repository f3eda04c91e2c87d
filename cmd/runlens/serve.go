package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/runlens/runlens/internal/app"
	"github.com/runlens/runlens/internal/config"
	"github.com/runlens/runlens/internal/gcpolicy"
	"github.com/runlens/runlens/internal/mcp"
	"github.com/runlens/runlens/internal/server"
)

// instructions is what a host shows the model at initialize: which tool answers which symptom.
const instructions = `runlens reads the running app's traces and logs, the workspace wiring, the project docs ` +
	`and the project commands policy allows. Start with get_app_status or get_recent_errors; run doctor when ` +
	`tools return nothing. Telemetry tools look back over window (15m, 2h, 1d) or from sinceUnixMs. Answers are ` +
	`bounded: page.truncated means items were left out (follow page.nextCursor, or ask detail=full); ` +
	`scan.limited means the data covered less than the window.`

// serve runs the MCP server over stdio until EOF or a signal.
func serve(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newCLI("serve", stdout, stderr)
	var o config.Overrides
	fs.StringVar(&o.ProjectRoot, "project-root", "", "project `folder`")
	fs.StringVar(&o.Telemetry, "telemetry", "", "telemetry `SOURCE`: sqlite:PATH, clickhouse://…, aspire+http(s)://…, jaeger+http://…")
	fs.StringVar(&o.Profile, "profile", "", "tool `profile`: full or compact")
	fs.StringVar(&o.Receiver, "receiver", "", "OTLP/HTTP receiver `address`, or off (turns off both receivers)")
	fs.StringVar(&o.ReceiverGRPC, "receiver-grpc", "", "OTLP/gRPC receiver `address`, or off")
	fixtures := fs.Bool("test-fixtures", false, "serve the conformance suite's fixture tools (a build with -tags conformance only)")
	pageSize := fs.Int("page-size", 0, "tools/list page size (0: all tools on one page; tests only)")
	fs.hide("test-fixtures", "page-size")
	fs.defaultIs("project-root", "$RUNLENS_PROJECT_ROOT, else the current directory")
	fs.defaultIs("telemetry", "$RUNLENS_TELEMETRY, else runlens.json, else sqlite:.runlens/telemetry.db")
	fs.defaultIs("profile", "$RUNLENS_MCP_PROFILE, else runlens.json, else full")
	fs.defaultIs("receiver", "$RUNLENS_RECEIVER, else runlens.json, else 127.0.0.1:4318")
	fs.defaultIs("receiver-grpc", "$RUNLENS_RECEIVER_GRPC, else runlens.json, else 127.0.0.1:4317")
	if code, ok := fs.parse(args); !ok {
		return code
	}

	// A serve process keeps a small live heap (about 2 MB) and answers many small calls; the
	// default GC target would collect every few hundred calls and twice during start-up. The
	// higher target is bounded by a soft limit: measured under load, a serve process without it
	// peaked at 107–116 MiB with a live heap of a few MiB.
	gcpolicy.Serve()
	a, err := openLenient(o, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "runlens: %v\n", err)
		return 1
	}
	defer a.Close()
	cfg, logger := a.Config, a.Logger
	if a.ConfigInvalid() {
		// Serve anyway: an agent whose server exits sees only "connection closed" and cannot
		// ask the doctor why. The receiver stays down, since where it should listen and write
		// is what the broken file may have said.
		logger.Warn("runlens.json is invalid; serving the doctor, every other tool answers config_invalid, and the receiver is not started",
			"problems", cfg.FileProblems.Error())
	}

	profile, err := server.ParseProfile(cfg.MCP.Profile)
	if err != nil {
		fmt.Fprintf(stderr, "runlens: %v\n", err)
		return 2
	}
	var h mcp.Handler = a.Handler(profile)
	if *fixtures {
		if wrapFixtures == nil {
			fmt.Fprintln(stderr, "runlens: --test-fixtures needs a build with -tags conformance")
			return 2
		}
		h = wrapFixtures(h)
	}

	// A host that closes our stdout must not kill the process mid-drain: with SIGPIPE ignored
	// the write fails with EPIPE and Serve returns.
	signal.Ignore(syscall.SIGPIPE)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if !a.ConfigInvalid() {
		a.HostReceiver(ctx) // in the background: initialize must not wait for the ports or the store
	}

	srv := mcp.NewServer(h, mcp.Options{
		Name:         "runlens",
		Title:        "runlens",
		Version:      version,
		Instructions: instructions,
		PageSize:     *pageSize,
		Logger:       logger,
	})
	err = srv.Serve(ctx, stdin, stdout)
	// A session that ends while it starts the detached receiver waits for it to listen, so
	// the app's telemetry is received after the session as it would have been during it.
	a.AwaitDetached(20 * time.Second)
	if err != nil {
		logger.Error("serve", "err", err)
		return 1
	}
	return 0
}

// openApp loads the configuration (flags over environment over runlens.json) and assembles
// runlens from it, logging to stderr.
func openApp(o config.Overrides, stderr io.Writer) (*app.App, error) {
	cwd, _ := os.Getwd()
	cfg, err := app.LoadConfig(cwd, os.Getenv, o)
	if err != nil {
		return nil, err
	}
	return app.New(cfg, newLogger(stderr, os.Getenv(config.EnvLogLevel)))
}

// openLenient is openApp for the commands that must keep answering when runlens.json is
// broken (serve, doctor): the file is left out and its problems reported (see app.Open).
func openLenient(o config.Overrides, stderr io.Writer) (*app.App, error) {
	cwd, _ := os.Getwd()
	return app.Open(cwd, os.Getenv, o, newLogger(stderr, os.Getenv(config.EnvLogLevel)))
}

// newLogger logs to stderr (stdout carries protocol messages only) at the RUNLENS_LOG_LEVEL level.
func newLogger(w io.Writer, level string) *slog.Logger {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil || level == "" {
		l = slog.LevelWarn
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l}))
}
