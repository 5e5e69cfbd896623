package upload

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const quickstart = "../samples/quickstart"

// TestQuickstartUpload uploads the sample as a newcomer would and checks
// that the trace directory is a byte copy with an exact files list, which
// holds the kernelslist.g that lets the app skip post-processing.
func TestQuickstartUpload(t *testing.T) {
	prefix := t.TempDir()
	res, err := Upload(context.Background(), Options{Source: quickstart, PrefixDir: prefix})
	if err != nil {
		t.Fatal(err)
	}
	if res.RunName != "quickstart-llama-3.2-1b-layer0-h100" {
		t.Errorf("run name = %q", res.RunName)
	}
	src, dest := readTree(t, quickstart), readTree(t, res.Dest)
	var want []File
	for rel, content := range src {
		if rel != "metadata.json" {
			want = append(want, File{rel, int64(len(content))})
		}
	}
	sort.Slice(want, func(i, j int) bool { return want[i].Path < want[j].Path })
	files, fields := readMetadata(t, res.Dest)
	if !reflect.DeepEqual(files, want) {
		t.Errorf("files = %v\nwant %v", files, want)
	}
	for _, f := range files {
		if dest[f.Path] != src[f.Path] {
			t.Errorf("%s differs from the sample", f.Path)
		}
	}
	if _, ok := dest["traces/kernelslist.g"]; !ok {
		t.Error("no traces/kernelslist.g: the trace would need post-processing")
	}
	for key, want := range map[string]any{"gpu": "NVIDIA H100 80GB HBM3", "trace_gpu_arch": "sm_90", "model": "meta-llama/Llama-3.2-1B"} {
		if fields[key] != want {
			t.Errorf("metadata %s = %v, want %v", key, fields[key], want)
		}
	}
	if _, ok := fields["layers"]; !ok {
		t.Error("metadata has no layers")
	}
	if p, _ := fields["prompts"].([]any); len(p) == 0 {
		t.Error("metadata has no prompts")
	}
}

// TestQuickstartFormats checks the sample against formats.md, so that a
// change to it cannot quietly make it a trace the app rejects.
func TestQuickstartFormats(t *testing.T) {
	dir := filepath.Join(quickstart, "traces")
	src := readTree(t, quickstart)
	if _, ok := src["metadata.json"]; !ok {
		t.Fatal("no metadata.json")
	}
	if strings.Contains(src["metadata.json"], `"files"`) {
		t.Error("the sample's metadata.json has a files list; the uploader writes it")
	}

	const header = "kernel id, kernel mangled name, grid_dimX, grid_dimY, grid_dimZ, #blocks, block_dimX, block_dimY, block_dimZ, #threads, total_insts, total_reported_insts"
	stats := matchOne(t, dir, "stats_ctx_0x*")
	rows := strings.Split(strings.TrimSuffix(src["traces/"+stats], "\n"), "\n")
	if rows[0] != header {
		t.Errorf("%s header = %q", stats, rows[0])
	}
	ctx := strings.TrimPrefix(stats, "stats_ctx_")
	raw := src["traces/kernelslist_ctx_"+ctx]
	list := src["traces/kernelslist.g"]
	memcpy := regexp.MustCompile(`^MemcpyHtoD,0x[0-9a-f]{16},\d+$`)
	var rawKernels, kernels []string
	for _, l := range strings.Split(strings.TrimSuffix(raw, "\n"), "\n") {
		if !memcpy.MatchString(l) {
			rawKernels = append(rawKernels, l)
		}
	}
	for _, l := range strings.Split(strings.TrimSuffix(list, "\n"), "\n") {
		switch {
		case memcpy.MatchString(l):
		case strings.HasPrefix(l, "kernel"):
			kernels = append(kernels, l)
		default:
			t.Errorf("kernelslist.g: unexpected line %q", l)
		}
	}
	if len(kernels) < 3 || len(kernels) > 5 || len(kernels) != len(rawKernels) || len(rows)-1 != len(kernels) {
		t.Fatalf("%d kernels in kernelslist.g, %d in the raw list, %d stats rows", len(kernels), len(rawKernels), len(rows)-1)
	}

	var timing []struct {
		KernelID   *int  `json:"kernel_id"`
		DurationNS int64 `json:"duration_ns"`
	}
	if err := json.Unmarshal([]byte(src["real_timing.json"]), &timing); err != nil || len(timing) != len(kernels) {
		t.Errorf("real_timing.json: %v, %d rows", err, len(timing))
	}
	for _, r := range timing {
		if r.KernelID == nil || r.DurationNS <= 0 {
			t.Errorf("real_timing.json row %+v", r)
		}
	}
	var timeline struct {
		Steps []struct {
			Events []struct{ Kind string } `json:"events"`
		} `json:"steps"`
	}
	var mapping []struct {
		Step     int `json:"step"`
		Event    int `json:"event"`
		KernelID int `json:"kernel_id"`
	}
	if err := json.Unmarshal([]byte(src["corrected_timeline.json"]), &timeline); err != nil || len(timeline.Steps) == 0 {
		t.Errorf("corrected_timeline.json: %v", err)
	}
	if err := json.Unmarshal([]byte(src["kernel_mapping.json"]), &mapping); err != nil || len(mapping) == 0 {
		t.Errorf("kernel_mapping.json: %v", err)
	}
	for _, m := range mapping {
		if m.Step >= len(timeline.Steps) || m.Event >= len(timeline.Steps[m.Step].Events) || timeline.Steps[m.Step].Events[m.Event].Kind != "kernel" || m.KernelID < 1 || m.KernelID > len(kernels) {
			t.Errorf("kernel_mapping.json entry %+v names no kernel event", m)
		}
	}

	for i, k := range kernels {
		want := fmt.Sprintf("kernel-%d-ctx_%s.traceg", i+1, ctx)
		if k != want || rawKernels[i] != strings.TrimSuffix(want, "g") {
			t.Errorf("kernel line %d = %q (raw %q), want %q", i+1, k, rawKernels[i], want)
		}
		cols := strings.Split(rows[i+1], ", ")
		if len(cols) != 11 || cols[0] != rawKernels[i] {
			t.Errorf("stats row %d = %q", i+1, rows[i+1])
			continue
		}
		checkTraceg(t, filepath.Join(dir, k), cols)
	}
}

func matchOne(t *testing.T, dir, pattern string) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, pattern))
	if len(m) != 1 {
		t.Fatalf("%s: %d matches", pattern, len(m))
	}
	return filepath.Base(m[0])
}

// checkTraceg reads a processed text trace (formats.md §4) and checks it
// against its stats row: name, dimensions, every block in linear order,
// every warp listed, insts counts, instruction count.
func checkTraceg(t *testing.T, path string, stats []string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	num := func(s string) int { n, _ := strconv.Atoi(s); return n }
	gx, gy, gz, bx, by, bz := num(stats[2]), num(stats[3]), num(stats[4]), num(stats[6]), num(stats[7]), num(stats[8])
	warps := (bx*by*bz + 31) / 32
	inst := regexp.MustCompile(`^[0-9a-f]{4} [0-9a-f]{8} (0|1 R\d+) [A-Z0-9._]+ \d( R\d+)* (0|\d+ 1 0x[0-9a-f]+ \d+) 0$`)
	sc := bufio.NewScanner(f)
	line := 0
	next := func() string {
		if !sc.Scan() {
			t.Fatalf("%s: ends at line %d", path, line)
		}
		line++
		return sc.Text()
	}
	for _, h := range []string{
		"-kernel name = " + strings.Split(stats[1], " ")[0], "-kernel id = ", fmt.Sprintf("-grid dim = (%d,%d,%d)", gx, gy, gz),
		fmt.Sprintf("-block dim = (%d,%d,%d)", bx, by, bz), "-shmem = ", "-nregs = ", "-binary version = 90", "-cuda stream id = ",
		"-shmem base_addr = 0x", "-local mem base_addr = 0x", "-nvbit version = ", "-accelsim tracer version = 5", "-enable lineinfo = 0",
		"", "#traces format = ", "",
	} {
		if l := next(); !strings.HasPrefix(l, h) {
			t.Fatalf("%s:%d: %q, want %q", path, line, l, h)
		}
	}
	total := 0
	for z := range gz {
		for y := range gy {
			for x := range gx {
				for _, want := range []string{"#BEGIN_TB", "", fmt.Sprintf("thread block = %d,%d,%d", x, y, z)} {
					if l := next(); l != want {
						t.Fatalf("%s:%d: %q, want %q", path, line, l, want)
					}
				}
				for w := range warps {
					if l := next(); l != "" {
						t.Fatalf("%s:%d: %q, want a blank line", path, line, l)
					}
					if l := next(); l != fmt.Sprintf("warp = %d", w) {
						t.Fatalf("%s:%d: %q, want warp = %d", path, line, l, w)
					}
					n, err := strconv.Atoi(strings.TrimPrefix(next(), "insts = "))
					if err != nil {
						t.Fatalf("%s:%d: %v", path, line, err)
					}
					for range n {
						if l := next(); !inst.MatchString(l) {
							t.Errorf("%s:%d: not an instruction line: %q", path, line, l)
						}
					}
					total += n
				}
				end := []string{"", "#END_TB", ""} // a blank line between blocks
				if x == gx-1 && y == gy-1 && z == gz-1 {
					end = end[:2]
				}
				for _, want := range end {
					if l := next(); l != want {
						t.Fatalf("%s:%d: %q, want %q", path, line, l, want)
					}
				}
			}
		}
	}
	if sc.Scan() {
		t.Errorf("%s:%d: trailing %q", path, line+1, sc.Text())
	}
	if want := stats[10]; strconv.Itoa(total)+","+strconv.Itoa(total) != want {
		t.Errorf("%s: %d instructions, stats say %s", path, total, want)
	}
}
