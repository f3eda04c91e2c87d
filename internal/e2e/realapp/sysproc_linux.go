package realapp

import "syscall"

// sysProcAttr runs a PostgreSQL program as cred (nil: the current user) with no supplementary
// groups. For the server itself, parentDeath asks the kernel for SIGQUIT, PostgreSQL's
// immediate shutdown, when the test process dies, so a crashed or timed-out test leaves no
// server behind.
func sysProcAttr(cred *runAs, parentDeath bool) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true}
	if cred != nil {
		a.Credential = &syscall.Credential{Uid: cred.uid, Gid: cred.gid, Groups: []uint32{}}
	}
	if parentDeath {
		a.Pdeathsig = syscall.SIGQUIT
	}
	return a
}
