package kernellist

import (
	"os"
	"path/filepath"
	"testing"
)

// TestPutFirst: the line goes before the first kernel (after the copies
// before it), the file is rewritten, and the list read back is the one
// returned; a line Accel-Sim would not take for a kernel is refused.
func TestPutFirst(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, Name)
	if err := os.WriteFile(path, []byte("MemcpyHtoD,0x10,8\nkernel-3.traceg\nMemcpyHtoD,0x20,8\nkernel-4.traceg\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	out, err := PutFirst(l, "kernelwarm.traceg")
	if err != nil {
		t.Fatal(err)
	}
	want := "MemcpyHtoD,0x10,8\nkernelwarm.traceg\nkernel-3.traceg\nMemcpyHtoD,0x20,8\nkernel-4.traceg\n"
	if b, _ := os.ReadFile(path); string(b) != want {
		t.Fatalf("list %q, want %q", b, want)
	}
	again, err := Read(path)
	if err != nil || len(again.Commands) != len(out.Commands) {
		t.Fatalf("read back %+v, %v", again, err)
	}
	for i := range out.Commands {
		if again.Commands[i] != out.Commands[i] {
			t.Errorf("command %d: %+v, returned %+v", i, again.Commands[i], out.Commands[i])
		}
	}
	if k := out.Kernels()[0]; k.KernelOK || k.TraceFile != "kernelwarm.traceg" {
		t.Errorf("first kernel %+v", k)
	}
	if _, err := PutFirst(l, "warm.traceg"); err == nil {
		t.Error("a line without the kernel prefix was taken")
	}
}
