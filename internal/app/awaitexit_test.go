//go:build unix

package app

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"
)

// holdPIDFile writes the store's pid file naming pid and holds its lock from this process,
// which is no receiver: what a session sees while a killed receiver is exiting.
func holdPIDFile(t *testing.T, a *App, pid int) *os.File {
	t.Helper()
	files := a.receiverFiles()
	if err := os.MkdirAll(files.dir, 0o700); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(files.pid, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if _, err := f.WriteString(strconv.Itoa(pid)); err != nil {
		t.Fatal(err)
	}
	if held, err := tryLock(f, false); err != nil || held {
		t.Fatalf("lock the pid file: held %v, %v", held, err)
	}
	return f
}

// A session waits while the pid file's lock is held by a process that is no receiver, and
// goes on as soon as the lock is let go.
func TestASessionWaitsForAnExitingReceiversLock(t *testing.T) {
	a := appOn(t, "127.0.0.1:0")
	f := holdPIDFile(t, a, os.Getpid())
	released := make(chan struct{})
	go func() {
		defer close(released)
		time.Sleep(100 * time.Millisecond)
		unlock(f)
	}()
	started := time.Now()
	_, running := a.awaitExit(context.Background(), time.Minute)
	<-released // the lock's release is seen through the kernel, not by the memory model
	if running {
		t.Fatal("the lock was let go, yet the receiver is taken for running")
	}
	if took := time.Since(started); took < 100*time.Millisecond || took > 30*time.Second {
		t.Errorf("returned after %s; want once the lock was let go (100 ms)", took)
	}
}

// A lock held longer than the wait (or past the session's end) is taken at its word: the
// session does not wait forever on a pid file it cannot judge.
func TestASessionWaitsForAHeldLockNoLongerThanItsBound(t *testing.T) {
	a := appOn(t, "127.0.0.1:0")
	holdPIDFile(t, a, os.Getpid())
	st, running := a.awaitExit(context.Background(), 50*time.Millisecond)
	if !running || st.PID != os.Getpid() {
		t.Fatalf("after the wait: running %v, pid %d; want the pid file's process (%d) taken as running", running, st.PID, os.Getpid())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, running := a.awaitExit(ctx, time.Minute); !running {
		t.Fatal("an ended session must return at once, with what the pid file says")
	}
}
