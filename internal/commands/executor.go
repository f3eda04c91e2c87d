package commands

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"
)

// Executor defaults.
const (
	DefaultTailBytes     = 16 << 10
	DefaultGrace         = 2 * time.Second
	DefaultProgressEvery = 500 * time.Millisecond
	// drainWait bounds how long output is still read after the command's group is gone; only a
	// process that escaped the group (setsid) can hold the pipe open that long.
	drainWait = 250 * time.Millisecond
)

// ErrStart marks a command that could not be started (program missing, not executable).
var ErrStart = errors.New("command could not start")

// Executor runs argv without a shell in the project root, with stdin at /dev/null, in its own
// process group, keeping only the newest output bytes. A zero field takes its default.
type Executor struct {
	// Dir is the working directory: the project root.
	Dir string
	// Env is the environment the command inherits before secrets are removed; nil means this
	// process's environment.
	Env []string
	// SecretEnv lists names or *-patterns of variables the command must not see.
	SecretEnv []string
	// TailBytes is how many of the newest bytes of combined stdout and stderr are kept.
	TailBytes int
	// Grace is how long a command has to exit after SIGTERM before SIGKILL.
	Grace time.Duration
	// ProgressEvery is the interval between progress callbacks.
	ProgressEvery time.Duration
}

// RunOptions are the per-call settings.
type RunOptions struct {
	// Timeout is required: there is no unbounded run.
	Timeout time.Duration
	// Progress, when set, is called every ProgressEvery from the calling goroutine (never after
	// Run returns) with the time elapsed and the output bytes seen so far.
	Progress func(elapsed time.Duration, bytes int64)
	// Env are variables (KEY=value) set over the inherited, secret-stripped environment.
	Env []string
}

// Result is what happened. Tail is the output without terminal escape sequences (colours,
// cursor moves, titles, hyperlinks; see escapeFilter): it starts at a UTF-8 boundary but may
// hold any other bytes the command wrote, and it is not redacted; callers redact before it
// leaves the process.
type Result struct {
	// ExitCode is the command's exit status, or -1 when it was stopped (timeout, cancellation)
	// or killed by a signal.
	ExitCode int
	Duration time.Duration
	Tail     []byte
	// TotalBytes is how much output the command wrote in all, escape sequences included.
	TotalBytes int64
	// Truncated is true when older output was dropped from Tail (escape sequences removed by
	// the filter do not count as dropped).
	Truncated bool
	TimedOut  bool
	Cancelled bool
}

// Run starts argv and waits for it, its timeout or ctx. On timeout or cancellation the whole
// process group gets SIGTERM, then SIGKILL after the grace period; when the command ends, any
// process it left behind in its group is killed, so nothing it started outlives the call.
// The only error is a command that could not start (ErrStart) or bad arguments.
func (e *Executor) Run(ctx context.Context, argv []string, opts RunOptions) (Result, error) {
	if len(argv) == 0 {
		return Result{}, errors.New("run: empty argv")
	}
	if opts.Timeout <= 0 {
		return Result{}, errors.New("run: a timeout is required")
	}
	out := newTail(orDefault(e.TailBytes, DefaultTailBytes))
	filter := newEscapeFilter(out) // the ring keeps text only, so no cut can leave half a sequence
	pr, pw, err := os.Pipe()
	if err != nil {
		return Result{}, fmt.Errorf("run: output pipe: %w", err)
	}
	defer pr.Close()

	base := e.Env
	if base == nil {
		base = os.Environ()
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = e.Dir
	cmd.Env = withEnv(childEnv(base, e.SecretEnv), opts.Env)
	cmd.Stdin = nil // os/exec connects the null device: the command never sees the MCP stream
	cmd.Stdout = pw // one pipe for both streams keeps their interleaving
	cmd.Stderr = pw
	ownProcessGroup(cmd)

	if ctx.Err() != nil {
		pw.Close()
		return Result{ExitCode: -1, Cancelled: true}, nil
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		pw.Close()
		return Result{}, fmt.Errorf("%w: %s: %v", ErrStart, argv[0], startReason(err))
	}
	pw.Close() // the child holds the only write ends now
	copied := make(chan struct{})
	go func() {
		_, _ = io.Copy(filter, pr) // ends when every writer is gone or pr is closed
		close(copied)
	}()
	exited := make(chan struct{})
	var reaped bool
	go func() {
		reaped = awaitExit(cmd)
		close(exited)
	}()

	res := e.wait(ctx, cmd, opts, start, exited, filter)
	if !reaped {
		// The leader has exited but is not reaped yet, so its pid, and with it the group id,
		// cannot have been reused: signalling the group reaches only what the command left.
		killGroup(cmd, true)
		_ = cmd.Wait() // reap; the exit status is read from cmd.ProcessState
	}
	select {
	case <-copied:
	case <-time.After(drainWait):
		pr.Close()
		<-copied
	}
	res.Tail, res.Truncated = out.Bytes()
	res.TotalBytes = filter.Total()
	res.ExitCode = -1
	if !res.TimedOut && !res.Cancelled && cmd.ProcessState != nil {
		res.ExitCode = cmd.ProcessState.ExitCode() // -1 when a signal ended it
	}
	return res, nil
}

// wait blocks until the command exits, stopping it on timeout or cancellation, and reports
// progress meanwhile.
func (e *Executor) wait(ctx context.Context, cmd *exec.Cmd, opts RunOptions, start time.Time, exited <-chan struct{}, out *escapeFilter) Result {
	var res Result
	timer := time.NewTimer(opts.Timeout)
	defer timer.Stop()
	var tick <-chan time.Time
	if opts.Progress != nil {
		t := time.NewTicker(orDefault(e.ProgressEvery, DefaultProgressEvery))
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-exited:
			res.Duration = time.Since(start)
			return res
		case <-timer.C:
			res.TimedOut = true
			e.stop(cmd, exited)
			res.Duration = time.Since(start)
			return res
		case <-ctx.Done():
			res.Cancelled = true
			e.stop(cmd, exited)
			res.Duration = time.Since(start)
			return res
		case <-tick:
			opts.Progress(time.Since(start), out.Total())
		}
	}
}

// stop sends SIGTERM to the group, then SIGKILL if the command has not exited within the grace
// period.
func (e *Executor) stop(cmd *exec.Cmd, exited <-chan struct{}) {
	killGroup(cmd, false)
	grace := time.NewTimer(orDefault(e.Grace, DefaultGrace))
	defer grace.Stop()
	select {
	case <-exited:
	case <-grace.C:
		killGroup(cmd, true)
		<-exited
	}
}

// startReason keeps the part of a start error worth showing, without the resolved path of the
// program on this machine.
func startReason(err error) string {
	switch {
	case errors.Is(err, exec.ErrNotFound):
		return "program not found on PATH"
	case errors.Is(err, exec.ErrDot):
		return "program resolves to the current directory through PATH, which is refused"
	case errors.Is(err, os.ErrNotExist):
		return "program does not exist"
	case errors.Is(err, os.ErrPermission):
		return "program is not executable"
	}
	return "cannot execute the program"
}

func orDefault[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}
