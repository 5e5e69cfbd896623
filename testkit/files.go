package testkit

import (
	"os"
	"path/filepath"
	"testing"
)

// WriteFileAtomic writes data to path through a dotfile temporary name.
func WriteFileAtomic(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(filepath.Dir(path), ".rclone_temp_put_"+filepath.Base(path))
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}
