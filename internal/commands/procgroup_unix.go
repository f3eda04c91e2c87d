//go:build unix

package commands

import (
	"os/exec"
	"syscall"
)

// ownProcessGroup puts the command in a new process group led by itself, so a signal to the
// group reaches every process it starts unless one deliberately leaves (setsid).
func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killGroup signals the command's whole group: SIGKILL when hard, else SIGTERM. It is only
// called while the leader is unreaped, so the group id still belongs to the command. A group
// that is already gone is not an error.
func killGroup(cmd *exec.Cmd, hard bool) {
	if cmd.Process == nil {
		return
	}
	sig := syscall.SIGTERM
	if hard {
		sig = syscall.SIGKILL
	}
	_ = syscall.Kill(-cmd.Process.Pid, sig)
}
