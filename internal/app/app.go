// Package app assembles runlens from its configuration: the telemetry source, the docs corpus,
// the command runner, the doctor, the flows, and the MCP handler. The commands of cmd/runlens
// (serve, collect, demo, doctor) build on it, so each wires the same parts the same way.
//
// Everything that costs time (opening the store, indexing docs, compiling schemas) happens on
// first use, so `runlens serve` answers initialize and tools/list within milliseconds.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/runlens/runlens/internal/telemetry/engine"

	"github.com/runlens/runlens/gen"
	"github.com/runlens/runlens/internal/commands"
	"github.com/runlens/runlens/internal/config"
	"github.com/runlens/runlens/internal/docs"
	"github.com/runlens/runlens/internal/flows"
	"github.com/runlens/runlens/internal/otlp"
	"github.com/runlens/runlens/internal/secretenv"
	"github.com/runlens/runlens/internal/server"
	"github.com/runlens/runlens/internal/shape"
	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/conventions"
	"github.com/runlens/runlens/internal/telemetry/jaeger"
	"github.com/runlens/runlens/internal/telemetry/stack"
	"github.com/runlens/runlens/internal/telemetry/store"
)

// LoadConfig reads the effective configuration for a project: defaults, runlens.json,
// RUNLENS_* variables, then flags.
func LoadConfig(cwd string, getenv func(string) string, flags config.Overrides) (*config.Config, error) {
	return config.Load(cwd, getenv, flags)
}

// App is runlens assembled from one configuration.
type App struct {
	Config   *config.Config
	Logger   *slog.Logger
	Flows    *flows.Flows
	Redactor *shape.Redactor

	storeOnce   sync.Once
	storeOpened atomic.Bool
	store       *store.Store
	storeErr    error
	// recv and grpcRecv are who receives on the configured OTLP/HTTP and OTLP/gRPC addresses,
	// as far as this process knows.
	recv, grpcRecv receiverState
	// otlpStats counts what this process's receivers dropped (metric data points).
	otlpStats     otlp.Stats
	retentionOnce sync.Once
	// ingest counts what the receivers stored; guard watches the store's file under them.
	ingest        *IngestStats
	guard         storeGuard
	storeGoneOnce sync.Once
	// detaching is closed once serve's check (and start) of the detached receiver is over;
	// nil when this process does not run one.
	detaching chan struct{}
	// conventions loads the telemetry conventions once; only queries of the embedded store
	// need them.
	conventions func() (*conventions.Conventions, error)
}

// New assembles the parts; it opens nothing yet.
func New(cfg *config.Config, logger *slog.Logger) (*App, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	a := &App{Config: cfg, Logger: logger, ingest: &IngestStats{}}
	a.guard.init()
	a.recv.proto, a.grpcRecv.proto = httpProtocol, grpcProtocol

	// Validating conventions compiles their schema, a millisecond and a garbage collection at
	// start-up. A configured document is checked now, so that a mistake in it stops the start
	// with its message; the built-in preset, known to be valid, waits for the first query.
	a.conventions = sync.OnceValues(func() (*conventions.Conventions, error) {
		return loadConventions(cfg.Conventions)
	})
	if len(cfg.Conventions.Document) > 0 {
		if _, err := a.conventions(); err != nil {
			return nil, &partError{pointer: "/conventions", err: err}
		}
	}
	corpus, runner, err := buildParts(cfg)
	if err != nil {
		return nil, err
	}
	keys := append(shape.DefaultSensitiveKeys(), cfg.SensitiveKeys...)
	a.Redactor = shape.NewRedactor(shape.RedactorOptions{
		SensitiveKeys: keys,
		SecretValues:  secretenv.RedactionValues(os.Environ(), cfg.Commands.SecretEnv),
	})
	a.Flows = flows.New(flows.Deps{
		Telemetry: a.telemetrySource(),
		Docs:      corpus,
		Commands:  runner,
		Redactor:  a.Redactor,
		// The cursor key lives with the project's data, so a restarted server honours the
		// cursors of the one before it.
		Cursors: shape.NewFileCodec(filepath.Join(cfg.ProjectRoot, ".runlens"), logger),
		Stacks:  projectFiles(cfg.ProjectRoot, cfg.Telemetry.StackSnippetDeny, logger),
		// The flush grace of a command's telemetry.
		TelemetryGrace: cfg.Commands.TelemetryGrace,
	})
	a.Flows.Deps.Doctor = newDoctor(a)
	a.Flows.Deps.Receivers = a.receiversAnswer
	return a, nil
}

// partError is a part of the configuration file that passed its schema but that runlens cannot
// build; pointer names the part in the file.
type partError struct {
	pointer string
	err     error
}

func (e *partError) Error() string { return e.err.Error() }
func (e *partError) Unwrap() error { return e.err }

// buildParts builds the docs corpus and the command runner, which check what the schema cannot
// (exclude patterns, the policy's rules); they open nothing yet.
func buildParts(cfg *config.Config) (*docs.Corpus, *commands.Runner, error) {
	corpus, err := docs.Open(docs.Options{ProjectRoot: cfg.ProjectRoot, Root: cfg.Docs.Root, Exclude: cfg.Docs.Exclude})
	if err != nil {
		return nil, nil, &partError{pointer: "/docs", err: fmt.Errorf("open docs: %w", err)}
	}
	if err := stack.CheckDeny(cfg.Telemetry.StackSnippetDeny); err != nil {
		return nil, nil, &partError{pointer: "/telemetry/stackSnippetDeny", err: err}
	}
	runner, err := commands.New(commandOptions(cfg))
	if err != nil {
		return nil, nil, &partError{pointer: "/commands", err: fmt.Errorf("configure commands: %w", err)}
	}
	return corpus, runner, nil
}

// Handler returns the MCP handler for profile p.
func (a *App) Handler(p server.Profile) *server.Handler {
	var served gen.Flows = a.Flows
	if a.ConfigInvalid() {
		served = configInvalidFlows{a: a}
	}
	return server.New(server.Options{
		Profile:  p,
		Flows:    served,
		Redactor: a.Redactor,
		Budgets: server.Budgets{
			Standard:    a.Config.Budgets.Standard,
			Large:       a.Config.Budgets.Large,
			Summary:     a.Config.Budgets.Summary,
			FullCeiling: a.Config.Budgets.FullCeiling,
		},
		Sources: func(ctx context.Context) []server.Source {
			info := a.Flows.Telemetry.Describe(ctx)
			reachable := info.Reachable
			return []server.Source{{Kind: sourceKind(info.Kind), Endpoint: info.Endpoint, Reachable: &reachable}}
		},
		Logger: a.Logger,
	})
}

// Store opens the embedded store once, for the receiver and the queries alike. A store the
// configuration names as a source must already exist (see checkStoreExists).
func (a *App) Store(ctx context.Context) (*store.Store, error) {
	if !a.storeOpened.Load() {
		if err := a.checkStoreExists(); err != nil {
			return nil, err
		}
	}
	a.storeOnce.Do(func() {
		conv, err := a.conventions()
		if err != nil {
			a.storeErr = err
			return
		}
		// The store outlives the call that opens it: a cancelled first request must not leave
		// the process without a store for good.
		a.store, a.storeErr = store.Open(context.WithoutCancel(ctx), store.Options{
			Path:        a.Config.Store.Path,
			Retention:   a.Config.Store.Retention,
			MaxBytes:    a.Config.Store.MaxBytes,
			Conventions: conv,
			Logger:      a.Logger,
		})
		a.storeOpened.Store(a.storeErr == nil)
	})
	return a.store, a.storeErr
}

// Close releases what was opened.
func (a *App) Close() error {
	var errs []error
	if a.store != nil {
		errs = append(errs, a.store.Close())
	}
	return errors.Join(errs...)
}

// telemetrySource returns the configured source, opened lazily.
func (a *App) telemetrySource() telemetry.Source {
	src := a.Config.Telemetry.Source
	switch src.Kind {
	case config.SourceSQLite, "":
		return &lazySource{open: func(ctx context.Context) (telemetry.Source, error) {
			conv, err := a.conventions()
			if err != nil {
				return nil, err
			}
			st, err := a.Store(ctx)
			var missing *missingStoreError
			if errors.As(err, &missing) {
				return nil, missing.toolError()
			}
			if err != nil {
				return nil, err
			}
			return engine.New(store.NewBackend(st), conv), nil
		}, info: telemetry.SourceInfo{Kind: "embedded"}}
	case config.SourceClickHouse:
		return a.clickhouseSource()
	case config.SourceAspire:
		return a.aspireSource()
	case config.SourceJaeger:
		endpoint := strings.TrimPrefix(src.String(), string(config.SourceJaeger)+"+") // credentials masked
		return &lazySource{open: func(ctx context.Context) (telemetry.Source, error) {
			conv, err := a.conventions()
			if err != nil {
				return nil, err
			}
			b, err := jaeger.New(src.Endpoint, jaeger.Options{})
			if err != nil {
				return nil, err
			}
			return engine.New(b, conv), nil
		}, info: telemetry.SourceInfo{Kind: jaeger.Kind, Endpoint: endpoint, Note: jaeger.Note}}
	default:
		return unsupportedSource(telemetry.SourceInfo{Kind: string(src.Kind), Endpoint: src.Endpoint})
	}
}

// projectFiles indexes the project's files once, on the first answer that maps a stack trace
// onto them; a project that cannot be indexed gives answers without locations.
func projectFiles(root string, deny []string, logger *slog.Logger) func(context.Context) *stack.Project {
	var once sync.Once
	var p *stack.Project
	return func(ctx context.Context) *stack.Project {
		once.Do(func() {
			var err error
			if p, err = stack.Open(context.WithoutCancel(ctx), root, stack.Options{Deny: deny}); err != nil {
				logger.Debug("stack locations off: the project cannot be indexed", "err", err)
				p = nil
			}
		})
		return p
	}
}

// loadConventions builds the telemetry conventions: the configured document, or the preset.
func loadConventions(c config.Conventions) (*conventions.Conventions, error) {
	if len(c.Document) > 0 {
		conv, err := conventions.Load(c.Document)
		if err != nil {
			return nil, fmt.Errorf("load conventions: %w", err)
		}
		return conv, nil
	}
	name := c.Preset
	if name == "" {
		name = "otel"
	}
	conv, err := conventions.Preset(name)
	if err != nil {
		return nil, fmt.Errorf("load conventions preset %s: %w", name, err)
	}
	return conv, nil
}

// commandOptions maps the configuration onto the command runner.
func commandOptions(cfg *config.Config) commands.Options {
	c := cfg.Commands
	o := commands.Options{
		Root:                cfg.ProjectRoot,
		DiscoverMakefile:    c.DiscoverMakefile,
		DiscoverPackageJSON: c.DiscoverPackageJSON,
		DefaultTimeout:      c.DefaultTimeout,
		MaxTimeout:          c.MaxTimeout,
		Executor: commands.Executor{
			SecretEnv: c.SecretEnv,
			TailBytes: c.OutputTailBytes,
		},
	}
	for _, e := range c.Catalog {
		o.Declared = append(o.Declared, commands.Command{Path: e.Path, Argv: e.Argv, Description: e.Description, Usage: e.Usage, Timeout: e.Timeout, NoTelemetry: e.NoTelemetry})
	}
	for _, r := range c.Allow {
		o.Allow = append(o.Allow, commands.Rule{Name: r.Name, Prefix: r.Prefix})
	}
	for _, r := range c.Deny {
		o.Deny = append(o.Deny, commands.Rule{Name: r.Name, Prefix: r.Prefix, Flags: r.Flags})
	}
	return o
}

// sourceKind maps a source's kind onto the contract's source-kind enum.
func sourceKind(k string) string {
	switch strings.ToLower(k) {
	case "sqlite", "embedded", "":
		return "embedded"
	}
	return strings.ToLower(k)
}
