package compat

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os/exec"
	"testing"
	"time"
)

// proc is one finished child process.
type proc struct {
	stdout, stderr []byte
	exitCode       int
	elapsed        time.Duration
}

// runOpts says how to start a child process.
type runOpts struct {
	dir     string
	env     []string // added to the test's environment; later entries win
	stdin   io.Reader
	timeout time.Duration // default 60 s
}

// command prepares name in its own process group, so that ending it also ends everything it
// started (a Node client's server child, supergateway's children); the group is killed when
// ctx ends.
func command(ctx context.Context, o runOpts, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = o.dir
	cmd.Env = append(serverEnv(), o.env...)
	cmd.Stdin = o.stdin
	ownProcessGroup(cmd)
	cmd.Cancel = func() error { return killProcessGroup(cmd) }
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// run runs name to completion within o.timeout and returns what it printed and how it ended.
// Running out of time fails the test, with the process's stderr.
func run(t testing.TB, o runOpts, name string, args ...string) proc {
	t.Helper()
	if o.timeout == 0 {
		o.timeout = 60 * time.Second
	}
	ctx, cancel := context.WithTimeout(t.Context(), o.timeout)
	defer cancel()
	cmd := command(ctx, o, name, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	p := proc{stdout: stdout.Bytes(), stderr: stderr.Bytes(), elapsed: time.Since(start)}
	var exitErr *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Fatalf("%s did not finish within %s; stderr:\n%s", name, o.timeout, tail(p.stderr))
	case errors.As(err, &exitErr):
		p.exitCode = exitErr.ExitCode()
	case err != nil:
		t.Fatalf("run %s: %v", name, err)
	}
	return p
}

// startBackground starts name and leaves it running until the test ends, when its process
// group is killed and reaped. Its output goes to the returned buffers.
func startBackground(t testing.TB, o runOpts, name string, args ...string) (stdout, stderr *syncBuffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := command(ctx, o, name, args...)
	stdout, stderr = &syncBuffer{}, &syncBuffer{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start %s: %v", name, err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	t.Cleanup(func() {
		// SIGTERM first, so a gateway can stop the servers it started in groups of their own;
		// then SIGKILL whatever is left.
		_ = terminateProcessGroup(cmd)
		select {
		case <-done:
			cancel()
			return
		case <-time.After(5 * time.Second):
		}
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Errorf("%s did not stop within 10 s of being killed", name)
		}
	})
	return stdout, stderr
}

// tail is the end of a process's output, enough to diagnose a failure without flooding the log.
func tail(b []byte) string {
	const max = 4000
	if len(b) > max {
		return "…" + string(b[len(b)-max:])
	}
	return string(b)
}
