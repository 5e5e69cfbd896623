package proc

import (
	"os"
	"syscall"
)

// sysProcAttr puts the child in its own process group, so that a stop
// reaches everything it started, and has the kernel kill it when the
// server dies, even by SIGKILL.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// peakRSS is the exited process's peak resident set in bytes: Linux's
// ru_maxrss is in KiB.
func peakRSS(ps *os.ProcessState) int64 {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok && ru != nil {
		return ru.Maxrss * 1024
	}
	return 0
}
