//go:build !unix

package app

import (
	"errors"
	"os"
	"os/exec"
)

// detachSupported is false where file locks do not die with their process: serve then hosts
// the receivers in the session, as with receiver.detached false.
const detachSupported = false

var errNoLocks = errors.New("file locks are not supported on this system")

func tryLock(*os.File, bool) (bool, error) { return false, errNoLocks }
func unlock(*os.File)                      {}
func detach(*exec.Cmd)                     {}
func processAlive(int) bool                { return false }
func isCollectOf(int, string) bool         { return false }
func terminate(int) error                  { return errNoLocks }
