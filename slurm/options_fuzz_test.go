package slurm_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade/slurm"
)

// FuzzSlurmOptionsFile: a config folder's cascade-slurm.conf, whatever it
// holds, never panics the reader. An error names the file and a line of
// it. Options that read write out as a file that reads back the same, and
// go into a job script that sbatch reads as those options: a positive
// time limit and memory, names on one line each.
func FuzzSlurmOptionsFile(f *testing.F) {
	f.Add("# SM90_H100 simulates for hours\npartition=long\ntime=12:00:00\nmem=16G\ncpus-per-task=1\naccount=arch\nqos=normal\n")
	f.Add("partition = debug \r\n\n  # x\ntime=2-03\nmem=1536K\n")
	f.Add("time=90m\nmem=4096\n")
	f.Add("time=1-02:03:04\n")
	f.Add("time=5:30\ncpus-per-task=+3\n")
	f.Add("time=0\n")
	f.Add("mem=9223372036854775807T\n")
	f.Add("mem=9223372036854775807K\n")
	f.Add("time=9223372036854775807\n")
	f.Add("time=106751-23:47:16\n")
	f.Add("time=2562047h47m16s\n")
	f.Add("partition=a\rb\n")
	f.Add("nodes=2\n")
	f.Add("partition\n")
	f.Add("qos=" + strings.Repeat("x", 70000) + "\n")
	dir := f.TempDir()
	path := filepath.Join(dir, "cascade-slurm.conf")
	lineErr := regexp.MustCompile(`^` + regexp.QuoteMeta(path) + `:(\d+): `)
	f.Fuzz(func(t *testing.T, text string) {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		o, err := slurm.ReadOptions(path)
		if err != nil {
			m := lineErr.FindStringSubmatch(err.Error())
			if m == nil {
				t.Fatalf("error %q names no file and line", err)
			}
			if n, _ := strconv.Atoi(m[1]); n < 1 || n > strings.Count(text, "\n")+1 {
				t.Fatalf("error %q: the file has %d lines", err, strings.Count(text, "\n")+1)
			}
			return
		}
		if o.TimeLimit < 0 || o.MemoryMB < 0 || o.CPUs < 0 {
			t.Fatalf("negative option read: %+v", o)
		}

		// Written out and read again: the same options.
		var b strings.Builder
		for _, kv := range [][2]string{{"partition", o.Partition}, {"account", o.Account}, {"qos", o.QOS}} {
			if kv[1] != "" {
				fmt.Fprintf(&b, "%s=%s\n", kv[0], kv[1])
			}
		}
		if o.TimeLimit != 0 {
			fmt.Fprintf(&b, "time=%s\n", o.TimeLimit)
		}
		if o.MemoryMB != 0 {
			fmt.Fprintf(&b, "mem=%dM\n", o.MemoryMB)
		}
		if o.CPUs != 0 {
			fmt.Fprintf(&b, "cpus-per-task=%d\n", o.CPUs)
		}
		again := filepath.Join(t.TempDir(), "cascade-slurm.conf")
		if err := os.WriteFile(again, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		if o2, err := slurm.ReadOptions(again); err != nil || o2 != o {
			t.Fatalf("%+v wrote as %q and read back as %+v, %v", o, b.String(), o2, err)
		}

		// Into a job script: sbatch must see exactly these options.
		j := slurm.Job{Name: "cascade-run-1", Dir: "/work/run-1", Log: "/work/run-1/sim.log", Command: []string{"sim"}, Options: o}
		script, err := j.Script()
		if err != nil {
			t.Fatalf("options %+v read but make no job script: %v", o, err)
		}
		sbatch := map[string]string{}
		for line := range strings.Lines(script) {
			if rest, ok := strings.CutPrefix(line, "#SBATCH --"); ok {
				k, v, _ := strings.Cut(strings.TrimSuffix(rest, "\n"), "=")
				sbatch[k] = v
			}
		}
		for k, want := range map[string]string{"partition": o.Partition, "account": o.Account, "qos": o.QOS} {
			if sbatch[k] != want {
				t.Fatalf("script says --%s=%q, want %q:\n%s", k, sbatch[k], want, script)
			}
		}
		if o.TimeLimit > 0 {
			if m, err := strconv.ParseInt(sbatch["time"], 10, 64); err != nil || m <= 0 || float64(m) < o.TimeLimit.Minutes() {
				t.Fatalf("time limit %v written as --time=%s", o.TimeLimit, sbatch["time"])
			}
		}
		if o.MemoryMB > 0 && sbatch["mem"] != strconv.FormatInt(o.MemoryMB, 10)+"M" {
			t.Fatalf("memory %d MB written as --mem=%s", o.MemoryMB, sbatch["mem"])
		}
	})
}
