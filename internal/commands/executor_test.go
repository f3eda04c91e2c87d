package commands

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"
)

func run(t *testing.T, e *Executor, ctx context.Context, argv []string, opts RunOptions) Result {
	t.Helper()
	if e.Env == nil {
		e.Env = helperEnvironment()
	}
	if opts.Timeout == 0 {
		opts.Timeout = 20 * time.Second
	}
	res, err := e.Run(ctx, argv, opts)
	if err != nil {
		t.Fatalf("Run(%q): %v", argv, err)
	}
	return res
}

func TestOneMebibyteOfOutputKeepsOnlyTheNewestTail(t *testing.T) {
	const n = 1 << 20
	e := &Executor{Dir: t.TempDir(), TailBytes: 16 << 10}
	res := run(t, e, context.Background(), helperArgv(t, "flood", strconv.Itoa(n)), RunOptions{})
	if res.ExitCode != 0 {
		t.Fatalf("exit code %d, output %q", res.ExitCode, res.Tail)
	}
	if !res.Truncated || res.TotalBytes != n {
		t.Errorf("Truncated=%v TotalBytes=%d, want true and %d", res.Truncated, res.TotalBytes, n)
	}
	if len(res.Tail) != 16<<10 {
		t.Fatalf("tail is %d bytes, want %d", len(res.Tail), 16<<10)
	}
	want := make([]byte, 16<<10)
	for i := range want {
		want[i] = floodByte(n - len(want) + i)
	}
	if !bytes.Equal(res.Tail, want) {
		t.Errorf("tail is not the newest %d bytes of the output (stdout and stderr combined)", len(want))
	}
}

func TestTheTailStartsAtACharacterBoundary(t *testing.T) {
	// 1,001 two-byte characters: an odd-sized 1,023-byte tail starts in the middle of one,
	// which must be left out.
	e := &Executor{Dir: t.TempDir(), TailBytes: 1023}
	res := run(t, e, context.Background(), helperArgv(t, "repeat", "é", "1001"), RunOptions{})
	if !res.Truncated {
		t.Fatalf("output of %d bytes was not truncated", res.TotalBytes)
	}
	if !utf8.Valid(res.Tail) || len(res.Tail) != 1022 {
		t.Errorf("tail = %d bytes, valid UTF-8 %v; want 1022 valid bytes", len(res.Tail), utf8.Valid(res.Tail))
	}
}

func TestShortOutputIsKeptWhole(t *testing.T) {
	e := &Executor{Dir: t.TempDir()}
	res := run(t, e, context.Background(), helperArgv(t, "exit", "3"), RunOptions{})
	if res.ExitCode != 3 || res.Truncated || string(res.Tail) != "exiting with 3\n" {
		t.Errorf("got exit %d truncated %v tail %q; want 3, false, the whole output", res.ExitCode, res.Truncated, res.Tail)
	}
	if res.TimedOut || res.Cancelled {
		t.Errorf("a normal exit reported TimedOut=%v Cancelled=%v", res.TimedOut, res.Cancelled)
	}
}

func TestTheCommandRunsInTheProjectRoot(t *testing.T) {
	dir := t.TempDir()
	e := &Executor{Dir: dir}
	res := run(t, e, context.Background(), helperArgv(t, "pwd"), RunOptions{})
	got, _ := filepath.EvalSymlinks(string(res.Tail))
	want, _ := filepath.EvalSymlinks(dir)
	if got != want {
		t.Errorf("working directory %q, want %q", got, want)
	}
}

func TestATimeoutStopsTheCommand(t *testing.T) {
	e := &Executor{Dir: t.TempDir(), Grace: time.Second}
	start := time.Now()
	res := run(t, e, context.Background(), helperArgv(t, "sleep"), RunOptions{Timeout: 200 * time.Millisecond})
	if !res.TimedOut || res.Cancelled || res.ExitCode != -1 {
		t.Errorf("got TimedOut=%v Cancelled=%v ExitCode=%d; want true, false, -1", res.TimedOut, res.Cancelled, res.ExitCode)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("a 200ms timeout took %v", took)
	}
}

func TestAChildIgnoringSIGTERMIsKilledAfterTheGracePeriod(t *testing.T) {
	dir := t.TempDir()
	ready := filepath.Join(dir, "ready")
	const grace = 300 * time.Millisecond
	e := &Executor{Dir: dir, Grace: grace}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var cancelled time.Time
	go func() {
		waitForFile(t, ready) // SIGTERM is ignored from here on
		cancelled = time.Now()
		cancel()
	}()
	res := run(t, e, ctx, helperArgv(t, "ignore-term", ready), RunOptions{})
	stopped := time.Since(cancelled)
	if !res.Cancelled || res.ExitCode != -1 {
		t.Errorf("got Cancelled=%v ExitCode=%d; want true and -1", res.Cancelled, res.ExitCode)
	}
	if stopped < grace {
		t.Errorf("stopped %v after cancellation, before the grace period: SIGTERM was not ignored", stopped)
	}
	if stopped > grace+2*time.Second {
		t.Errorf("stopped %v after cancellation, want within the %v grace period plus scheduling slack", stopped, grace)
	}
}

func TestCancellationStopsTheWholeProcessGroup(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	e := &Executor{Dir: dir, Grace: time.Second}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		waitForFile(t, pidFile)
		cancel()
	}()
	res := run(t, e, ctx, helperArgv(t, "grandchild", pidFile), RunOptions{})
	if !res.Cancelled {
		t.Fatalf("Cancelled = false, want true")
	}
	pid, err := strconv.Atoi(string(waitForFile(t, pidFile)))
	if err != nil {
		t.Fatal(err)
	}
	waitGone(t, pid)
}

func TestProcessesLeftBehindAreKilledWhenTheCommandEnds(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	e := &Executor{Dir: dir}
	start := time.Now()
	res := run(t, e, context.Background(), helperArgv(t, "background", pidFile), RunOptions{})
	if res.ExitCode != 0 {
		t.Fatalf("exit code %d", res.ExitCode)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("a background child holding the output pipe delayed the result by %v", took)
	}
	pid, err := strconv.Atoi(string(waitForFile(t, pidFile)))
	if err != nil {
		t.Fatal(err)
	}
	waitGone(t, pid)
}

func TestAProcessThatLeftTheGroupCannotHoldTheCallOpen(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	start := time.Now()
	res := run(t, &Executor{Dir: dir}, context.Background(), helperArgv(t, "escape", pidFile), RunOptions{})
	took := time.Since(start)
	pid, err := strconv.Atoi(string(waitForFile(t, pidFile)))
	if err != nil {
		t.Fatal(err)
	}
	_ = syscall.Kill(pid, syscall.SIGKILL) // it left the group on purpose; the test cleans it up
	if res.ExitCode != 0 {
		t.Errorf("exit code %d", res.ExitCode)
	}
	if took > 3*time.Second {
		t.Errorf("a process holding the output pipe from another session kept the call open %v", took)
	}
}

func TestAContextCancelledBeforehandStartsNothing(t *testing.T) {
	dir := t.TempDir()
	sentinel := filepath.Join(dir, "started")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res := run(t, &Executor{Dir: dir}, ctx, helperArgv(t, "touch", sentinel), RunOptions{})
	if !res.Cancelled {
		t.Errorf("Cancelled = false, want true")
	}
	if _, err := os.Stat(sentinel); err == nil {
		t.Errorf("the command started although the call was already cancelled")
	}
}

func TestSecretVariablesAreNotVisibleToTheChild(t *testing.T) {
	e := &Executor{
		Dir:       t.TempDir(),
		Env:       helperEnvironment("GITHUB_TOKEN=ghp_secret", "RUNLENS_TELEMETRY=clickhouse://u:p@h", "stripe_api_key=sk", "PLAIN=kept"),
		SecretEnv: []string{"RUNLENS_*", "*_TOKEN", "*_API_KEY"},
	}
	res := run(t, e, context.Background(), helperArgv(t, "env", "GITHUB_TOKEN", "RUNLENS_TELEMETRY", "stripe_api_key", "PLAIN"), RunOptions{})
	want := "GITHUB_TOKEN=<unset>\nRUNLENS_TELEMETRY=<unset>\nstripe_api_key=<unset>\nPLAIN=kept\n"
	if string(res.Tail) != want {
		t.Errorf("child environment:\n%s\nwant:\n%s", res.Tail, want)
	}
}

func TestProgressIsReportedWhileTheCommandRuns(t *testing.T) {
	e := &Executor{Dir: t.TempDir(), ProgressEvery: 20 * time.Millisecond}
	var elapsed []time.Duration
	var seen []int64
	res := run(t, e, context.Background(), helperArgv(t, "tick", "10", "30"), RunOptions{
		Progress: func(d time.Duration, n int64) {
			elapsed = append(elapsed, d)
			seen = append(seen, n)
		},
	})
	if res.ExitCode != 0 {
		t.Fatalf("exit code %d", res.ExitCode)
	}
	if len(elapsed) < 3 {
		t.Fatalf("progress called %d times during a 300ms command, want at least 3", len(elapsed))
	}
	for i := 1; i < len(elapsed); i++ {
		if elapsed[i] <= elapsed[i-1] || seen[i] < seen[i-1] {
			t.Fatalf("progress went backwards at call %d: %v / %v", i, elapsed, seen)
		}
	}
	if last := seen[len(seen)-1]; last > res.TotalBytes {
		t.Errorf("progress reported %d bytes, more than the %d written", last, res.TotalBytes)
	}
}

func TestAProgramThatCannotStartIsAnError(t *testing.T) {
	_, err := (&Executor{Dir: t.TempDir(), Env: helperEnvironment()}).Run(context.Background(),
		[]string{"runlens-no-such-program"}, RunOptions{Timeout: time.Second})
	if !errors.Is(err, ErrStart) {
		t.Fatalf("error = %v, want ErrStart", err)
	}
	if strings.Contains(err.Error(), os.Getenv("PATH")) {
		t.Errorf("error %q reveals the search path", err)
	}
}

func TestRunRefusesAMissingTimeoutOrArgv(t *testing.T) {
	e := &Executor{Dir: t.TempDir()}
	if _, err := e.Run(context.Background(), nil, RunOptions{Timeout: time.Second}); err == nil {
		t.Error("Run with an empty argv succeeded")
	}
	if _, err := e.Run(context.Background(), []string{"true"}, RunOptions{}); err == nil {
		t.Error("Run without a timeout succeeded")
	}
}
