package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/runlens/runlens/internal/app"
	"github.com/runlens/runlens/internal/config"
	"github.com/runlens/runlens/internal/conformance"
	"github.com/runlens/runlens/internal/mcp"
	"github.com/runlens/runlens/internal/server"
)

// instructions is what a host shows the model at initialize: which tool answers which symptom.
const instructions = `runlens shows what the app you are working on did and whether the workspace is wired. ` +
	`Start with get_app_status for "is it healthy?", get_recent_errors for "what is failing?", ` +
	`list_runs then get_run to follow one execution, analyze_service_performance and ` +
	`analyze_db_bottlenecks for slowness, get_last_job_result for background jobs. When tools return ` +
	`nothing, run doctor. search_docs and get_doc read the project docs; list_commands shows which ` +
	`project commands execute_command may run. Answers are bounded: follow page.nextCursor or ask for detail=full.`

// serve runs the MCP server over stdio until EOF or a signal.
// serveMemoryLimit is the Go runtime's soft memory limit in a serve process: with SQLite's page
// caches and the binary it keeps the process within B11's 64 MiB.
const serveMemoryLimit = 40 << 20

func serve(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o config.Overrides
	fs.StringVar(&o.ProjectRoot, "project-root", "", "project folder (default: current directory)")
	fs.StringVar(&o.Telemetry, "telemetry", "", "telemetry SOURCE: sqlite:PATH, clickhouse://…, aspire+http(s)://…, jaeger+http://…")
	fs.StringVar(&o.Profile, "profile", "", "tool profile: full or compact")
	fs.StringVar(&o.Receiver, "receiver", "", "OTLP/HTTP receiver address, or off (turns off both receivers)")
	fs.StringVar(&o.ReceiverGRPC, "receiver-grpc", "", "OTLP/gRPC receiver address, or off")
	fixtures := fs.Bool("test-fixtures", false, "serve the conformance suite's fixture tools (tests only)")
	pageSize := fs.Int("page-size", 0, "tools/list page size (0: all tools on one page)")
	if err := fs.Parse(args); err != nil {
		return 2
	}

	// A serve process keeps a small live heap (about 2 MB) and answers many small calls; the
	// default GC target would collect every few hundred calls and twice during start-up. A
	// higher target trades a few MB of memory for fewer pauses on the agent's critical path.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	// That target multiplies whatever a telemetry call holds for a moment (the durations of a
	// window, rows being shaped): measured under load, a serve process peaked at 107–116 MiB
	// with a live heap of a few MiB. A soft limit makes the collector run earlier once the
	// process holds that much, so it keeps the cheap idle path and a bounded peak.
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(serveMemoryLimit)
	}
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
		h = conformance.Wrap(h)
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
	if err := srv.Serve(ctx, stdin, stdout); err != nil {
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
