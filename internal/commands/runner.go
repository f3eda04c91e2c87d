package commands

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// ErrNotFound is returned for a command path that is not in the catalog.
var ErrNotFound = errors.New("command not found")

// ErrDenied is matched (errors.Is) by every DeniedError.
var ErrDenied = errors.New("command denied")

// DeniedError is a call the policy refused; nothing was started.
type DeniedError struct {
	Decision Decision
}

func (e *DeniedError) Error() string {
	return fmt.Sprintf("command denied by rule %s: %s", e.Decision.Rule, e.Decision.Reason)
}

// Is makes errors.Is(err, ErrDenied) true.
func (e *DeniedError) Is(target error) bool { return target == ErrDenied }

// Options configure a Runner; they mirror the "commands" section of the configuration.
type Options struct {
	// Root is the project root: where commands run and where discovery looks.
	Root string
	// Declared are the configured commands.
	Declared []Command
	// DiscoverMakefile and DiscoverPackageJSON extend the catalog from project files.
	DiscoverMakefile    bool
	DiscoverPackageJSON bool
	Allow, Deny         []Rule
	// DefaultTimeout applies when neither the call nor the command sets a timeout.
	DefaultTimeout time.Duration
	// MaxTimeout caps every timeout.
	MaxTimeout time.Duration
	// Executor holds the process settings; its Dir is set to Root.
	Executor Executor
}

// Runner is the commands port: the catalog (refreshed when discovered files change), the
// policy, and the executor, in the one order that guarantees a denied call starts nothing.
type Runner struct {
	opts   Options
	policy *Policy
	exec   Executor

	mu       sync.Mutex
	catalog  *Catalog
	stamps   map[string]fileStamp
	problems []error
}

// fileStamp is what tells a discovered file changed without reading it.
type fileStamp struct {
	size    int64
	modTime time.Time
	exists  bool
}

// New checks the options and builds the first catalog.
func New(opts Options) (*Runner, error) {
	if opts.Root == "" {
		return nil, errors.New("commands: a project root is required")
	}
	if opts.MaxTimeout <= 0 {
		return nil, errors.New("commands: a maximum timeout is required")
	}
	if opts.DefaultTimeout <= 0 || opts.DefaultTimeout > opts.MaxTimeout {
		opts.DefaultTimeout = opts.MaxTimeout
	}
	policy, err := NewPolicy(opts.Allow, opts.Deny)
	if err != nil {
		return nil, err
	}
	if _, err := NewCatalog(opts.Declared, nil); err != nil {
		return nil, err
	}
	r := &Runner{opts: opts, policy: policy, exec: opts.Executor}
	r.exec.Dir = opts.Root
	r.Catalog()
	return r, nil
}

// Catalog returns the current catalog. Discovered files are re-read only when their size or
// modification time changed, so calling it per request costs two stats.
func (r *Runner) Catalog() *Catalog {
	r.mu.Lock()
	defer r.mu.Unlock()
	stamps := r.stampDiscovered()
	if r.catalog != nil && sameStamps(stamps, r.stamps) {
		return r.catalog
	}
	var discovered []Command
	var problems []error
	if r.opts.DiscoverMakefile {
		cmds, err := DiscoverMakefile(r.opts.Root)
		if err != nil {
			problems = append(problems, fmt.Errorf("discover Makefile targets: %w", err))
		}
		discovered = append(discovered, cmds...)
	}
	if r.opts.DiscoverPackageJSON {
		cmds, err := DiscoverPackageJSON(r.opts.Root)
		if err != nil {
			problems = append(problems, fmt.Errorf("discover package.json scripts: %w", err))
		}
		discovered = append(discovered, cmds...)
	}
	c, err := NewCatalog(r.opts.Declared, discovered)
	if err != nil {
		// New already accepted the declared commands, and discovered ones never fail.
		problems = append(problems, err)
		c, _ = NewCatalog(nil, nil)
	}
	r.catalog, r.stamps, r.problems = c, stamps, problems
	return c
}

// Problems lists why discovery last failed (an unreadable Makefile, invalid package.json), for
// the doctor; empty when everything was read.
func (r *Runner) Problems() []error {
	r.Catalog()
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]error(nil), r.problems...)
}

// Policy returns the policy, for list_commands and the doctor.
func (r *Runner) Policy() *Policy { return r.policy }

// Lookup finds a catalog command by a requested path, normalized as the policy normalizes it.
func (r *Runner) Lookup(path string) (Command, bool) {
	return r.Catalog().Lookup(canonicalPath(path))
}

// Decide applies the policy to a call against the current catalog.
func (r *Runner) Decide(path string, args []string) Decision {
	return r.policy.Decide(r.Catalog(), path, args)
}

// Timeout is the timeout a call gets: the requested one, else the command's own, else the
// default, and never more than the maximum.
func (r *Runner) Timeout(cmd Command, requested time.Duration) time.Duration {
	t := requested
	if t <= 0 {
		t = cmd.Timeout
	}
	if t <= 0 {
		t = r.opts.DefaultTimeout
	}
	return min(t, r.opts.MaxTimeout)
}

// ExecuteOptions are the per-call settings of Execute.
type ExecuteOptions struct {
	// Timeout is the requested timeout; zero means the command's or the default.
	Timeout time.Duration
	// Progress is passed to the executor (see RunOptions.Progress).
	Progress func(elapsed time.Duration, bytes int64)
	// Env, when set, is called with the allowed command before it starts and returns
	// variables (KEY=value) to set in its environment, over the inherited ones.
	Env func(cmd Command) []string
}

// Execute decides and, only if allowed, runs a command. A path outside the catalog is
// ErrNotFound; any other refusal is a *DeniedError; in both cases no process was started.
// The Result's Tail is not redacted: the caller must redact it before it leaves the process.
func (r *Runner) Execute(ctx context.Context, path string, args []string, opts ExecuteOptions) (Result, error) {
	catalog := r.Catalog()
	d := r.policy.Decide(catalog, path, args)
	if d.Rule == RuleNotInCatalog {
		return Result{}, fmt.Errorf("%w: %s", ErrNotFound, quoteBounded(path))
	}
	if !d.Allowed {
		return Result{}, &DeniedError{Decision: d}
	}
	cmd, _ := catalog.Lookup(canonicalPath(path))
	argv := append(append([]string(nil), cmd.Argv...), args...)
	var env []string
	if opts.Env != nil {
		env = opts.Env(cmd)
	}
	return r.exec.Run(ctx, argv, RunOptions{Timeout: r.Timeout(cmd, opts.Timeout), Progress: opts.Progress, Env: env})
}

func (r *Runner) stampDiscovered() map[string]fileStamp {
	var names []string
	if r.opts.DiscoverMakefile {
		names = append(names, makefileNames...)
	}
	if r.opts.DiscoverPackageJSON {
		names = append(names, "package.json")
	}
	stamps := make(map[string]fileStamp, len(names))
	for _, n := range names {
		info, err := os.Lstat(filepath.Join(r.opts.Root, n))
		if err != nil {
			stamps[n] = fileStamp{}
			continue
		}
		stamps[n] = fileStamp{size: info.Size(), modTime: info.ModTime(), exists: true}
	}
	return stamps
}

func sameStamps(a, b map[string]fileStamp) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok || v.size != w.size || !v.modTime.Equal(w.modTime) || v.exists != w.exists {
			return false
		}
	}
	return true
}
