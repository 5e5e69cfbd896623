package local

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Memory is the memory a new simulator may take now, and where that was
// read.
type Memory struct {
	Available int64  // bytes
	From      string // "MemAvailable in /proc/meminfo", or the memory cgroup's limit less its use
}

// cgroupRoot is where the cgroup file systems are mounted; tests change it.
var cgroupRoot = "/sys/fs/cgroup"

// ReadMemory is what the machine has for a new simulator now: the
// kernel's MemAvailable estimate, or, when the server's memory cgroup has
// a limit that leaves less, that limit less what the cgroup holds beyond
// the page cache it can drop (its inactive file pages).
func ReadMemory() (Memory, error) {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return Memory{}, err
	}
	avail, err := memAvailable(b)
	if err != nil {
		return Memory{}, fmt.Errorf("/proc/meminfo: %w", err)
	}
	m := Memory{Available: avail, From: "MemAvailable in /proc/meminfo"}
	if self, err := os.ReadFile("/proc/self/cgroup"); err == nil {
		if free, from, ok := cgroupFree(cgroupRoot, string(self)); ok && free < m.Available {
			m = Memory{Available: free, From: from}
		}
	}
	return m, nil
}

// memAvailable reads the MemAvailable line of /proc/meminfo's contents
// ("MemAvailable:   23688708 kB"), in bytes.
func memAvailable(meminfo []byte) (int64, error) {
	sc := bufio.NewScanner(bytes.NewReader(meminfo))
	for line := 1; sc.Scan(); line++ {
		v, ok := strings.CutPrefix(sc.Text(), "MemAvailable:")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) != 2 || f[1] != "kB" {
			return 0, fmt.Errorf("line %d: MemAvailable: want a number of kB, got %q", line, strings.TrimSpace(v))
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || kb < 0 || kb > 1<<53 {
			return 0, fmt.Errorf("line %d: MemAvailable: want a number of kB, got %q", line, f[0])
		}
		return kb << 10, nil
	}
	return 0, errors.New("no MemAvailable line (a kernel before 3.14?)")
}

// noLimit is above any real memory limit: cgroup v1 writes "no limit" as
// the largest page-aligned int64.
const noLimit = 1 << 60

// cgroupFree is, for the cgroup file systems under root and the contents
// of /proc/self/cgroup, what the memory cgroup's limit leaves: the limit
// less the cgroup's use less its inactive file pages, and the files it
// was read from; ok is false when there is no limit or it cannot be read.
// Under cgroup v2 the files are memory.max, memory.current and
// memory.stat's inactive_file; under v1 memory.limit_in_bytes,
// memory.usage_in_bytes and memory.stat's total_inactive_file. The
// cgroup's own directory is tried first, then the mount's root (a
// container sees its own cgroup there).
func cgroupFree(root, self string) (free int64, from string, ok bool) {
	type files struct{ dir, limit, usage, inactive string }
	var try []files
	for _, line := range strings.Split(self, "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		switch {
		case f[0] == "0" && f[1] == "":
			for _, dir := range []string{filepath.Join(root, f[2]), root} {
				try = append(try, files{dir, "memory.max", "memory.current", "inactive_file"})
			}
		case slices.Contains(strings.Split(f[1], ","), "memory"):
			for _, dir := range []string{filepath.Join(root, "memory", f[2]), filepath.Join(root, "memory")} {
				try = append(try, files{dir, "memory.limit_in_bytes", "memory.usage_in_bytes", "total_inactive_file"})
			}
		}
	}
	for _, c := range try {
		limit, err := readBytes(filepath.Join(c.dir, c.limit))
		if err != nil {
			continue
		}
		if limit >= noLimit {
			return 0, "", false
		}
		usage, err := readBytes(filepath.Join(c.dir, c.usage))
		if err != nil {
			continue
		}
		inactive := statValue(filepath.Join(c.dir, "memory.stat"), c.inactive)
		used := max(0, usage-inactive)
		return max(0, limit-used), fmt.Sprintf("the memory cgroup's limit less its use (%s)", filepath.Join(c.dir, c.limit)), true
	}
	return 0, "", false
}

// readBytes reads a cgroup file holding one number of bytes; "max" is
// no limit.
func readBytes(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	s := strings.TrimSpace(string(b))
	if s == "max" {
		return noLimit, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s: want a number of bytes, got %q", path, s)
	}
	return n, nil
}

// statValue is the value of a memory.stat line "key value"; 0 when the
// file or the line is missing.
func statValue(path, key string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, key+" "); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err == nil && n > 0 {
				return n
			}
		}
	}
	return 0
}

// residentBytes is the resident memory of the process pid now, from
// /proc/<pid>/statm; 0 when it cannot be read (it has exited).
func residentBytes(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/statm", pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return 0
	}
	return pages * int64(os.Getpagesize())
}
