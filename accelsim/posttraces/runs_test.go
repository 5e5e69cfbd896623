package posttraces

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMergeRuns: the lists of three tracer runs of one context (kernels
// 2-3, 5 and 3-4 again) become the list one run tracing them all writes:
// each copy once, each kernel after the copies before it, a kernel two
// runs traced once; the other context's single list is untouched. Runs
// whose copies differ are not of one program: an error naming both.
func TestMergeRuns(t *testing.T) {
	dir := t.TempDir()
	c1, c2, c3 := "MemcpyHtoD,0x0000000000001000,64", "MemcpyHtoD,0x0000000000002000,64", "MemcpyHtoD,0x0000000000003000,64"
	k := func(id string) string { return "kernel-" + id + "-ctx_0xa.trace" }
	files := map[string]string{
		"kernelslist_ctx_0xa-2-3": strings.Join([]string{c1, k("2"), c2, k("3")}, "\n"),
		"kernelslist_ctx_0xa-5-5": strings.Join([]string{c1, c2, c3}, "\n") + "\n" + k("5") + "\n",
		"kernelslist_ctx_0xa-3-4": strings.Join([]string{c1, c2, k("3"), k("4")}, "\n"),
		"kernelslist_ctx_0xb":     "kernel-1-ctx_0xb.trace\n",
	}
	for n, s := range files {
		writeFile(t, dir, n, s)
	}
	for _, id := range []string{"2-ctx_0xa", "3-ctx_0xa", "4-ctx_0xa", "5-ctx_0xa", "1-ctx_0xb"} {
		writeFile(t, dir, "kernel-"+id+".trace", "-kernel name = k\n-kernel id = 1\n-grid dim = (1,1,1)\n-block dim = (32,1,1)\n-accelsim tracer version = 3\n\n#traces format = x\n\n0 0 0 0 0000 ffffffff 0 EXIT 0 0\n")
	}
	if err := Run(context.Background(), dir, Options{Text: true, Jobs: 1}); err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{c1, "kernel-2-ctx_0xa.traceg", c2, "kernel-3-ctx_0xa.traceg", "kernel-4-ctx_0xa.traceg", c3, "kernel-5-ctx_0xa.traceg"}, "\n") + "\n"
	if got := readOut(t, dir, "kernelslist_ctx_0xa.g"); got != want {
		t.Errorf("merged list:\n%s\nwant\n%s", got, want)
	}
	if got := readOut(t, dir, "kernelslist.g"); got != want+"kernel-1-ctx_0xb.traceg\n" {
		t.Errorf("kernelslist.g:\n%s", got)
	}

	writeFile(t, dir, "kernelslist_ctx_0xa-6-6", c2+"\nkernel-5-ctx_0xa.trace\n")
	err := Run(context.Background(), dir, Options{Text: true, Jobs: 1})
	if err == nil || !strings.Contains(err.Error(), "kernelslist_ctx_0xa-6-6") || !strings.Contains(err.Error(), "copy 1 differs") {
		t.Fatalf("runs copying differently: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "kernelslist.g")); err == nil {
		t.Error("kernelslist.g left after a failure")
	}
}

func readOut(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
