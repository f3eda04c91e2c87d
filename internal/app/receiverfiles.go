package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The files of a store's receiver live in a folder beside the store, named after it
// (.runlens/telemetry.receiver/ for the default store), so two stores in one folder each
// have their own:
//
//   - pid: the pid of the process running the store's receivers (`runlens collect`, detached
//     or not), locked exclusively by it for as long as it runs. The lock, not the pid, says
//     whether a receiver runs: it dies with its process, even one killed with SIGKILL.
//   - state.json: what the receiver says about itself, rewritten every few seconds.
//   - start.lock: serialises the sessions that check for a receiver and start one, so two
//     sessions starting at once start one receiver.
//   - sessions.lock: every session using the detached receiver holds a shared lock on it; the
//     receiver counts as idle only while it can take the lock exclusively.
//   - receiver.log: the detached receiver's stderr.
type receiverFiles struct {
	dir, pid, state, start, sessions, log string
}

// ReceiverDir is the folder of the store's receiver files.
func ReceiverDir(storePath string) string {
	base := filepath.Base(storePath)
	return filepath.Join(filepath.Dir(storePath), strings.TrimSuffix(base, filepath.Ext(base))+".receiver")
}

func filesOf(storePath string) receiverFiles {
	dir := ReceiverDir(storePath)
	return receiverFiles{
		dir:      dir,
		pid:      filepath.Join(dir, "pid"),
		state:    filepath.Join(dir, "state.json"),
		start:    filepath.Join(dir, "start.lock"),
		sessions: filepath.Join(dir, "sessions.lock"),
		log:      filepath.Join(dir, "receiver.log"),
	}
}

func (a *App) receiverFiles() receiverFiles { return filesOf(a.Config.Store.Path) }

// ReceiverProcess is what a store's receiver says about itself in its state file.
type ReceiverProcess struct {
	PID int `json:"pid"`
	// Detached is true for the receiver a session started; false for a `runlens collect`
	// someone runs by hand.
	Detached bool `json:"detached"`
	// Ready is true once both receivers listen.
	Ready bool `json:"ready"`
	// Store is the absolute path of the store it writes.
	Store string `json:"store"`
	// Listen and ListenGRPC are the configured addresses (ListenGRPC "off" when gRPC is off);
	// HTTP and GRPC where it listens.
	Listen     string `json:"listen"`
	ListenGRPC string `json:"listenGrpc"`
	HTTP       string `json:"http,omitempty"`
	GRPC       string `json:"grpc,omitempty"`
	// StartedUnixMs is when it started, UpdatedUnixMs when it last wrote this file.
	StartedUnixMs int64 `json:"startedUnixMs"`
	UpdatedUnixMs int64 `json:"updatedUnixMs"`
	// Spans and Logs count the records it stored since it started.
	Spans              int64 `json:"spans"`
	Logs               int64 `json:"logs"`
	LastReceivedUnixMs int64 `json:"lastReceivedUnixMs,omitempty"`
	// IdleExitMs is how long it runs with no telemetry and no session; 0 forever.
	IdleExitMs int64 `json:"idleExitMs,omitempty"`
	// Problem is the last thing that went wrong, in words (a store deleted under it).
	Problem string `json:"problem,omitempty"`
}

// ErrReceiverRunning is returned by LockReceiver when another process runs the store's
// receivers.
var ErrReceiverRunning = errors.New("a receiver of this store is already running")

// ReceiverLock is the pid file a receiver process holds locked while it runs.
type ReceiverLock struct {
	files    receiverFiles
	f        *os.File
	pid      int
	released bool
}

// LockReceiver takes the store's pid file for this process, or fails with
// ErrReceiverRunning (wrapped, with the holder's pid) when another process holds it.
func (a *App) LockReceiver() (*ReceiverLock, error) {
	files := a.receiverFiles()
	if err := os.MkdirAll(files.dir, 0o700); err != nil {
		return nil, fmt.Errorf("create receiver folder: %w", err)
	}
	for range 10 {
		f, err := os.OpenFile(files.pid, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil, fmt.Errorf("open receiver pid file: %w", err)
		}
		held, err := tryLock(f, false)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("lock receiver pid file: %w", err)
		}
		if held {
			f.Close()
			pid, _ := readPID(files.pid)
			return nil, fmt.Errorf("%w (pid %d)", ErrReceiverRunning, pid)
		}
		// A session cleaning a stale pid file may have removed the path after it was opened:
		// a lock on a removed file guards nothing, so take the path's current file again.
		if !samePath(f, files.pid) {
			f.Close()
			continue
		}
		pid := os.Getpid()
		err = f.Truncate(0)
		if err == nil {
			_, err = f.WriteAt([]byte(strconv.Itoa(pid)+"\n"), 0)
		}
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("write receiver pid file: %w", err)
		}
		return &ReceiverLock{files: files, f: f, pid: pid}, nil
	}
	return nil, errors.New("lock receiver pid file: it keeps being replaced")
}

// Intact reports whether the pid file this process locked is still the one at its path: a
// removed .runlens folder takes it away, and then nothing tells sessions this receiver runs.
func (l *ReceiverLock) Intact() bool { return samePath(l.f, l.files.pid) }

// WriteState replaces the state file, atomically, so a reader never sees half of it.
func (l *ReceiverLock) WriteState(s ReceiverProcess) error {
	s.PID = l.pid
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	tmp := l.files.state + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return fmt.Errorf("write receiver state: %w", err)
	}
	return os.Rename(tmp, l.files.state)
}

// SessionsAttached reports whether any session holds the sessions lock.
func (l *ReceiverLock) SessionsAttached() bool {
	f, err := os.OpenFile(l.files.sessions, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return false
	}
	defer f.Close()
	held, err := tryLock(f, false)
	if err != nil || held {
		return err == nil
	}
	unlock(f)
	return false
}

// TryStartLock takes the sessions' start lock without waiting, so an idle receiver does not
// exit while a session is deciding that it runs. ok is false when a session holds it.
func (l *ReceiverLock) TryStartLock() (release func(), ok bool) {
	f, err := os.OpenFile(l.files.start, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, false
	}
	if held, err := tryLock(f, false); err != nil || held {
		f.Close()
		return nil, false
	}
	return func() { f.Close() }, true
}

// Release removes the pid and state files (when they are still this process's) and unlocks.
func (l *ReceiverLock) Release() {
	if l.released {
		return
	}
	l.released = true
	if l.Intact() {
		os.Remove(l.files.state)
		os.Remove(l.files.pid)
	}
	l.f.Close()
}

// RunningReceiver says whether a process runs the store's receivers, and what it last said
// about itself. A pid file nobody holds is stale (its process died, perhaps killed): it is
// removed with its state file.
func (a *App) RunningReceiver() (ReceiverProcess, bool) {
	if !detachSupported {
		return ReceiverProcess{}, false
	}
	files := a.receiverFiles()
	f, err := os.OpenFile(files.pid, os.O_RDWR, 0)
	if err != nil {
		return ReceiverProcess{}, false
	}
	defer f.Close()
	held, err := tryLock(f, false)
	if err != nil {
		return ReceiverProcess{}, false
	}
	if !held {
		// Stale: remove it while holding its lock, so a receiver starting now locks a new file.
		if samePath(f, files.pid) {
			os.Remove(files.state)
			os.Remove(files.pid)
			a.Logger.Info("removed the stale pid file of a receiver that is no longer running")
		}
		return ReceiverProcess{}, false
	}
	st := readState(files.state)
	if pid, err := readPID(files.pid); err == nil && st.PID != pid {
		st = ReceiverProcess{PID: pid}
	}
	return st, true
}

// StopReceiver asks the store's receiver to stop (SIGTERM) and waits up to wait for it to
// release its pid file. It returns what the receiver last said, false when none ran.
func (a *App) StopReceiver(ctx context.Context, wait time.Duration) (ReceiverProcess, bool, error) {
	st, running := a.RunningReceiver()
	if !running {
		return st, false, nil
	}
	if !isCollectOf(st.PID, a.Config.Store.Path) {
		return st, true, fmt.Errorf("the pid file names process %d, which is not a runlens collect of this store; stop it by hand", st.PID)
	}
	if err := terminate(st.PID); err != nil {
		return st, true, fmt.Errorf("signal receiver %d: %w", st.PID, err)
	}
	deadline := time.Now().Add(wait)
	for {
		if _, still := a.RunningReceiver(); !still {
			if last := readState(a.receiverFiles().state); last.PID == st.PID {
				st = last
			}
			return st, true, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return st, true, fmt.Errorf("receiver %d did not stop within %s", st.PID, wait)
		}
		time.Sleep(20 * time.Millisecond) // polling the pid lock with a deadline
	}
}

// readState reads a state file; a missing or unreadable one is the zero state.
func readState(path string) ReceiverProcess {
	var st ReceiverProcess
	if data, err := os.ReadFile(path); err == nil {
		_ = json.Unmarshal(data, &st)
	}
	return st
}

func readPID(path string) (int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(data)))
}

// samePath reports whether path still names the open file f.
func samePath(f *os.File, path string) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) || err != nil {
		return false
	}
	return os.SameFile(a, b)
}
