//go:build !linux

package realapp

import "syscall"

// sysProcAttr: the throwaway cluster is started as the current user off Linux; a root user
// there gets initdb's own refusal as the reason.
func sysProcAttr(*runAs, bool) *syscall.SysProcAttr { return nil }
