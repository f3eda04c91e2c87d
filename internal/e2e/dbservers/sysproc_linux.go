package dbservers

import "syscall"

// sysProcAttr runs a server program as cred (nil: the current user) with no supplementary
// groups, in its own process group; for a server, parentDeath asks the kernel to end it when
// the test process dies, so a crashed or timed-out test leaves no server behind.
func sysProcAttr(cred *runAs, parentDeath bool) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true}
	if cred != nil {
		a.Credential = &syscall.Credential{Uid: cred.uid, Gid: cred.gid, Groups: []uint32{}}
	}
	if parentDeath {
		a.Pdeathsig = syscall.SIGKILL
	}
	return a
}
