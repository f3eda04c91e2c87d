//go:build !linux

package compat

import (
	"os"
	"os/exec"
)

// ownProcessGroup leaves cmd in the test's process group where groups are not portable.
func ownProcessGroup(*exec.Cmd) {}

// killProcessGroup kills cmd alone.
func killProcessGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	return cmd.Process.Kill()
}

// terminateProcessGroup asks cmd to stop.
func terminateProcessGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	return cmd.Process.Signal(os.Interrupt)
}
