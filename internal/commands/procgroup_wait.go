//go:build !linux

package commands

import "os/exec"

// awaitExit waits for and reaps the command. Without a portable wait that leaves the process
// unreaped, the group is not signalled after a normal exit (its id could be reused).
func awaitExit(cmd *exec.Cmd) (reaped bool) {
	_ = cmd.Wait()
	return true
}
