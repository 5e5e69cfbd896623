package proc

import "syscall"

// sysProcAttr puts the child in its own process group, so that a stop
// reaches everything it started, and has the kernel kill it when the
// server dies, even by SIGKILL.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
