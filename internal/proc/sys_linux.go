package proc

import (
	"bytes"
	"os"
	"strconv"
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

// KillTagged kills (SIGKILL) every process of this user whose environment
// carries tag (Cmd.Tag) and returns how many: the children a program run
// by a server that was killed outright left behind, which would otherwise
// run on beside the program started again in its place. A process that
// cleared its environment is not found.
func KillTagged(tag string) int {
	if tag == "" {
		return 0
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	want := []byte(TagVar + "=" + tag + "\x00")
	self := os.Getpid()
	n := 0
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil {
			continue // gone, or another user's
		}
		if bytes.HasPrefix(env, want) || bytes.Contains(env, append([]byte{0}, want...)) {
			if syscall.Kill(pid, syscall.SIGKILL) == nil {
				n++
			}
		}
	}
	return n
}
