package scanner

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/tracedir"
)

// The scanner's decision, rule by rule of the Traces guide, as a table:
// each row is a trace's walks at given times after the first, and the
// state it is in after each. inspect and look.apply are pure, so every row
// runs in microseconds with an injected clock, and "nothing happens"
// is a state that stays in the table instead of a test that sleeps.

const (
	U = cascade.TraceUploading
	P = cascade.TraceProcessing
	R = cascade.TraceReady
	F = cascade.TraceFailed
	// none: no trace (never one, or removed).
	none cascade.TraceState = ""
)

// testInterval is the guide's scan period.
const testInterval = 2 * time.Second

// walk is one walk of a trace in a row: its files, by slash path, as the
// walk found them, at a time after the row's first walk. Content "-> x"
// is a symlink to x.
type walk struct {
	at    time.Duration
	files map[string]string
}

// perContext is a 2025+ tracer's upload of one CUDA context, less its
// metadata.json: its kernel traces, kernel list and stats.
func perContext() map[string]string {
	return map[string]string{
		"traces/kernel-1-ctx_0x1.trace.xz": strings.Repeat("a", 100),
		"traces/kernel-2-ctx_0x1.trace.xz": strings.Repeat("b", 200),
		"traces/kernelslist_ctx_0x1":       "MemcpyHtoD,0x00007f0000000000,4096\nkernel-1-ctx_0x1.trace.xz\nkernel-2-ctx_0x1.trace.xz\n",
		"traces/stats_ctx_0x1":             "kernel id, kernel mangled name, grid_dimX\nkernel-1-ctx_0x1.trace.xz, _Z1kv, 1\n",
	}
}

// with returns files with the given path, content pairs added (or
// replaced); a path with content "" is left out.
func with(files map[string]string, pairs ...string) map[string]string {
	out := maps.Clone(files)
	for i := 0; i < len(pairs); i += 2 {
		if pairs[i+1] == "" {
			delete(out, pairs[i])
		} else {
			out[pairs[i]] = pairs[i+1]
		}
	}
	return out
}

// meta is a metadata.json with the given fields and, when listed is not
// nil, a files list of listed's paths and sizes.
func meta(fields map[string]any, listed map[string]string) string {
	m := maps.Clone(fields)
	if m == nil {
		m = map[string]any{}
	}
	if listed != nil {
		list := []map[string]any{}
		for _, p := range slices.Sorted(maps.Keys(listed)) {
			list = append(list, map[string]any{"path": p, "size": len(listed[p])})
		}
		m["files"] = list
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// size is the bytes of every file.
func size(files map[string]string) int64 {
	var n int64
	for _, c := range files {
		n += int64(len(c))
	}
	return n
}

func sum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// stored is a trace as the database holds it before the row's walks.
func stored(state cascade.TraceState, metadata string, kernels int) *cascade.Trace {
	t := &cascade.Trace{ID: "t", State: state, TraceGPUArch: cascade.DefaultTraceGPUArch, Prompts: []string{}, Warnings: []string{"old"}, KernelCount: kernels}
	if metadata != "" {
		t.MetadataSum = sum(metadata)
	}
	if state == F {
		t.Error = cascade.Ptr("an earlier failure")
	}
	return t
}

// withCore returns t with the core sum of metadata
// (tracedir.MetadataCoreSum), as a trace stored since schema 18 has it.
func withCore(t *cascade.Trace, metadata string) *cascade.Trace {
	t.MetadataCoreSum = coreSum(metadata)
	return t
}

func coreSum(metadata string) string {
	m, err := tracedir.ParseMetadata([]byte(metadata))
	if err != nil {
		panic(err)
	}
	return tracedir.MetadataCoreSum([]byte(metadata), m)
}

type row struct {
	name       string
	id         string         // the trace's id, its directory's name; "" is "t"
	stored     *cascade.Trace // before the first walk; nil: no trace yet
	realTiming bool           // what see found in the real-timing file
	// writingUntil: the walks before it find the S3 endpoint writing a
	// file of the trace (sight.writing).
	writingUntil time.Duration
	walks        []walk
	want         []cascade.TraceState // after each walk
	err          string               // the error the trace ends with
	why          string               // why it started over, if it did
	check        func(t *testing.T, tr cascade.Trace)
}

func TestDecision(t *testing.T) {
	pc := perContext()
	pcMeta := meta(nil, pc)
	pcList := with(pc, "traces/kernelslist.g", "kernel-1-ctx_0x1.traceg\nkernel-2-ctx_0x1.traceg\n")
	readyMeta := meta(map[string]any{"model": "first"}, pcList)
	ready := with(pcList, "metadata.json", readyMeta) // as the post-processor left it
	streamed := with(pc, "metadata.json", `{"model": "m"}`)
	streamedReady := with(streamed, "traces/kernelslist.g", "kernel-1-ctx_0x1.tracez\nkernel-2-ctx_0x1.tracez\n", "traces/kernelslist_ctx_0x1.g", "k\n",
		"traces/kernel-1-ctx_0x1.tracez", "z1", "traces/kernel-2-ctx_0x1.tracez", "z2")
	halfWritten := `{"model": "m", "files": [{"path": "k", "size": 1}]}`
	oneKernel := map[string]string{"traces/kernel-1-ctx_0x1.trace.xz": strings.Repeat("x", 1000)}
	withFields := with(pc, "metadata.json", meta(map[string]any{"model": "meta-llama/Llama-3.1-8B", "layers": []int{0, 1},
		"prompts": []string{"The capital of France is"}, "gpu": "NVIDIA H100 80GB HBM3", "trace_gpu_arch": "sm_89", "suggested_sim_config": "SM89_RTX4090"}, pc))
	profiled := with(ready, "prof/ncu.csv", "p")
	profiledMeta := meta(map[string]any{"model": "first", "profiles": []string{"prof/ncu.csv"}}, with(pcList, "prof/ncu.csv", "p"))
	forever := []time.Duration{0, testInterval, time.Hour}
	walks := func(files map[string]string, at ...time.Duration) []walk {
		var ws []walk
		for _, a := range at {
			ws = append(ws, walk{a, files})
		}
		return ws
	}

	rows := []row{
		// A trace appears with its first file.
		{name: "first file: a trace, uploading", walks: walks(oneKernel, 0), want: []cascade.TraceState{U},
			check: func(t *testing.T, tr cascade.Trace) {
				if tr.KernelCount != 1 || tr.Bytes != 1000 || tr.TraceGPUArch != "sm_90" || tr.Prompts == nil || tr.Error != nil {
					t.Errorf("first sight: %+v", tr)
				}
			}},
		{name: "uploading: kernel_count and bytes grow on each scan",
			walks: []walk{{0, oneKernel}, {testInterval, with(oneKernel, "traces/kernel-2-ctx_0x1.trace", "yy")}}, want: []cascade.TraceState{U, U},
			check: func(t *testing.T, tr cascade.Trace) {
				if tr.KernelCount != 2 || tr.Bytes != 1002 {
					t.Errorf("kernels %d, bytes %d; want 2, 1002", tr.KernelCount, tr.Bytes)
				}
			}},
		{name: "no file (only dotfiles or directories): no trace", walks: walks(map[string]string{}, 0, testInterval), want: []cascade.TraceState{none, none}},
		{name: "its last file gone: the trace goes", walks: []walk{{0, oneKernel}, {testInterval, map[string]string{}}}, want: []cascade.TraceState{U, none}},
		{name: "a ready trace whose files all went goes", stored: stored(R, readyMeta, 2), walks: walks(map[string]string{}, 0), want: []cascade.TraceState{none}},

		// Uploaded from the wrong folder: never complete, so failed once
		// quiet, and failed it stays.
		{name: "a folder of traces: failed once quiet, and it stays so",
			walks: walks(map[string]string{"t1/metadata.json": `{"model": "m"}`, "t1/traces/kernelslist": "kernel-1.trace\n", "t2/traces/kernel-1.trace": "x"}, 0, testInterval, 2*testInterval, time.Hour),
			want:  []cascade.TraceState{U, F, F, F}, err: "the upload is a folder of 2 traces (t1/, t2/): upload each as a trace of its own, and delete this one (Delete on its page, or removeTrace)"},
		{name: "a trace's traces/ folder, with a metadata.json beside: failed once quiet",
			walks: walks(map[string]string{"metadata.json": `{"model": "m"}`, "kernelslist": "kernel-1.trace\n", "stats.csv": "s", "kernel-1.trace": "x"}, 0, testInterval, time.Hour),
			want:  []cascade.TraceState{U, F, F}, err: "the upload has no traces/ folder, and its kernel traces and lists lie at the top: it was made from a trace's traces/ folder; upload the folder the tracer wrote, the one that holds traces/ and metadata.json, and delete this trace (Delete on its page, or removeTrace)"},
		{name: "a trace's traces/ folder alone: failed once quiet",
			walks: walks(map[string]string{"kernelslist_ctx_0x1": "kernel-1-ctx_0x1.trace\n", "kernel-1-ctx_0x1.trace": "x"}, 0, testInterval),
			want:  []cascade.TraceState{U, F}, err: "the upload has no traces/ folder, and its kernel traces and lists lie at the top: it was made from a trace's traces/ folder; upload the folder the tracer wrote, the one that holds traces/ and metadata.json, and delete this trace (Delete on its page, or removeTrace)"},
		{name: "a trace with a folder beside traces/: not a wrong folder",
			walks: walks(with(streamed, "notes/metadata.json", "{}"), 0, testInterval), want: []cascade.TraceState{U, P}},

		// A trace id longer than the server's work files can be named
		// after (work/postprocess/<id>.running): never processed, so
		// failed once quiet, however complete, and failed it stays.
		{name: "a trace folder name too long for an id: failed once quiet", id: strings.Repeat("x", 248),
			walks: walks(with(pc, "metadata.json", pcMeta), 0, testInterval, time.Hour), want: []cascade.TraceState{U, F, F},
			err: "the trace folder's name is 248 bytes long; a trace id holds at most 247 bytes (the server names its work files after it, such as work/postprocess/<id>.running): upload the trace under a shorter name, and delete this one (Delete on its page, or removeTrace)"},
		{name: "the longest trace id: processed", id: strings.Repeat("x", 247), walks: walks(with(pc, "metadata.json", pcMeta), 0), want: []cascade.TraceState{P}},

		// Complete only once metadata.json exists.
		{name: "no metadata.json: uploading, however complete and quiet", walks: walks(pcList, forever...), want: []cascade.TraceState{U, U, U}},

		// The first rule: a files list, every listed file on disk with its size.
		{name: "files list, every file there with its size: processing at once", walks: walks(with(pc, "metadata.json", pcMeta), 0), want: []cascade.TraceState{P}},
		{name: "files list, a listed file missing: uploading, however quiet",
			walks: walks(with(pc, "metadata.json", meta(nil, with(pc, "traces/kernel-3-ctx_0x1.trace.xz", "c"))), forever...), want: []cascade.TraceState{U, U, U}},
		{name: "files list, a listed file never there: after a quiet while, its warnings say what it waits for",
			walks: walks(with(pc, "metadata.json", meta(nil, with(pc, "traces/kernel-3-ctx_0x1.trace.xz", "c"))), 0, waitingNoteAfter-time.Second, waitingNoteAfter, time.Hour),
			want:  []cascade.TraceState{U, U, U, U},
			check: func(t *testing.T, tr cascade.Trace) {
				want := []string{"metadata.json: waiting for 1 of its 5 listed files: traces/kernel-3-ctx_0x1.trace.xz (listed at 1 bytes) is not there"}
				if !reflect.DeepEqual(tr.ScanWarnings, want) {
					t.Errorf("scan warnings %q, want %q", tr.ScanWarnings, want)
				}
			}},
		{name: "files list, a listed file short: uploading until it is whole",
			walks: append(walks(with(pcList, "metadata.json", meta(nil, pcList), "traces/kernelslist.g", "kernel-1"), forever...),
				walk{time.Hour + time.Second, with(pcList, "metadata.json", meta(nil, pcList))}),
			want: []cascade.TraceState{U, U, U, P}},
		{name: "files list, a listed file longer than listed: uploading",
			walks: walks(with(pc, "metadata.json", pcMeta, "traces/stats_ctx_0x1", pc["traces/stats_ctx_0x1"]+"more\n"), forever...), want: []cascade.TraceState{U, U, U}},
		{name: "files list, a file reached through a link inside the trace: complete",
			walks: walks(map[string]string{"data/k.trace": "12345", "traces/kernel-1.trace": "-> ../data/k.trace",
				"metadata.json": `{"files": [{"path": "traces/kernel-1.trace", "size": 5}]}`}, 0), want: []cascade.TraceState{P}},
		{name: "files list, a link leading outside: failed at once",
			walks: walks(map[string]string{"traces/link": "-> /etc/passwd", "metadata.json": `{"files": [{"path": "traces/link", "size": 5}]}`}, 0),
			want:  []cascade.TraceState{F}, err: `metadata.json: files[0]: "traces/link": resolves outside the trace directory (traces/link -> /etc/passwd)`},
		{name: "files list, a relative link leading outside: failed at once",
			walks: walks(map[string]string{"traces/link": "-> ../../x", "metadata.json": `{"files": [{"path": "traces/link", "size": 5}]}`}, 0),
			want:  []cascade.TraceState{F}, err: `metadata.json: files[0]: "traces/link": resolves outside the trace directory (traces/link -> ../x)`},
		{name: "files list, an absolute path: failed at once",
			walks: walks(map[string]string{"metadata.json": `{"files": [{"path": "/etc/passwd", "size": 1}]}`}, 0),
			want:  []cascade.TraceState{F}, err: `metadata.json: files[0]: "/etc/passwd" is an absolute path`},
		{name: "files list, a .. component: failed at once",
			walks: walks(map[string]string{"metadata.json": `{"files": [{"path": "traces/../../x", "size": 1}]}`}, 0),
			want:  []cascade.TraceState{F}, err: `metadata.json: files[0]: "traces/../../x" has a ".." component`},
		{name: "an upload holding traces/kernelslist.g goes to processing like any other (the post-processor skips it)",
			walks: walks(with(pcList, "metadata.json", meta(nil, pcList)), 0), want: []cascade.TraceState{P}},

		// The second rule: no files list, every kernel list with its stats,
		// and the tree unchanged since the previous scan.
		{name: "streaming, metadata.json alone: uploading, however long", walks: walks(map[string]string{"metadata.json": `{"model": "m"}`}, forever...),
			want: []cascade.TraceState{U, U, U}},
		{name: "streaming, complete and unchanged since the previous scan: processing, not before",
			walks: walks(streamed, 0, testInterval), want: []cascade.TraceState{U, P}},
		{name: "streaming, complete and quiet but a file being written through the S3 endpoint (a multipart upload open): uploading until it is not",
			writingUntil: time.Hour + time.Second, walks: walks(streamed, 0, testInterval, time.Hour, time.Hour+time.Second),
			want: []cascade.TraceState{U, U, U, P}},
		{name: "streaming, the tree changed since the previous scan: uploading",
			walks: []walk{{0, with(streamed, "traces/kernel-2-ctx_0x1.trace.xz", "")}, {testInterval, streamed}, {2 * testInterval, streamed}},
			want:  []cascade.TraceState{U, U, P}},
		{name: "streaming, a file rewritten at the same size counts as a change",
			walks: []walk{{0, streamed}, {testInterval, with(streamed, "traces/stats_ctx_0x1", strings.ToUpper(pc["traces/stats_ctx_0x1"]))}, {2 * testInterval, with(streamed, "traces/stats_ctx_0x1", strings.ToUpper(pc["traces/stats_ctx_0x1"]))}},
			want:  []cascade.TraceState{U, U, P}},
		{name: "streaming, unchanged for the interval less an eighth (the ticker's jitter) is quiet",
			walks: walks(streamed, 0, testInterval-testInterval/8-time.Millisecond, testInterval-testInterval/8), want: []cascade.TraceState{U, U, P}},
		{name: "streaming, a kernel list without its stats: uploading, however long",
			walks: walks(with(streamed, "traces/stats_ctx_0x1", ""), forever...), want: []cascade.TraceState{U, U, U}},
		{name: "streaming, a second context without its stats: uploading",
			walks: walks(with(streamed, "traces/kernelslist_ctx_0x2", "kernel-3-ctx_0x2.trace.xz\n"), forever...), want: []cascade.TraceState{U, U, U}},
		{name: "streaming, no kernel list at all: uploading",
			walks: walks(with(streamed, "traces/kernelslist_ctx_0x1", "", "traces/stats_ctx_0x1", ""), forever...), want: []cascade.TraceState{U, U, U}},
		{name: "single-context names (kernelslist and stats.csv of older tracers): processing",
			walks: walks(map[string]string{"traces/kernel-1.trace": "x", "traces/kernelslist": "kernel-1.trace\n", "traces/stats.csv": "header\n",
				"metadata.json": `{"trace_gpu_arch": "sm_86"}`}, 0, testInterval),
			want: []cascade.TraceState{U, P},
			check: func(t *testing.T, tr cascade.Trace) {
				if tr.TraceGPUArch != "sm_86" || tr.KernelCount != 1 {
					t.Errorf("%+v", tr)
				}
			}},
		{name: "single-context names, kernelslist without stats.csv: uploading",
			walks: walks(map[string]string{"traces/kernel-1.trace": "x", "traces/kernelslist": "kernel-1.trace\n", "metadata.json": `{}`}, forever...),
			want:  []cascade.TraceState{U, U, U}},

		// status "failed": failed straight away, without processing.
		{name: "status failed with an error: failed at once, saying so",
			walks: walks(with(oneKernel, "metadata.json", `{"status": "failed", "error": "CUDA OOM in layer 3"}`), 0),
			want:  []cascade.TraceState{F}, err: `metadata.json: status "failed": CUDA OOM in layer 3`},
		{name: "status failed without an error",
			walks: walks(map[string]string{"metadata.json": `{"status": "failed"}`}, 0), want: []cascade.TraceState{F}, err: `metadata.json: status "failed"`},
		{name: "status failed with a complete files list: failed",
			walks: walks(with(pc, "metadata.json", meta(map[string]any{"status": "failed"}, pc)), 0), want: []cascade.TraceState{F}, err: `metadata.json: status "failed"`},
		{name: "another status is no failure",
			walks: walks(with(pc, "metadata.json", meta(map[string]any{"status": "complete"}, pc)), 0), want: []cascade.TraceState{P}},
		{name: "a processing trace whose metadata.json turns failed fails",
			stored: stored(P, pcMeta, 2),
			walks:  walks(with(pc, "metadata.json", `{"status": "failed", "error": "tracer crashed: SIGSEGV"}`), 0),
			want:   []cascade.TraceState{F}, err: `metadata.json: status "failed": tracer crashed: SIGSEGV`},
		{name: "a ready trace whose metadata.json turns failed starts over and fails",
			stored: stored(R, readyMeta, 2),
			walks:  walks(with(pcList, "metadata.json", meta(map[string]any{"status": "failed"}, pcList)), 0),
			want:   []cascade.TraceState{F}, err: `metadata.json: status "failed"`, why: "metadata.json replaced"},

		// A metadata.json that does not parse fails the trace only once it
		// has stayed the same for a scan: until then it may be half-written.
		{name: "metadata.json that does not parse, first seen: uploading",
			walks: walks(map[string]string{"metadata.json": halfWritten[:9]}, 0), want: []cascade.TraceState{U}},
		{name: "metadata.json written in place in pieces, then whole: never failed",
			walks: []walk{
				{0, map[string]string{"metadata.json": halfWritten[:5]}},
				{testInterval, map[string]string{"metadata.json": halfWritten[:9]}},
				{2 * testInterval, map[string]string{"metadata.json": halfWritten[:13]}},
				{3 * testInterval, map[string]string{"metadata.json": halfWritten[:21]}},
				{4 * testInterval, map[string]string{"metadata.json": halfWritten, "k": "x"}},
			},
			want: []cascade.TraceState{U, U, U, U, P}},
		{name: "metadata.json that does not parse, unchanged for a scan: failed, naming line and column",
			walks: walks(map[string]string{"metadata.json": "{\n  \"model\": \"x\",\n  oops\n}"}, 0, testInterval-time.Second, testInterval),
			want:  []cascade.TraceState{U, U, F}, err: `metadata.json: line 3, column 3: invalid character 'o' looking for beginning of object key string`},
		{name: "metadata.json with a field of the wrong type, unchanged for a scan: failed, naming the field",
			walks: walks(map[string]string{"metadata.json": `{"layers": {"a": 1}}`}, 0, testInterval),
			want:  []cascade.TraceState{U, F}, err: `metadata.json: layers: want a list of integers or a string, got {"a":1}`},
		{name: "metadata.json with a files entry of another shape, unchanged for a scan: failed",
			walks: walks(map[string]string{"metadata.json": `{"files": [{"name": "x"}]}`}, 0, testInterval),
			want:  []cascade.TraceState{U, F}, err: `metadata.json: files[0]: want {"path": string, "size": integer}, got {"name":"x"}`},
		{name: "a processing trace's metadata.json broken: it stays processing",
			stored: stored(P, pcMeta, 2), walks: walks(with(pc, "metadata.json", "{"), 0, testInterval, time.Hour), want: []cascade.TraceState{P, P, P}},

		// Past uploading: the post-processor's writes, later files.
		{name: "a processing trace: the post-processor's writes change its bytes only",
			stored: stored(P, pcMeta, 2),
			walks:  walks(with(pc, "metadata.json", pcMeta, "traces/kernel-1-ctx_0x1.traceg", "gg", "traces/kernelslist.g", "kernel-1-ctx_0x1.traceg\n"), 0),
			want:   []cascade.TraceState{P},
			check: func(t *testing.T, tr cascade.Trace) {
				if tr.KernelCount != 2 || tr.Bytes < 300 {
					t.Errorf("kernels %d, bytes %d", tr.KernelCount, tr.Bytes)
				}
			}},
		{name: "a ready trace stays ready as files arrive; its kernel count is kernelslist.g's; has_step_timeline turns true",
			stored: stored(R, readyMeta, 5), realTiming: true,
			walks: []walk{
				{0, with(ready, "corrected_timeline.json", "{}")},
				{testInterval, with(ready, "corrected_timeline.json", "{}", "kernel_mapping.json", "[]")},
			},
			want: []cascade.TraceState{R, R},
			check: func(t *testing.T, tr cascade.Trace) {
				if tr.KernelCount != 5 || !tr.HasStepTimeline || !tr.HasRealTiming || tr.Warnings[0] != "old" {
					t.Errorf("%+v", tr)
				}
			}},
		{name: "one step-timeline file alone: no step timeline",
			stored: stored(R, readyMeta, 2), walks: walks(with(ready, "kernel_mapping.json", "[]"), 0), want: []cascade.TraceState{R},
			check: func(t *testing.T, tr cascade.Trace) {
				if tr.HasStepTimeline || tr.HasRealTiming {
					t.Errorf("%+v", tr)
				}
			}},

		// Uploaded again: a finished trace starts over.
		{name: "a ready trace that lost traces/kernelslist.g starts over",
			stored: stored(R, meta(nil, pc), 2), walks: walks(with(pc, "metadata.json", meta(nil, pc)), 0),
			want: []cascade.TraceState{P}, why: "traces/kernelslist.g removed"},
		{name: "a ready streamed trace that lost traces/kernelslist.g starts over and waits for a quiet scan",
			stored: stored(R, `{"model": "m"}`, 2), walks: walks(streamed, 0, testInterval),
			want: []cascade.TraceState{U, P}, why: "traces/kernelslist.g removed"},
		{name: "a failed trace without traces/kernelslist.g stays failed",
			stored: stored(F, pcMeta, 0), walks: walks(with(pc, "metadata.json", pcMeta), 0, time.Hour),
			want: []cascade.TraceState{F, F}, err: "an earlier failure"},
		{name: "metadata.json replaced: started over, as the new upload says",
			stored: stored(R, readyMeta, 2),
			walks:  walks(with(ready, "metadata.json", meta(map[string]any{"model": "second"}, with(pc, "traces/kernel-3-ctx_0x1.trace.xz", "ccc")), "traces/kernel-3-ctx_0x1.trace.xz", "ccc"), 0),
			want:   []cascade.TraceState{P}, why: "metadata.json replaced",
			check: func(t *testing.T, tr cascade.Trace) {
				if cascade.Deref(tr.Model) != "second" || tr.KernelCount != 3 || len(tr.Warnings) != 0 || tr.Warnings == nil {
					t.Errorf("%+v", tr)
				}
			}},
		{name: "metadata.json removed: started over, uploading",
			stored: stored(R, readyMeta, 2), walks: walks(pcList, 0, time.Hour), want: []cascade.TraceState{U, U}, why: "metadata.json removed"},
		{name: "metadata.json replaced by one that does not parse: started over, failed once unchanged",
			stored: stored(R, readyMeta, 2), walks: walks(with(ready, "metadata.json", "{"), 0, testInterval), want: []cascade.TraceState{U, F},
			why: "metadata.json replaced", err: "metadata.json: line 1, column 1: unexpected end of JSON input"},
		{name: "a failed trace uploaded again starts over",
			stored: stored(F, `{"status": "failed"}`, 0), walks: walks(with(pc, "metadata.json", pcMeta), 0),
			want: []cascade.TraceState{P}, why: "metadata.json replaced"},
		{name: "the same metadata.json: a ready trace stays ready", stored: stored(R, readyMeta, 2), walks: walks(ready, forever...),
			want: []cascade.TraceState{R, R, R}},
		{name: "a trace stored before metadata sums were kept adopts its metadata.json's",
			stored: stored(R, "", 2), walks: walks(ready, 0), want: []cascade.TraceState{R},
			check: func(t *testing.T, tr cascade.Trace) {
				if tr.MetadataSum != sum(readyMeta) {
					t.Errorf("metadata sum %q", tr.MetadataSum)
				}
			}},
		// Issue 32: a data file changed after the trace completed, with
		// the same metadata.json (aws s3 cp of a changed kernel trace).
		{name: "a data file rewritten after ready, the same metadata.json: started over, post-processed again, and says so",
			stored: stored(R, readyMeta, 2),
			walks:  []walk{{0, ready}, {testInterval, with(ready, "traces/kernel-1-ctx_0x1.trace.xz", strings.Repeat("z", 100))}},
			want:   []cascade.TraceState{R, P}, why: FilesChangedNote + " (traces/kernel-1-ctx_0x1.trace.xz)",
			check: func(t *testing.T, tr cascade.Trace) {
				if len(tr.ScanWarnings) != 1 || !strings.HasPrefix(tr.ScanWarnings[0], FilesChangedNote+" (traces/kernel-1-ctx_0x1.trace.xz); post-processed again") ||
					!strings.Contains(tr.ScanWarnings[0], "traceSum") {
					t.Errorf("scan warnings %q", tr.ScanWarnings)
				}
				if tr.UploadSum == "" || tr.MetadataSum != sum(readyMeta) {
					t.Errorf("sums not those of the upload complete again: %+v", tr)
				}
			}},
		{name: "a data file rewritten after ready while the S3 endpoint still writes it: decided once the write ends",
			stored: stored(R, readyMeta, 2), writingUntil: 2 * testInterval,
			walks: []walk{{0, ready}, {testInterval, with(ready, "traces/kernel-1-ctx_0x1.trace.xz", strings.Repeat("z", 100))},
				{2 * testInterval, with(ready, "traces/kernel-1-ctx_0x1.trace.xz", strings.Repeat("z", 100))}},
			want: []cascade.TraceState{R, R, P}, why: FilesChangedNote + " (traces/kernel-1-ctx_0x1.trace.xz)"},
		{name: "a data file rewritten while the trace is processing: started over at once, never ready on the earlier files",
			walks: []walk{{0, with(pc, "metadata.json", pcMeta)}, {testInterval, with(pc, "metadata.json", pcMeta, "traces/kernel-1-ctx_0x1.trace.xz", strings.Repeat("z", 100))}},
			want:  []cascade.TraceState{P, P}, why: FilesChangedDuringNote + " (traces/kernel-1-ctx_0x1.trace.xz)",
			check: func(t *testing.T, tr cascade.Trace) {
				if len(tr.ScanWarnings) != 1 || tr.ScanWarnings[0] != FilesChangedDuringNote+" (traces/kernel-1-ctx_0x1.trace.xz); post-processed again" {
					t.Errorf("scan warnings %q", tr.ScanWarnings)
				}
			}},
		{name: "a processing trace whose data file the S3 endpoint still writes: decided once the write ends",
			writingUntil: 2 * testInterval,
			walks: []walk{{0, with(pc, "metadata.json", pcMeta)}, {testInterval, with(pc, "metadata.json", pcMeta, "traces/kernel-1-ctx_0x1.trace.xz", strings.Repeat("z", 100))},
				{2 * testInterval, with(pc, "metadata.json", pcMeta, "traces/kernel-1-ctx_0x1.trace.xz", strings.Repeat("z", 100))}},
			want: []cascade.TraceState{P, P, P}, why: FilesChangedDuringNote + " (traces/kernel-1-ctx_0x1.trace.xz)"},
		{name: "a listed data file removed after ready: started over, uploading until it is back",
			stored: stored(R, readyMeta, 2),
			walks:  []walk{{0, ready}, {testInterval, with(ready, "traces/stats_ctx_0x1", "")}, {time.Hour, with(ready, "traces/stats_ctx_0x1", "")}},
			want:   []cascade.TraceState{R, U, U}, why: FilesChangedNote + " (traces/stats_ctx_0x1 gone)"},
		{name: "a streamed trace's data file rewritten after ready: started over, processing once quiet",
			stored: stored(R, `{"model": "m"}`, 2),
			walks: []walk{{0, with(streamed, "traces/kernelslist.g", "k\n")}, {testInterval, with(streamed, "traces/kernelslist.g", "k\n", "traces/stats_ctx_0x1", strings.ToUpper(pc["traces/stats_ctx_0x1"]))},
				{2 * testInterval, with(streamed, "traces/kernelslist.g", "k\n", "traces/stats_ctx_0x1", strings.ToUpper(pc["traces/stats_ctx_0x1"]))}},
			want: []cascade.TraceState{R, U, P}, why: FilesChangedNote + " (traces/stats_ctx_0x1)"},
		// QA: a file of an upload without a files list deleted after
		// ready was blamed on the file modified last.
		{name: "a streamed trace's kernel trace deleted after ready: named gone",
			stored: stored(R, `{"model": "m"}`, 2),
			walks:  []walk{{0, streamedReady}, {testInterval, with(streamedReady, "traces/kernel-2-ctx_0x1.trace.xz", "")}},
			want:   []cascade.TraceState{R, U}, why: FilesChangedNote + " (traces/kernel-2-ctx_0x1.trace.xz gone)"},
		{name: "a streamed trace's stats file and raw list deleted after ready: named gone",
			stored: stored(R, `{"model": "m"}`, 2),
			walks:  []walk{{0, streamedReady}, {testInterval, with(streamedReady, "traces/stats_ctx_0x1", "", "traces/kernelslist_ctx_0x1", "")}},
			want:   []cascade.TraceState{R, U}, why: FilesChangedNote + " (traces/kernelslist_ctx_0x1 and 1 more gone)"},
		{name: "a streamed trace's kernel traces deleted while the S3 endpoint writes: named gone once the write ends",
			stored: stored(R, `{"model": "m"}`, 2), writingUntil: 2 * testInterval,
			walks: []walk{{0, streamedReady}, {testInterval, with(streamedReady, "traces/kernel-1-ctx_0x1.trace.xz", "", "traces/kernel-2-ctx_0x1.trace.xz", "")},
				{2 * testInterval, with(streamedReady, "traces/kernel-1-ctx_0x1.trace.xz", "", "traces/kernel-2-ctx_0x1.trace.xz", "")}},
			want: []cascade.TraceState{R, R, P}, why: FilesChangedNote + " (traces/kernel-1-ctx_0x1.trace.xz and 1 more gone)"},
		{name: "a streamed trace's stats file deleted while it is processing: named gone",
			walks: []walk{{0, streamed}, {testInterval, streamed}, {2 * testInterval, with(streamed, "traces/stats_ctx_0x1", "")}},
			want:  []cascade.TraceState{U, P, U}, why: FilesChangedDuringNote + " (traces/stats_ctx_0x1 gone)"},
		{name: "a streamed trace's kernel trace deleted before it was processed: counted gone, as nothing names it",
			walks: []walk{{0, streamed}, {testInterval, streamed}, {2 * testInterval, with(streamed, "traces/kernel-2-ctx_0x1.trace.xz", "")}},
			want:  []cascade.TraceState{U, P, U}, why: FilesChangedDuringNote + " (1 data file gone)"},
		{name: "the post-processor's writes (processed traces, kernel lists .g) and files beside the files list leave a ready trace ready",
			stored: stored(R, readyMeta, 2),
			walks: []walk{{0, ready}, {testInterval, with(ready, "traces/kernel-1-ctx_0x1.traceg", "processed", "traces/kernelslist_ctx_0x1.g", "kernel-1-ctx_0x1.traceg\n")},
				{2 * testInterval, with(ready, "traces/kernel-1-ctx_0x1.traceg", "processed again", "traces/kernelslist.g", "kernel-1-ctx_0x1.tracez\n", "traces/kernel-9-ctx_0x1.trace", "x", "notes.txt", "n")}},
			want: []cascade.TraceState{R, R, R}},
		{name: "a failed trace's data file changed: failed until retried (its error says to fix the files, then Retry)",
			stored: stored(F, pcMeta, 0),
			walks:  []walk{{0, with(pc, "metadata.json", pcMeta)}, {testInterval, with(pc, "metadata.json", pcMeta, "traces/kernel-1-ctx_0x1.trace.xz", strings.Repeat("z", 100))}},
			want:   []cascade.TraceState{F, F}, err: "an earlier failure"},
		{name: "a trace stored before upload sums were kept adopts its files'",
			stored: stored(R, readyMeta, 2), walks: walks(ready, 0), want: []cascade.TraceState{R},
			check: func(t *testing.T, tr cascade.Trace) {
				if tr.UploadSum == "" || len(tr.ScanWarnings) != 0 {
					t.Errorf("upload sum %q, scan warnings %q", tr.UploadSum, tr.ScanWarnings)
				}
			}},
		// Issue 33: a ready trace's profiles alone changed are read again
		// (ProfilesChanged, servertests/scanner_profiles_test.go); it stays ready.
		{name: "metadata.json replaced naming profiles (and listing them) alone: stays ready",
			stored: withCore(stored(R, readyMeta, 2), readyMeta),
			walks:  walks(with(profiled, "metadata.json", profiledMeta), 0, time.Hour), want: []cascade.TraceState{R, R},
			check: func(t *testing.T, tr cascade.Trace) {
				if tr.MetadataSum != sum(profiledMeta) || tr.MetadataCoreSum != coreSum(readyMeta) || tr.UploadSum == "" {
					t.Errorf("sums %q %q %q", tr.MetadataSum, tr.MetadataCoreSum, tr.UploadSum)
				}
			}},
		{name: "a trace stored before metadata core sums were kept adopts one, then stays ready when its profiles change",
			stored: stored(R, readyMeta, 2),
			walks:  []walk{{0, ready}, {time.Hour, with(profiled, "metadata.json", profiledMeta)}}, want: []cascade.TraceState{R, R}},
		{name: "metadata.json replaced naming profiles and changing more: started over",
			stored: withCore(stored(R, readyMeta, 2), readyMeta),
			walks:  walks(with(profiled, "metadata.json", meta(map[string]any{"model": "second", "profiles": "prof/ncu.csv"}, with(pcList, "prof/ncu.csv", "p"))), 0),
			want:   []cascade.TraceState{P}, why: "metadata.json replaced"},
		// Issue 32: metadata.json values of an unexpected shape.
		{name: "layers a string and suggested_sim_config blank: warned, naming the field, and processed",
			walks: walks(with(pc, "metadata.json", meta(map[string]any{"layers": "0-3", "suggested_sim_config": " "}, pc)), 0), want: []cascade.TraceState{P},
			check: func(t *testing.T, tr cascade.Trace) {
				want := []string{
					`metadata.json: layers: want a list of layer numbers such as [0, 1, 2, 3], got the string "0-3"; shown as given`,
					`metadata.json: suggested_sim_config: want the name of a tested config such as "SM90_H100", got " "; the New run screen preselects the first compatible config instead`,
				}
				if !slices.Equal(tr.ScanWarnings, want) || cascade.Deref(tr.Layers) != "0-3" || tr.Error != nil {
					t.Errorf("scan warnings %q, want %q; %+v", tr.ScanWarnings, want, tr)
				}
			}},
		{name: "a processing trace with a new metadata.json stays processing (the post-processor has it)",
			stored: stored(P, pcMeta, 2), walks: walks(with(pc, "metadata.json", meta(map[string]any{"model": "x"}, pc)), 0), want: []cascade.TraceState{P}},

		// Where the fields come from.
		{name: "metadata.json's fields, and bytes of every file", walks: walks(withFields, 0), want: []cascade.TraceState{P},
			check: func(t *testing.T, tr cascade.Trace) {
				if cascade.Deref(tr.Model) != "meta-llama/Llama-3.1-8B" || cascade.Deref(tr.Layers) != "[0, 1]" || !slices.Equal(tr.Prompts, []string{"The capital of France is"}) ||
					cascade.Deref(tr.SourceGPU) != "NVIDIA H100 80GB HBM3" || tr.TraceGPUArch != "sm_89" || cascade.Deref(tr.SuggestedSimConfig) != "SM89_RTX4090" {
					t.Errorf("%+v", tr)
				}
				if want := size(withFields); tr.Bytes != want {
					t.Errorf("bytes %d, want %d", tr.Bytes, want)
				}
			}},
	}
	playRows(t, rows)
}
