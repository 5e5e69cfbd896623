package slurm_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cascade-sim/cascade/slurm"
)

func TestParseTime(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"90": 90 * time.Minute, "5:30": 5*time.Minute + 30*time.Second, "1:30:00": 90 * time.Minute,
		"2-00": 48 * time.Hour, "1-02:03": 26*time.Hour + 3*time.Minute, "1-00:00:10": 24*time.Hour + 10*time.Second,
		"90m": 90 * time.Minute, "2h30m": 150 * time.Minute,
	} {
		if got, err := slurm.ParseTime(in); err != nil || got != want {
			t.Errorf("ParseTime(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	// The last ones overflowed time.Duration, or the job script's
	// rounding to minutes, and were taken.
	for _, in := range []string{"", "0", "-5", "1:2:3:4", "abc", "1-", "0m", "1-2:3:4:5",
		"9223372036854775807", "106751-23:47:16", "2562047h47m16s", "36501-00", "52560001"} {
		if got, err := slurm.ParseTime(in); err == nil {
			t.Errorf("ParseTime(%q) = %v, want an error", in, got)
		}
	}
}

func TestParseMemory(t *testing.T) {
	for in, want := range map[string]int64{"4096": 4096, "512M": 512, "4G": 4096, "4g": 4096, "1T": 1 << 20, "1536K": 2,
		"9223372036854775807K": 9007199254740992} {
		if got, err := slurm.ParseMemory(in); err != nil || got != want {
			t.Errorf("ParseMemory(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "G", "0", "-1G", "4GB", "lots", "9223372036854775807T", "8796093022208T"} {
		if got, err := slurm.ParseMemory(in); err == nil {
			t.Errorf("ParseMemory(%q) = %v, want an error", in, got)
		}
	}
}

func TestReadOptions(t *testing.T) {
	dir := t.TempDir()
	write := func(text string) string {
		path := filepath.Join(dir, "cascade-slurm.conf")
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	path := write("# comment\n\npartition = long\naccount=arch\nqos=high\ntime=1:00:00\nmem=2G\ncpus-per-task=4\n")
	o, err := slurm.ReadOptions(path)
	want := slurm.Options{Partition: "long", Account: "arch", QOS: "high", TimeLimit: time.Hour, MemoryMB: 2048, CPUs: 4}
	if err != nil || o != want {
		t.Fatalf("ReadOptions = %+v, %v; want %+v", o, err, want)
	}
	global := slurm.Options{Partition: "debug", QOS: "low", MemoryMB: 100}
	if got := global.Merge(slurm.Options{Partition: "long", CPUs: 2}); got != (slurm.Options{Partition: "long", QOS: "low", MemoryMB: 100, CPUs: 2}) {
		t.Fatalf("Merge = %+v", got)
	}
	for text, msg := range map[string]string{
		"partition=long\nmem=lots\n":          ":2: mem=lots: want megabytes",
		"time 5\n":                            `:1: "time 5" is not option=value`,
		"nodes=2\n":                           `:1: unknown option "nodes"`,
		"partition=a b\n":                     ":1: partition=a b: not a Slurm partition name",
		"\n\ncpus-per-task=0\n":               ":3: cpus-per-task=0: want a number of CPUs above 0",
		"account=\n":                          `:1: "account=" is not option=value`,
		"qos=a\rb\n":                          ":1: qos=a\rb: not a Slurm qos name",
		"\nqos=" + strings.Repeat("x", 70000): ":2: bufio.Scanner: token too long",
	} {
		_, err := slurm.ReadOptions(write(text))
		if err == nil || !strings.Contains(err.Error(), path+msg) {
			t.Errorf("%q: error %v, want %q", text, err, path+msg)
		}
	}
}

// TestOptionsAsked: a job's options as a run's history records them, in
// cascade-slurm.conf's spelling, saying what is left to the cluster.
func TestOptionsAsked(t *testing.T) {
	for _, tc := range []struct {
		o    slurm.Options
		want string
	}{
		{slurm.Options{}, "the cluster's defaults"},
		{slurm.Options{MemoryMB: 1024}, "mem=1024M; the rest the cluster's defaults"},
		{slurm.Options{Partition: "long", TimeLimit: 90*time.Minute + time.Second, CPUs: 2}, "partition=long time=91 cpus-per-task=2; the rest the cluster's defaults"},
		{slurm.Options{Partition: "p", Account: "arch", QOS: "normal", TimeLimit: time.Hour, MemoryMB: 16384, CPUs: 1},
			"partition=p account=arch qos=normal time=60 mem=16384M cpus-per-task=1"},
	} {
		if got := tc.o.Asked(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.o, got, tc.want)
		}
	}
}
