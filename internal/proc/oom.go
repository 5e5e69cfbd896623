package proc

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// cgroupRoot is where the cgroup file systems are mounted; tests change it.
var cgroupRoot = "/sys/fs/cgroup"

// oomKills is how many processes the kernel's OOM killer has killed in this
// process's memory cgroup (the children it starts share it), and whether
// that could be read. Under cgroup v2 the count is memory.events'
// oom_kill line; under v1 memory.oom_control's.
func oomKills() (int64, bool) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return 0, false
	}
	return oomKillsIn(cgroupRoot, string(b))
}

// oomKillsIn is oomKills for the cgroup file systems under root and the
// contents of /proc/self/cgroup, lines "0::/path" (v2) and
// "4:memory:/path" (v1).
func oomKillsIn(root, self string) (int64, bool) {
	for _, line := range strings.Split(self, "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		if f[1] == "memory" {
			if n, ok := oomKillCount(filepath.Join(root, "memory", f[2], "memory.oom_control")); ok {
				return n, true
			}
		}
	}
	for _, line := range strings.Split(self, "\n") {
		if path, ok := strings.CutPrefix(line, "0::"); ok {
			for _, dir := range []string{root, filepath.Join(root, "unified")} {
				if n, ok := oomKillCount(filepath.Join(dir, path, "memory.events")); ok {
					return n, true
				}
			}
		}
	}
	return 0, false
}

// oomKillCount reads the oom_kill line of a memory.events or
// memory.oom_control file.
func oomKillCount(path string) (int64, bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "oom_kill "); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// oomKilled reports whether a process that died of SIGKILL nobody here
// sent was the OOM killer's: whether the count read before its start,
// before, rose by its exit; known is false when the count could not be
// read, before or after (no cgroup file system, another layout).
func oomKilled(before int64, beforeOK bool) (killed, known bool) {
	if !beforeOK {
		return false, false
	}
	after, ok := oomKills()
	return ok && after > before, ok
}
