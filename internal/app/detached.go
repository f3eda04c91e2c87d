package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/runlens/runlens/internal/config"
)

// The detached receiver: `runlens serve` lives only while its agent session is open, but the
// app sends telemetry whenever it runs. So, as gopls's -remote=auto does for its daemon, the
// first session of a store starts `runlens collect --detached` in a session of its own, every
// later session finds it by its pid file and only reads the store, and the receiver stays
// until it has had neither telemetry nor a session for a long while (DefaultIdleExit), or its
// project goes away.

// DefaultIdleExit is how long a detached receiver runs with no telemetry and no session.
const DefaultIdleExit = 24 * time.Hour

// EnvIdleExit overrides DefaultIdleExit for the receivers serve starts (a Go duration).
const EnvIdleExit = "RUNLENS_RECEIVER_IDLE"

// maxReceiverLog is the size past which a starting receiver's log is emptied.
const maxReceiverLog = 1 << 20

// startWait bounds how long a session waits for another session's start to finish, and for
// the receiver it started to listen.
const startWait = 15 * time.Second

// Detachable reports whether serve runs this configuration's receivers detached: asked for,
// OTLP/HTTP on (collect always listens there), fixed ports (a port chosen at random could not
// be found by the app), the embedded store as the source (the tools read what it writes), and
// a system with file locks.
func (a *App) Detachable() bool {
	cfg := a.Config
	r := cfg.Receiver
	if !detachSupported || !r.Detached || !r.Enabled || a.ConfigInvalid() {
		return false
	}
	if k := cfg.Telemetry.Source.Kind; k != config.SourceSQLite && k != "" {
		return false
	}
	if zeroPort(r.Address) || (r.GRPCEnabled && zeroPort(r.GRPCAddress)) {
		return false
	}
	return a.checkStoreExists() == nil
}

func zeroPort(addr string) bool {
	_, port, err := net.SplitHostPort(addr)
	return err != nil || port == "0"
}

// grpcListen is the --listen-grpc value of the configuration.
func (a *App) grpcListen() string {
	if !a.Config.Receiver.GRPCEnabled {
		return config.Off
	}
	return a.Config.Receiver.GRPCAddress
}

// hostDetached makes sure the store's detached receiver runs, attaches this session to it
// until ctx ends, and records who receives. When it cannot start one, the session hosts the
// receivers itself, as without receiver.detached.
func (a *App) hostDetached(ctx context.Context) {
	cfg := a.Config.Receiver
	httpDone := a.recv.startHosting()
	var grpcDone chan struct{}
	if cfg.GRPCEnabled {
		grpcDone = a.grpcRecv.startHosting()
	}
	err := a.attachSession(ctx)
	if err == nil {
		err = a.ensureDetached(ctx)
	}
	if err != nil {
		a.Logger.Warn("the detached receiver did not start; this session hosts the receivers while it runs", "err", err)
		listened := make(chan struct{})
		go a.hostHTTP(ctx, httpDone, listened)
		if grpcDone != nil {
			go func() {
				<-listened
				a.hostGRPC(ctx, grpcDone)
			}()
		}
		return
	}
	a.recv.set(a.checkHolder(ctx, a.recv.proto))
	close(httpDone)
	if grpcDone != nil {
		a.grpcRecv.set(a.checkHolder(ctx, a.grpcRecv.proto))
		close(grpcDone)
	}
}

// AwaitDetached waits, up to wait, for this session's check (and start) of the detached
// receiver: a session that ends at once must still leave the receiver running for the next.
func (a *App) AwaitDetached(wait time.Duration) {
	if a.detaching == nil {
		return
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-a.detaching:
	case <-t.C:
	}
}

// attachSession holds a shared lock on the sessions file until ctx ends: while any session
// holds it, the detached receiver does not count as idle.
func (a *App) attachSession(ctx context.Context) error {
	files := a.receiverFiles()
	if err := os.MkdirAll(files.dir, 0o700); err != nil {
		return fmt.Errorf("create receiver folder: %w", err)
	}
	f, err := os.OpenFile(files.sessions, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("open sessions lock: %w", err)
	}
	// The receiver holds the lock exclusively only for the instant it checks.
	if err := waitLock(ctx, f, true, startWait); err != nil {
		f.Close()
		return fmt.Errorf("lock sessions file: %w", err)
	}
	go func() {
		<-ctx.Done()
		f.Close()
	}()
	return nil
}

// waitLock takes a lock on f, trying until wait has passed.
func waitLock(ctx context.Context, f *os.File, shared bool, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for {
		held, err := tryLock(f, shared)
		if err != nil {
			return err
		}
		if !held {
			return nil
		}
		if time.Now().After(deadline) {
			return errors.New("still held by another process")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond): // polling a lock with a deadline
		}
	}
}

// ensureDetached starts the store's detached receiver unless one runs with this
// configuration's addresses. Sessions do this one at a time, under the start lock.
func (a *App) ensureDetached(ctx context.Context) error {
	files := a.receiverFiles()
	f, err := os.OpenFile(files.start, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("open start lock: %w", err)
	}
	defer f.Close()
	if err := waitLock(ctx, f, false, startWait); err != nil {
		return fmt.Errorf("lock start file: %w", err)
	}
	st, running := a.RunningReceiver()
	if running && !isCollectOf(st.PID, a.Config.Store.Path) {
		st, running = a.awaitExit(ctx, exitWait)
	}
	if running {
		if !st.Detached || (st.Listen == a.Config.Receiver.Address && st.ListenGRPC == a.grpcListen()) {
			return nil
		}
		// runlens.json moved the ports since it started: the app now exports elsewhere.
		a.Logger.Info("restarting the detached receiver on the configured addresses", "pid", st.PID, "was", st.Listen, "now", a.Config.Receiver.Address)
		if _, _, err := a.StopReceiver(ctx, 10*time.Second); err != nil {
			return err
		}
	}
	return a.startDetached(ctx)
}

// exitWait bounds how long a session waits for a receiver that is exiting to let go of its
// pid file.
const exitWait = 2 * time.Second

// awaitExit waits, up to wait, while the pid file's lock is held by a process that is not a
// live receiver of this store: a killed receiver holds its locks for an instant after its
// arguments are gone, and a session starting then would take it for running. It returns
// what RunningReceiver says once the lock is free or a receiver holds it, or at the end.
func (a *App) awaitExit(ctx context.Context, wait time.Duration) (ReceiverProcess, bool) {
	deadline := time.Now().Add(wait)
	for {
		st, running := a.RunningReceiver()
		if !running || isCollectOf(st.PID, a.Config.Store.Path) || time.Now().After(deadline) {
			return st, running
		}
		select {
		case <-ctx.Done():
			return st, running
		case <-time.After(10 * time.Millisecond): // polling a lock with a deadline
		}
	}
}

// startDetached starts `runlens collect --detached` and waits until it listens, or exits.
func (a *App) startDetached(ctx context.Context) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find the runlens binary: %w", err)
	}
	files := a.receiverFiles()
	logFile, err := os.OpenFile(files.log, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("open receiver log: %w", err)
	}
	defer logFile.Close()
	if fi, err := logFile.Stat(); err == nil && fi.Size() > maxReceiverLog {
		_ = logFile.Truncate(0) // each start says what it needs to; old runs are not kept forever
	}
	logStart, _ := logFile.Seek(0, 2)
	cmd := exec.Command(exe, a.detachedArgs()...)
	cmd.Dir = "/" // every path it is given is absolute; it keeps no folder busy
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, nil, logFile
	detach(cmd)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start detached receiver: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }() // reaps it should it end while this session runs
	pid := cmd.Process.Pid
	deadline := time.NewTimer(startWait)
	defer deadline.Stop()
	for {
		if st := readState(files.state); st.PID == pid && st.Ready {
			a.Logger.Info("started the detached receiver", "pid", pid, "http", st.HTTP, "grpc", st.GRPC)
			return nil
		}
		select {
		case err := <-exited:
			return fmt.Errorf("detached receiver exited (%v): %s", err, logTail(files.log, logStart))
		case <-deadline.C:
			return fmt.Errorf("detached receiver %d did not listen within %s", pid, startWait)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond): // polling its state file with a deadline
		}
	}
}

// detachedArgs are the arguments of the detached receiver: everything it needs is explicit,
// so it receives what this session would have.
func (a *App) detachedArgs() []string {
	idle := DefaultIdleExit
	if d, err := time.ParseDuration(os.Getenv(EnvIdleExit)); err == nil && d > 0 {
		idle = d
	}
	return []string{"collect", "--detached",
		"--project-root", a.Config.ProjectRoot,
		"--listen", a.Config.Receiver.Address,
		"--listen-grpc", a.grpcListen(),
		"--store", a.Config.Store.Path,
		"--idle-exit", idle.String(),
	}
}

// logTail is the last lines the receiver wrote to its log since offset, for a start that
// failed (collect's reason and its fix).
func logTail(path string, offset int64) string {
	data, err := os.ReadFile(path)
	if err != nil || int64(len(data)) < offset {
		return "no output"
	}
	text := string(bytes.TrimSpace(data[offset:]))
	if text == "" {
		return "no output"
	}
	lines := strings.Split(text, "\n")
	if len(lines) > 2 {
		lines = lines[len(lines)-2:]
	}
	return strings.Join(lines, " ")
}
