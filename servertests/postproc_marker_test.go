package servertests_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cascade-sim/cascade/app"
	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/servertest"
)

// recorded returns the command lines the stand-in post-processor wrote
// to the record file, one per run.
func recorded(t *testing.T, file string) [][]string {
	t.Helper()
	b, err := os.ReadFile(file)
	if os.IsNotExist(err) {
		return nil
	} else if err != nil {
		t.Fatal(err)
	}
	// The stand-in creates the file before it writes its one line: an empty
	// file is a post-processor that has not recorded itself yet.
	var runs [][]string
	for _, line := range bytes.Split(b, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var args []string
		if err := json.Unmarshal(line, &args); err != nil {
			t.Fatalf("record %q: %v", line, err)
		}
		runs = append(runs, args)
	}
	return runs
}

// processedList is the kernelslist.g of uploadRaw's trace, as a processed
// upload brings it.
const processedList = "MemcpyHtoD,0x0000000000001000,64\nkernel-1-ctx_0x1.traceg\nkernel-2-ctx_0x1.traceg\n"

// TestStaleMarkerNeverDefeatsTheSkipRule: the marker a post-processor
// leaves (it ran, failed, or its trace was deleted under it) never makes
// Cascade run the post-processor on an upload that holds its own
// traces/kernelslist.g, while a kernelslist.g a failed post-processor left
// behind is still never taken for a finished one.
func TestStaleMarkerNeverDefeatsTheSkipRule(t *testing.T) {
	t.Parallel()
	server := func(t *testing.T, mode string) (*servertest.TestServer, string) {
		record := filepath.Join(t.TempDir(), "argv.jsonl")
		return servertest.Server(t, func(c *app.Config) {
			c.PostprocessCmd = testkit.FakePostprocessor(t, mode, "--record="+record)
		}), record
	}
	retry := func(t *testing.T, s *servertest.TestServer, id string) {
		t.Helper()
		s.MustDo(t, `mutation($id: ID!) { retryTrace(id: $id) { id } }`, map[string]any{"id": id}, nil)
	}

	t.Run("FailedThenUploadedItsList", func(t *testing.T) {
		t.Parallel()
		s, record := server(t, "fail")
		uploadRaw(t, s, "tr")
		waitState(t, s, "tr", "FAILED")
		s.WriteFile(t, "tr", "traces/kernelslist.g", []byte(processedList))
		retry(t, s, "tr")
		if tr := waitState(t, s, "tr", "READY"); tr.KernelCount != 2 {
			t.Fatalf("kernel count %d", tr.KernelCount)
		}
		if n := len(recorded(t, record)); n != 1 {
			t.Fatalf("post-processor ran %d times, want once: the uploaded kernelslist.g skips it", n)
		}
	})

	t.Run("PartialOutputRetried", func(t *testing.T) {
		t.Parallel()
		s, record := server(t, "partial")
		uploadRaw(t, s, "tr")
		waitState(t, s, "tr", "FAILED")
		if _, err := os.Stat(filepath.Join(s.TraceDir("tr"), "traces", "kernelslist.g")); err != nil {
			t.Fatalf("no partial output: %v", err)
		}
		retry(t, s, "tr") // nothing changed: the partial list is not taken
		testkit.Eventually(t, 20*time.Second, "post-processor run again", func() bool { return len(recorded(t, record)) == 2 })
		waitState(t, s, "tr", "FAILED")

		// The user uploads the processed list over the partial one.
		s.WriteFile(t, "tr", "traces/kernelslist.g", []byte(processedList))
		retry(t, s, "tr")
		if tr := waitState(t, s, "tr", "READY"); tr.KernelCount != 2 {
			t.Fatalf("kernel count %d", tr.KernelCount)
		}
		if n := len(recorded(t, record)); n != 2 {
			t.Fatalf("post-processor ran %d times, want 2", n)
		}
	})

	t.Run("DeletedWhileProcessing", func(t *testing.T) {
		t.Parallel()
		s, record := server(t, "slow")
		uploadRaw(t, s, "tr")
		testkit.Eventually(t, 20*time.Second, "post-processor started", func() bool { return len(recorded(t, record)) == 1 })
		if err := os.RemoveAll(s.TraceDir("tr")); err != nil {
			t.Fatal(err)
		}
		testkit.Eventually(t, 20*time.Second, "trace removed", func() bool { return findProcessed(t, s, "tr") == nil })
		// Forgetting the trace stopped its post-processor.
		if out, _ := exec.Command("pgrep", "-f", s.TraceDir("tr")).Output(); len(bytes.TrimSpace(out)) > 0 {
			t.Fatalf("post-processor outlived its trace: pids %s", out)
		}
		// The same name comes back, processed this time.
		s.WriteFile(t, "tr", "traces/kernelslist.g", []byte(processedList))
		uploadRaw(t, s, "tr")
		if tr := waitState(t, s, "tr", "READY"); tr.KernelCount != 2 {
			t.Fatalf("kernel count %d", tr.KernelCount)
		}
		if runs := recorded(t, record); len(runs) != 1 {
			t.Fatalf("post-processor ran %d times: %q", len(runs), runs)
		}
	})
}

// TestJobsSetting: CASCADE_POSTPROCESS_JOBS is the -j every post-processor
// gets, and the command line is `<command> <trace dir>/traces -j N`.
func TestJobsSetting(t *testing.T) {
	t.Parallel()
	record := filepath.Join(t.TempDir(), "argv.jsonl")
	s := servertest.Server(t, func(c *app.Config) {
		c.PostprocessCmd = testkit.FakePostprocessor(t, "ok", "--record="+record)
		c.PostprocessJobs = 7
	})
	uploadRaw(t, s, "tr")
	waitState(t, s, "tr", "READY")
	runs := recorded(t, record)
	if len(runs) != 1 {
		t.Fatalf("runs %q", runs)
	}
	want := []string{"--mode=ok", "--record=" + record, filepath.Join(s.TraceDir("tr"), "traces"), "-j", "7"}
	if strings.Join(runs[0], "\x00") != strings.Join(want, "\x00") {
		t.Fatalf("command line %q, want %q", runs[0], want)
	}
}
