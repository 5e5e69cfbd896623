package testkit

import (
	"os"
	"syscall"
	"testing"
)

// SmallDisk mounts a tmpfs of the given size ("16m") at dir, creating dir,
// so that the test can fill it: a write past its size fails with ENOSPC,
// as on a full disk. It needs root, for mount(2): without it the test is
// skipped; where mounting is refused it is skipped too, unless CI is set,
// where it fails. The file system is unmounted when the test ends, after the
// cleanups registered later (a server on it closes first).
func SmallDisk(t testing.TB, dir, size string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a small file system")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("mount tmpfs on %s: %v", dir, err)
		}
		t.Skipf("mount tmpfs on %s: %v", dir, err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
}
