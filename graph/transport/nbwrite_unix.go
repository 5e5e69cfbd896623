//go:build unix

package transport

import (
	"syscall"
)

func nonblockingWrite(raw syscall.RawConn, p []byte) (n int, blocked bool) {
	err := raw.Write(func(fd uintptr) bool {
		for n < len(p) {
			m, err := syscall.Write(int(fd), p[n:])
			if err == syscall.EINTR {
				continue
			}
			if err != nil || m <= 0 {
				blocked = true
				return true
			}
			n += m
		}
		return true
	})
	return n, blocked || err != nil
}
