//go:build !unix

package commands

import "os/exec"

// ownProcessGroup does nothing where process groups do not exist.
func ownProcessGroup(*exec.Cmd) {}

// killGroup kills the command itself where there are no process groups to signal; there is no
// gentle first step on such systems.
func killGroup(cmd *exec.Cmd, _ bool) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}
