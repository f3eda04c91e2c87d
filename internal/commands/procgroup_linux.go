//go:build linux

package commands

import (
	"errors"
	"os/exec"

	"golang.org/x/sys/unix"
)

// awaitExit blocks until the command's process exits without reaping it (WNOWAIT), so its pid
// stays reserved while the caller signals the rest of its group. It reports reaped=false; the
// caller reaps with cmd.Wait.
func awaitExit(cmd *exec.Cmd) (reaped bool) {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, cmd.Process.Pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			if err != nil {
				// Cannot observe without reaping: fall back to a plain wait.
				_ = cmd.Wait()
				return true
			}
			return false
		}
	}
}
