//go:build !unix

package transport

import "syscall"

// nonblockingWrite leaves every write to the connection's writer
// goroutine where it cannot write without waiting.
func nonblockingWrite(syscall.RawConn, []byte) (int, bool) { return 0, true }
