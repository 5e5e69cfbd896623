//go:build !linux

package proc

import (
	"os"
	"syscall"
)

func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// peakRSS is 0: ru_maxrss's unit differs between systems (bytes on
// macOS), so it is not read.
func peakRSS(*os.ProcessState) int64 { return 0 }

// KillTagged finds nothing here: only Linux's /proc shows environments.
func KillTagged(tag string) int { return 0 }
