package dbservers

import "syscall"

// sysProcAttr runs a server program as cred (nil: the current user) with no supplementary
// groups, in its own process group. A non-zero parentDeath is the signal the kernel sends the
// program when the test process dies (SIGQUIT is PostgreSQL's immediate shutdown), so a crashed
// or timed-out test leaves no server behind.
func sysProcAttr(cred *runAs, parentDeath syscall.Signal) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: parentDeath}
	if cred != nil {
		a.Credential = &syscall.Credential{Uid: cred.uid, Gid: cred.gid, Groups: []uint32{}}
	}
	return a
}
