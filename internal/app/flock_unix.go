//go:build unix

package app

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// detachSupported: the detached receiver needs file locks that die with their process and a
// session of its own, which Unix systems have.
const detachSupported = true

// tryLock takes an exclusive (or shared) lock on f without waiting; held is true when another
// process holds a lock that conflicts.
func tryLock(f *os.File, shared bool) (held bool, err error) {
	how := syscall.LOCK_EX
	if shared {
		how = syscall.LOCK_SH
	}
	for {
		err = syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return true, nil
	}
	return false, err
}

// unlock releases the lock on f; closing f releases it too.
func unlock(f *os.File) { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }

// detach makes cmd a process of its own: a new session (so no terminal or process group
// signal of the session that started it reaches it) with no controlling terminal.
func detach(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} }

// processAlive reports whether pid names a live process.
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// isCollectOf reports whether pid is a `runlens collect` receiving into store. Where the
// process's arguments cannot be read (no /proc), a live process is taken at its pid file's
// word, which the pid lock already vouches for.
func isCollectOf(pid int, store string) bool {
	if !processAlive(pid) {
		return false
	}
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return true
	}
	args := strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")
	collect, other := false, false
	for i, a := range args {
		if a == "collect" {
			collect = true
		}
		// An absolute --store names its store for sure (serve passes one); a relative one, or
		// none, is the configured store of a collect run by hand, which its pid lock vouches for.
		if (a == "--store" || a == "-store") && i+1 < len(args) && filepath.IsAbs(args[i+1]) && args[i+1] != store {
			other = true
		}
	}
	return collect && !other
}

// terminate asks pid to stop.
func terminate(pid int) error { return syscall.Kill(pid, syscall.SIGTERM) }
