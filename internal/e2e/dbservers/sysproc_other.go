//go:build !linux

package dbservers

import "syscall"

// sysProcAttr: off Linux the servers run as the current user; mariadbd refuses root itself.
func sysProcAttr(*runAs, syscall.Signal) *syscall.SysProcAttr { return nil }
