package servertests_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/simconfig/simconfigtest"
	"github.com/cascade-sim/cascade/app"
	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/dbtest"
	"github.com/cascade-sim/cascade/testkit/servertest"
)

// trace is the part of a Trace the tests read.
type trace struct {
	ID                 string   `json:"id"`
	State              string   `json:"state"`
	Error              *string  `json:"error"`
	Model              *string  `json:"model"`
	Layers             *string  `json:"layers"`
	Prompts            []string `json:"prompts"`
	SourceGPU          *string  `json:"sourceGpu"`
	TraceGPUArch       string   `json:"traceGpuArch"`
	SuggestedSimConfig *string  `json:"suggestedSimConfig"`
	KernelCount        int      `json:"kernelCount"`
	Bytes              int64    `json:"bytes"`
	HasRealTiming      bool     `json:"hasRealTiming"`
	HasStepTimeline    bool     `json:"hasStepTimeline"`
	Sample             bool     `json:"sample"`
	Warnings           []string `json:"warnings"`
}

const traceFields = `id state error model layers prompts sourceGpu traceGpuArch suggestedSimConfig kernelCount bytes hasRealTiming hasStepTimeline sample warnings`

// watch subscribes to every trace change.
func watch(t *testing.T, s *servertest.TestServer) *servertest.Subscription {
	return s.Subscribe(t, "graphql-transport-ws", `subscription { traceUpdated { `+traceFields+` } }`, nil)
}

// waitFor reads updates until one of trace id satisfies cond, failing the
// test after timeout. It returns that update.
func waitFor(t *testing.T, sub *servertest.Subscription, id string, timeout time.Duration, what string, cond func(trace) bool) trace {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var last trace
	for {
		var r struct{ TraceUpdated trace }
		err := sub.Next(time.Until(deadline), &r)
		if err == servertest.ErrTimeout {
			t.Fatalf("trace %q: no update with %s within %v; last seen %+v", id, what, timeout, last)
		}
		if err != nil {
			t.Fatal(err)
		}
		if r.TraceUpdated.ID == id {
			last = r.TraceUpdated
			if cond(last) {
				return last
			}
		}
	}
}

func state(s string) func(trace) bool { return func(tr trace) bool { return tr.State == s } }

func find(t *testing.T, s *servertest.TestServer, id string) *trace {
	t.Helper()
	var r struct{ Trace *trace }
	s.MustDo(t, `query($id: ID!) { trace(id: $id) { `+traceFields+` } }`, map[string]any{"id": id}, &r)
	return r.Trace
}

func query(t *testing.T, s *servertest.TestServer, id string) trace {
	t.Helper()
	tr := find(t, s, id)
	if tr == nil {
		t.Fatalf("trace %q not found", id)
	}
	return *tr
}

const statsHeader = "kernel id, kernel mangled name, grid_dimX, grid_dimY, grid_dimZ, #blocks, block_dimX, block_dimY, block_dimZ, #threads, total_insts, total_reported_insts\n"

func statsRow(name string, grid, block int, insts int64) string {
	return fmt.Sprintf("%s, _Z6vecAddPdS_S_i, %d, 1, 1, %d, %d, 1, 1, %d, %d,%d\n", name, grid, grid, block, block, insts, insts)
}

// uploadFile is one file of a test trace.
type uploadFile struct {
	path string
	data string
}

// perContextTrace is a small, complete per-context upload with its
// processed kernelslist.g, so it skips post-processing.
func perContextTrace() []uploadFile {
	return []uploadFile{
		{"traces/kernel-1-ctx_0x1.trace.xz", strings.Repeat("a", 100)},
		{"traces/kernel-2-ctx_0x1.trace.xz", strings.Repeat("b", 200)},
		{"traces/kernelslist_ctx_0x1", "MemcpyHtoD,0x00007f0000000000,4096\nkernel-1-ctx_0x1.trace.xz\nkernel-2-ctx_0x1.trace.xz\n"},
		{"traces/stats_ctx_0x1", statsHeader + statsRow("kernel-1-ctx_0x1.trace.xz", 98, 1024, 50066) + statsRow("kernel-2-ctx_0x1.trace.xz", 4, 256, -2)},
		{"traces/kernelslist.g", "MemcpyHtoD,0x00007f0000000000,4096\nkernel-1-ctx_0x1.traceg\nkernel-2-ctx_0x1.traceg\n"},
	}
}

// rawUpload is perContextTrace without its kernelslist.g, and a
// metadata.json listing its files: complete, and to be post-processed.
func rawUpload(t *testing.T) []uploadFile {
	files := perContextTrace()
	files = slices.DeleteFunc(files, func(f uploadFile) bool { return f.path == "traces/kernelslist.g" })
	return append(files, uploadFile{"metadata.json", metadata(t, map[string]any{"files": filesList(files)})})
}

func filesList(files []uploadFile) []map[string]any {
	var list []map[string]any
	for _, f := range files {
		list = append(list, map[string]any{"path": f.path, "size": len(f.data)})
	}
	return list
}

func metadata(t *testing.T, fields map[string]any) string {
	b, err := json.MarshalIndent(fields, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestTraceAppearsOnFirstFileAndGrows(t *testing.T) {
	t.Parallel()
	servertest.ForEachServer(t, func(t *testing.T, s *servertest.TestServer) {
		sub := watch(t, s)
		id := "llama3 8B ünïcode (layer 0)"
		s.WriteFile(t, id, "traces/kernel-1-ctx_0x1.trace.xz", make([]byte, 1000))
		tr := waitFor(t, sub, id, 5*time.Second, "first file", func(tr trace) bool { return tr.KernelCount == 1 })
		if tr.State != "UPLOADING" || tr.Bytes != 1000 || tr.TraceGPUArch != "sm_90" || tr.Sample || tr.Prompts == nil {
			t.Fatalf("first sight: %+v", tr)
		}
		s.WriteFile(t, id, "traces/kernel-2-ctx_0x1.trace", make([]byte, 500))
		s.WriteFile(t, id, "traces/.rclone_temp_put_kernel-3-ctx_0x1.trace.xz", make([]byte, 7777))
		tr = waitFor(t, sub, id, 5*time.Second, "second kernel", func(tr trace) bool { return tr.KernelCount == 2 })
		if tr.Bytes != 1500 {
			t.Fatalf("bytes %d, want 1500 (dotfiles skipped)", tr.Bytes)
		}
	})
}

func TestFilesListCompleteSkipsPostprocessing(t *testing.T) {
	t.Parallel()
	servertest.ForEachServer(t, func(t *testing.T, s *servertest.TestServer) {
		sub := watch(t, s)
		id := "files-list"
		files := perContextTrace()
		for _, f := range files[:len(files)-1] {
			s.WriteFile(t, id, f.path, []byte(f.data))
		}
		// metadata.json first, listing a file that has not arrived.
		s.WriteFile(t, id, "metadata.json", []byte(metadata(t, map[string]any{
			"model": "meta-llama/Llama-3.1-8B", "layers": []int{0, 1}, "prompts": []string{"The capital of France is"},
			"gpu": "NVIDIA H100 80GB HBM3", "trace_gpu_arch": "sm_90", "files": filesList(files),
		})))
		tr := waitFor(t, sub, id, 5*time.Second, "metadata fields", func(tr trace) bool { return tr.Model != nil })
		if tr.State != "UPLOADING" || *tr.Layers != "[0, 1]" || *tr.SourceGPU != "NVIDIA H100 80GB HBM3" || tr.Prompts[0] != "The capital of France is" {
			t.Fatalf("with metadata: %+v", tr)
		}
		// What keeps an incomplete upload uploading (a file missing or
		// short) is decided in TestDecision.
		last := files[len(files)-1]
		s.WriteFile(t, id, last.path, []byte(last.data))
		waitFor(t, sub, id, 5*time.Second, "PROCESSING", state("PROCESSING"))
		tr = waitFor(t, sub, id, 5*time.Second, "READY", state("READY"))
		if tr.KernelCount != 2 || tr.Error != nil {
			t.Fatalf("ready: %+v", tr)
		}
		var r struct {
			Trace struct {
				Kernels struct {
					TotalCount int
					Nodes      []struct {
						KernelID     int
						Context      *string
						Name         string
						TraceFile    string
						Grid, Block  struct{ X, Y, Z int }
						Instructions int64
					}
				}
			}
		}
		s.MustDo(t, `query($id: ID!) { trace(id: $id) { kernels(first: 10) { totalCount nodes { kernelId context name traceFile grid { x y z } block { x y z } instructions } } } }`, map[string]any{"id": id}, &r)
		ks := r.Trace.Kernels
		if ks.TotalCount != 2 || ks.Nodes[0].Grid.X != 98 || ks.Nodes[0].Block.X != 1024 || *ks.Nodes[0].Context != "0x1" || ks.Nodes[1].KernelID != 2 {
			t.Fatalf("kernels: %+v", ks)
		}
		if ks.Nodes[1].Instructions != 1<<32-2 {
			t.Fatalf("negative %%d count not read back as uint32: %d", ks.Nodes[1].Instructions)
		}
	})
}

// TestStreamingUploadCompletesWhenQuiet: the streaming profiler uploads
// metadata.json first, then its traces; once every kernel list has its
// stats and a scan finds nothing changed, the trace moves on. When it must
// not (metadata.json alone, a list without stats, a tree still changing)
// is decided in TestDecision.
func TestStreamingUploadCompletesWhenQuiet(t *testing.T) {
	t.Parallel()
	s := servertest.Server(t)
	sub := watch(t, s)
	id := "streaming"
	s.WriteFile(t, id, "metadata.json", []byte(`{"model": "m"}`))
	waitFor(t, sub, id, 5*time.Second, "first sight", state("UPLOADING"))
	for _, f := range perContextTrace() {
		s.WriteFile(t, id, f.path, []byte(f.data))
	}
	tr := waitFor(t, sub, id, 5*time.Second, "READY", state("READY"))
	if tr.KernelCount != 2 || *tr.Model != "m" {
		t.Fatalf("ready: %+v", tr)
	}
}

func TestSingleContextNames(t *testing.T) {
	t.Parallel()
	s := servertest.Server(t)
	sub := watch(t, s)
	id := "old-tracer"
	s.WriteFile(t, id, "traces/kernel-1.trace", []byte("x"))
	s.WriteFile(t, id, "traces/kernelslist", []byte("kernel-1.trace\n"))
	s.WriteFile(t, id, "traces/stats.csv", []byte(statsHeader+statsRow("kernel-1.trace", 2, 64, 10)))
	s.WriteFile(t, id, "traces/kernelslist.g", []byte("kernel-1.traceg\n"))
	s.WriteFile(t, id, "metadata.json", []byte(`{"trace_gpu_arch": "sm_86"}`))
	tr := waitFor(t, sub, id, 5*time.Second, "READY", state("READY"))
	if tr.TraceGPUArch != "sm_86" || tr.KernelCount != 1 {
		t.Fatalf("%+v", tr)
	}
}

func TestBadInput(t *testing.T) {
	t.Parallel()
	s := servertest.Server(t)
	outside := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(outside, []byte("12345"), 0o644)
	cases := []struct {
		name    string
		id      string // the trace's id; "" is bad-<i> <name>
		files   []uploadFile
		setup   func(dir string)
		wantErr string
	}{
		{name: "status failed", files: []uploadFile{{"metadata.json", `{"status": "failed", "error": "CUDA OOM in layer 3"}`}}, wantErr: `metadata.json: status "failed": CUDA OOM in layer 3`},
		{name: "status failed without text", files: []uploadFile{{"metadata.json", `{"status": "failed"}`}}, wantErr: `metadata.json: status "failed"`},
		{name: "metadata syntax", files: []uploadFile{{"metadata.json", "{\n  \"model\": \"x\",\n  oops\n}"}}, wantErr: "metadata.json: line 3, column 3"},
		{name: "metadata field type", files: []uploadFile{{"metadata.json", `{"layers": {"a": 1}}`}}, wantErr: "metadata.json: layers: want a list of integers or a string"},
		{name: "files absolute", files: []uploadFile{{"metadata.json", `{"files": [{"path": "/etc/passwd", "size": 1}]}`}}, wantErr: `files[0]: "/etc/passwd" is an absolute path`},
		{name: "files dotdot", files: []uploadFile{{"metadata.json", `{"files": [{"path": "traces/../../x", "size": 1}]}`}}, wantErr: `has a ".." component`},
		{name: "files symlink outside", files: []uploadFile{{"metadata.json", `{"files": [{"path": "traces/link", "size": 5}]}`}},
			setup: func(dir string) {
				os.MkdirAll(filepath.Join(dir, "traces"), 0o755)
				os.Symlink(outside, filepath.Join(dir, "traces", "link"))
			},
			wantErr: "resolves outside the trace directory"},
		{name: "files entry shape", files: []uploadFile{{"metadata.json", `{"files": [{"name": "x"}]}`}}, wantErr: `files[0]: want {"path": string, "size": integer}`},
		// A complete raw upload, under a name the post-processor's work
		// files (work/postprocess/<id>.running) could not be named after.
		{name: "trace id too long", id: strings.Repeat("l", 250), files: rawUpload(t),
			wantErr: "the trace folder's name is 250 bytes long; a trace id holds at most 247 bytes"},
	}
	for i := range cases {
		if cases[i].id == "" {
			cases[i].id = fmt.Sprintf("bad-%d %s", i, cases[i].name)
		}
	}
	for _, c := range cases {
		id := c.id
		if c.setup != nil {
			c.setup(s.TraceDir(id))
		}
		for _, f := range c.files {
			s.WriteFile(t, id, f.path, []byte(f.data))
		}
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			id := c.id
			testkit.Eventually(t, 5*time.Second, "trace fails", func() bool { tr := find(t, s, id); return tr != nil && tr.State == "FAILED" })
			if got := query(t, s, id); got.Error == nil || !strings.Contains(*got.Error, c.wantErr) {
				t.Fatalf("error %v, want it to contain %q", got.Error, c.wantErr)
			}
		})
	}
	// The server is still serving everything else.
	if got := query(t, s, "sample"); got.State != "READY" || !got.Sample {
		t.Fatalf("sample after bad input: %+v", got)
	}
}

func TestMalformedStatsRowsAreReported(t *testing.T) {
	t.Parallel()
	s := servertest.Server(t)
	sub := watch(t, s)
	id := "bad-stats"
	files := perContextTrace()
	files[3].data = statsHeader + statsRow("kernel-1-ctx_0x1.trace.xz", 98, 1024, 5) +
		"kernel-2-ctx_0x1.trace.xz, _Z3foov, x, 1, 1, 1, 32, 1, 1, 32, 1,1\n" +
		"garbage\n" + statsRow("kernel-3-ctx_0x1.trace.xz", 1, 32, 7)
	for _, f := range files {
		s.WriteFile(t, id, f.path, []byte(f.data))
	}
	s.WriteFile(t, id, "metadata.json", []byte(metadata(t, map[string]any{"files": filesList(files)})))
	tr := waitFor(t, sub, id, 5*time.Second, "READY", state("READY"))
	want := []string{
		`traces/stats_ctx_0x1:3: grid_dimX: "x" is not a non-negative integer`,
		"traces/stats_ctx_0x1:4: want 12 columns, got 1",
		// Its row skipped, kernel 2 is named by kernelslist.g alone.
		"traces/kernelslist.g names 1 kernel trace that no stats file lists (kernel 2 of context 0x1 first): the kernel list lacks it",
	}
	if fmt.Sprint(tr.Warnings) != fmt.Sprint(want) {
		t.Fatalf("warnings %q, want %q", tr.Warnings, want)
	}
	var r struct {
		Trace struct{ Kernels struct{ TotalCount int } }
	}
	s.MustDo(t, `query($id: ID!) { trace(id: $id) { kernels { totalCount } } }`, map[string]any{"id": id}, &r)
	if r.Trace.Kernels.TotalCount != 2 {
		t.Fatalf("good rows: %d, want 2", r.Trace.Kernels.TotalCount)
	}
}

func TestTimingFlagsAfterReady(t *testing.T) {
	t.Parallel()
	s := servertest.Server(t)
	sub := watch(t, s)
	id := "timing"
	files := perContextTrace()
	for _, f := range files {
		s.WriteFile(t, id, f.path, []byte(f.data))
	}
	s.WriteFile(t, id, "measured/times.json", []byte(`{"rows": [{"kernel_id": 1, "duration_ns": 1500}, {"kernel_id": 2}]}`))
	s.WriteFile(t, id, "metadata.json", []byte(metadata(t, map[string]any{"real_timing": "measured/times.json", "files": filesList(files)})))
	tr := waitFor(t, sub, id, 5*time.Second, "READY", state("READY"))
	if !tr.HasRealTiming || tr.HasStepTimeline {
		t.Fatalf("%+v", tr)
	}
	s.WriteFile(t, id, "corrected_timeline.json", []byte(`{"steps": []}`))
	s.WriteFile(t, id, "kernel_mapping.json", []byte(`[]`))
	waitFor(t, sub, id, 5*time.Second, "hasStepTimeline", func(tr trace) bool { return tr.HasStepTimeline })
	// Rows without an integer kernel_id make hasRealTiming false.
	s.WriteFile(t, id, "measured/times.json", []byte(`[{"kernel_id": "1"}]`))
	waitFor(t, sub, id, 5*time.Second, "hasRealTiming false", func(tr trace) bool { return !tr.HasRealTiming })
}

func TestRemovedTraceLeavesTheAPI(t *testing.T) {
	t.Parallel()
	s := servertest.Server(t)
	removed := s.Subscribe(t, "graphql-transport-ws", `subscription { traceRemoved }`, nil)
	sub := watch(t, s)
	s.WriteFile(t, "doomed", "traces/kernel-1.trace", []byte("x"))
	waitFor(t, sub, "doomed", 5*time.Second, "first sight", state("UPLOADING"))
	os.RemoveAll(s.TraceDir("doomed"))
	var r struct{ TraceRemoved string }
	if err := removed.Next(5*time.Second, &r); err != nil || r.TraceRemoved != "doomed" {
		t.Fatalf("traceRemoved: %v %v", r, err)
	}
	var q struct{ Trace *trace }
	s.MustDo(t, `{ trace(id: "doomed") { id } }`, nil, &q)
	if q.Trace != nil {
		t.Fatalf("still there: %+v", q.Trace)
	}
}

func TestRestartReconciles(t *testing.T) {
	t.Parallel()
	for name, u := range dbtest.DatabaseURLs(t) {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := func(c *app.Config) { c.DataDir, c.DatabaseURL = dir, u }
			s := servertest.Server(t, cfg)
			sub := watch(t, s)
			for _, id := range []string{"kept", "deleted", "changed"} {
				for _, f := range perContextTrace() {
					s.WriteFile(t, id, f.path, []byte(f.data))
				}
				s.WriteFile(t, id, "metadata.json", []byte(metadata(t, map[string]any{"files": filesList(perContextTrace())})))
				waitFor(t, sub, id, 5*time.Second, "READY", state("READY"))
			}
			before := query(t, s, "changed")
			s.Close()

			os.RemoveAll(s.TraceDir("deleted"))
			s.WriteFile(t, "changed", "corrected_timeline.json", []byte(`{}`))
			s.WriteFile(t, "changed", "kernel_mapping.json", []byte(`[]`))

			s2 := servertest.Server(t, cfg)
			testkit.Eventually(t, 5*time.Second, "reconciled", func() bool {
				var r struct{ Trace *trace }
				s2.MustDo(t, `{ trace(id: "deleted") { id } }`, nil, &r)
				return r.Trace == nil && query(t, s2, "changed").HasStepTimeline
			})
			after := query(t, s2, "changed")
			if after.Bytes <= before.Bytes || after.State != "READY" || query(t, s2, "kept").State != "READY" {
				t.Fatalf("before %+v after %+v", before, after)
			}
			var r struct{ Traces struct{ TotalCount int } }
			s2.MustDo(t, `{ traces { totalCount } }`, nil, &r)
			if r.Traces.TotalCount != 3 { // kept, changed and the sample, seeded once
				t.Fatalf("traces after restart: %d", r.Traces.TotalCount)
			}
		})
	}
}

// TestMetadataValuesWarned (issue 32): "suggested_sim_config": "TITANX"
// (no such config) and "layers": "0-3" (a string) reach READY, and the
// trace's warnings in the API name each field and what was expected,
// with the config it most likely meant.
func TestMetadataValuesWarned(t *testing.T) {
	t.Parallel()
	s := servertest.Server(t, func(c *app.Config) { c.SimConfigsDir = simconfigtest.Write(t, t.TempDir()) })
	sub := watch(t, s)
	files := perContextTrace()
	for _, f := range files {
		s.WriteFile(t, "odd", f.path, []byte(f.data))
	}
	s.WriteFile(t, "odd", "metadata.json", []byte(metadata(t, map[string]any{"layers": "0-3", "suggested_sim_config": "TITANX", "files": filesList(files)})))
	tr := waitFor(t, sub, "odd", 10*time.Second, "READY", state("READY"))
	want := []string{
		`metadata.json: layers: want a list of layer numbers such as [0, 1, 2, 3], got the string "0-3"; shown as given`,
		`metadata.json: suggested_sim_config: no config "TITANX"; did you mean "SM6_TITANX"?; the New run screen preselects the first compatible config instead`,
	}
	if !slices.Equal(tr.Warnings, want) || tr.Error != nil || cascade.Deref(tr.Layers) != "0-3" {
		t.Fatalf("warnings %q, want %q; %+v", tr.Warnings, want, tr)
	}
	var r struct{ Trace trace }
	s.MustDo(t, `query { trace(id: "odd") { `+traceFields+` } }`, nil, &r)
	if !slices.Equal(r.Trace.Warnings, want) {
		t.Fatalf("query: warnings %q, want %q", r.Trace.Warnings, want)
	}
}
