package testkit

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ProcsIn lists, as "pgrep -af" does ("<pid> <command line>"), the
// processes whose command line names dir or whose working directory is
// dir or under it: a run's simulator is given its paths relative to the
// run's directory, where it runs, so its command line need not name the
// data directory at all.
func ProcsIn(dir string) []string {
	entries, _ := os.ReadDir("/proc")
	var out []string
	self := os.Getpid()
	for _, e := range entries {
		pid := e.Name()
		if pid[0] < '0' || pid[0] > '9' || pid == strconv.Itoa(self) {
			continue
		}
		raw, err := os.ReadFile(filepath.Join("/proc", pid, "cmdline"))
		if err != nil || len(raw) == 0 {
			continue // gone, or a zombie
		}
		cmd := string(bytes.TrimRight(bytes.ReplaceAll(raw, []byte{0}, []byte{' '}), " "))
		cwd, _ := os.Readlink(filepath.Join("/proc", pid, "cwd"))
		if strings.Contains(cmd, dir) || cwd == dir || strings.HasPrefix(cwd, dir+"/") {
			out = append(out, pid+" "+cmd)
		}
	}
	return out
}
