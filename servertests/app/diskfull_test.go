package app_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cascade-sim/cascade/accelsim/simconfig/simconfigtest"
	"github.com/cascade-sim/cascade/app"
	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/fakesim"
	"github.com/cascade-sim/cascade/testkit/servertest"
	"github.com/cascade-sim/cascade/tracegen"
	"github.com/cascade-sim/cascade/upload"
)

// Each test here puts the whole data directory — database (on SQLite),
// bucket, work files — on one small tmpfs, as a server keeps them on one
// disk, and fills it.

// fill writes a file that leaves the file system holding dir with about
// room bytes free.
func fill(t *testing.T, dir string, room int64) string {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "filler")
	if err := os.WriteFile(path, make([]byte, int64(st.Bavail)*st.Bsize-room), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func used(t *testing.T, dir string) int64 {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	return int64(st.Blocks-st.Bfree) * st.Bsize
}

// rawTrace writes a raw trace of the given kernels and size each, with
// its metadata.json, into a new directory and returns it.
func rawTrace(t *testing.T, kernels int, size int64) string {
	t.Helper()
	src := t.TempDir()
	cfg := tracegen.Config{Kernels: kernels, Bytes: size, Mem: true, Seed: 5}
	if size == 0 {
		cfg.Insts = 64
	}
	if _, err := tracegen.Generate(context.Background(), filepath.Join(src, "traces"), cfg); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "metadata.json"), []byte(`{"model": "disk-full"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return src
}

// TestPostprocessingOnAFullDisk: the built-in post-processor runs out of
// room for its spill files. The trace fails saying so; the trace already
// ready and the database are untouched; no spill file, output or
// temporary file is left, so the room is back; with room made, a retry
// processes it.
func TestPostprocessingOnAFullDisk(t *testing.T) {
	cascadeBin := testkit.Program(t, "./cmd/cascade")
	servertest.ForEachServerOnSmallDisk(t, "64m", func(t *testing.T, s *servertest.TestServer) {
		data := s.Config.DataDir
		if _, err := upload.Upload(context.Background(), upload.Options{Source: rawTrace(t, 1, 0), PrefixDir: s.Config.BucketDir(), RunName: "good"}); err != nil {
			t.Fatal(err)
		}
		waitTrace(t, s, "good", "READY")

		big := rawTrace(t, 3, 4<<20)
		// Room for the upload and 2 MiB: not for one kernel's spill files.
		filler := fill(t, data, dirBytes(t, big)+2<<20)
		if _, err := upload.Upload(context.Background(), upload.Options{Source: big, PrefixDir: s.Config.BucketDir(), RunName: "big"}); err != nil {
			t.Fatal(err)
		}
		uploaded := used(t, data)
		waitTrace(t, s, "big", "FAILED")
		tr := s.TraceNow(t, "big")
		const want = "post-processor exit 1: no space left on device writing the spill files of traces/kernel-"
		if tr.Error == nil || !strings.HasPrefix(*tr.Error, want) || !strings.Contains(*tr.Error, filepath.Join(data, "work")) {
			t.Fatalf("error %v, want it to start %q and name the work directory", cascadeDeref(tr.Error), want)
		}
		if good := s.TraceNow(t, "good"); good.State != "READY" || good.KernelCount != 1 {
			t.Fatalf("the other trace: %+v", good)
		}
		spills, _ := filepath.Glob(filepath.Join(data, "work", "traceproc-*"))
		if len(spills) > 0 {
			t.Errorf("spill directories left: %v", spills)
		}
		ents, err := os.ReadDir(filepath.Join(s.TraceDir("big"), "traces"))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if n := e.Name(); strings.HasPrefix(n, ".") || strings.HasSuffix(n, ".tracez") || strings.HasSuffix(n, ".g") {
				t.Errorf("left in big/traces: %s", n)
			}
		}
		if after := used(t, data); after > uploaded+512<<10 {
			t.Errorf("%d bytes in use after the failure, %d after the upload", after, uploaded)
		}

		if err := os.Remove(filler); err != nil {
			t.Fatal(err)
		}
		s.MustDo(t, `mutation { retryTrace(id: "big") { state } }`, nil, nil)
		waitTrace(t, s, "big", "READY")
		if tr := s.TraceNow(t, "big"); tr.KernelCount != 3 {
			t.Fatalf("after the retry: %+v", tr)
		}
	}, func(c *app.Config) {
		c.PostprocessCmd = []string{cascadeBin, "postprocess"}
		c.TraceFormat = "tracez"
		c.PostprocessJobs = 2
	})
}

// TestRunOnAFullDisk: a simulator whose log fills the disk is stopped and
// its run fails saying so; the log is cut to its end, which gives the
// room back; the trace and the database are untouched.
func TestRunOnAFullDisk(t *testing.T) {
	sim := fakesim.Build(t)
	cfgDir := simconfigtest.Write(t, t.TempDir())
	servertest.ForEachServerOnSmallDisk(t, "16m", func(t *testing.T, s *servertest.TestServer) {
		src := filepath.Join(testkit.ModuleRoot(), "samples", "quickstart")
		if _, err := upload.Upload(context.Background(), upload.Options{Source: src, PrefixDir: s.Config.BucketDir(), RunName: "qs"}); err != nil {
			t.Fatal(err)
		}
		waitTrace(t, s, "qs", "READY")
		before := s.TraceNow(t, "qs")
		var l struct{ LaunchRun struct{ ID string } }
		s.MustDo(t, `mutation { launchRun(input: {traceId: "qs", simConfig: "SM90_H100"}) { id } }`, nil, &l)
		id := l.LaunchRun.ID
		var r struct {
			Run struct {
				State string
				Error *string
			}
		}
		testkit.Eventually(t, 60*time.Second, "run failed", func() bool {
			s.MustDo(t, `query($id: ID!) { run(id: $id) { state error } }`, map[string]any{"id": id}, &r)
			return r.Run.State == "FAILED"
		})
		want := "simulator stopped: no space left on device writing its log work/runs/" + id + "/accel-sim.log"
		if r.Run.Error == nil || !strings.HasPrefix(*r.Run.Error, want) {
			t.Fatalf("error %v, want it to start %q", cascadeDeref(r.Run.Error), want)
		}
		log, err := os.ReadFile(filepath.Join(s.Config.DataDir, "work", "runs", id, "accel-sim.log"))
		if err != nil {
			t.Fatal(err)
		}
		if len(log) > 65<<10 || !bytes.HasSuffix(log, []byte("cascade: no space left on device: the simulator was stopped and this log cut to its last 64 KiB\n")) ||
			!bytes.Contains(log, []byte("GPGPU-Sim uArch: cycles simulated: ")) {
			t.Fatalf("log of %d bytes, ending %q", len(log), log[max(0, len(log)-200):])
		}
		if after := s.TraceNow(t, "qs"); after != before {
			t.Fatalf("the trace: %+v, before the run %+v", after, before)
		}
		if u := used(t, s.Config.DataDir); u > 8<<20 {
			t.Errorf("%d bytes of 16 MiB in use after the run failed", u)
		}
	}, func(c *app.Config) {
		c.SimCmd = []string{"env", fakesim.EnvProgress + "=67108864", sim}
		c.SimConfigsDir = cfgDir
	})
}

// dirBytes is the size of the files under dir.
func dirBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	err := filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			n += fi.Size()
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func cascadeDeref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}
