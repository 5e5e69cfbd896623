package upload

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cascade-sim/cascade/testkit"
)

// readTree returns every file under root by slash path, dotfiles included.
func readTree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		out[filepath.ToSlash(rel)] = string(data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// readMetadata decodes dest's metadata.json into its files list and the
// other fields.
func readMetadata(t *testing.T, dest string) ([]File, map[string]any) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dest, "metadata.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Files []File `json:"files"`
	}
	var all map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("metadata.json: %v\n%s", err, data)
	}
	if err := json.Unmarshal(data, &all); err != nil {
		t.Fatal(err)
	}
	delete(all, "files")
	return doc.Files, all
}

const sourceMetadata = `{
  "run_name": "llama-layer0",
  "model": "meta-llama/Llama-3.1-8B",
  "layers": "0-3",
  "prompts": ["The capital of France is", "Hello"],
  "gpu": "NVIDIA H100 80GB HBM3",
  "trace_gpu_arch": "sm_90",
  "profiler": {"version": "2.1", "threshold": 1.50, "big": 12345678901234567890},
  "files": [{"path": "stale", "size": 1}],
  "status": "uploading"
}
`

func TestUploadComplete(t *testing.T) {
	src, prefix := t.TempDir(), t.TempDir()
	big := strings.Repeat("0123456789abcdef", 3<<16) // 3 MiB: several copy buffers
	testkit.WriteTree(t, src, map[string]string{
		"metadata.json":                         sourceMetadata,
		"traces/kernel-1-ctx_0x1.trace":         big,
		"traces/kernel-2-ctx_0x1.trace":         "",
		"traces/kernelslist_ctx_0x1":            "kernel-1-ctx_0x1.trace\nkernel-2-ctx_0x1.trace\n",
		"traces/stats_ctx_0x1":                  "kernel id, ...\n",
		"real_timing.json":                      `[{"kernel_id": 1}]`,
		"traces/sub dir/naïve name with spaces": "x",
	})
	var order []string
	res, err := Upload(context.Background(), Options{Source: src, PrefixDir: prefix, renamed: func(rel string) { order = append(order, rel) }})
	if err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(prefix, "llama-layer0")
	if res.Dest != dest || res.RunName != "llama-layer0" || res.Copied != 6 || res.Skipped != 0 {
		t.Errorf("result = %+v", res)
	}

	got, want := readTree(t, dest), readTree(t, src)
	delete(got, "metadata.json")
	delete(want, "metadata.json")
	if !reflect.DeepEqual(got, want) {
		t.Errorf("destination differs from source: have %d files, want %d", len(got), len(want))
	}

	files, fields := readMetadata(t, dest)
	wantFiles := []File{
		{"real_timing.json", 18},
		{"traces/kernel-1-ctx_0x1.trace", int64(len(big))},
		{"traces/kernel-2-ctx_0x1.trace", 0},
		{"traces/kernelslist_ctx_0x1", 46},
		{"traces/stats_ctx_0x1", 15},
		{"traces/sub dir/naïve name with spaces", 1},
	}
	if !reflect.DeepEqual(files, wantFiles) || !reflect.DeepEqual(res.Files, wantFiles) {
		t.Errorf("files = %v, want %v", files, wantFiles)
	}
	var wantFields map[string]any
	json.Unmarshal([]byte(sourceMetadata), &wantFields)
	delete(wantFields, "files")
	if !reflect.DeepEqual(fields, wantFields) {
		t.Errorf("metadata fields = %v, want %v", fields, wantFields)
	}
	data, _ := os.ReadFile(filepath.Join(dest, "metadata.json"))
	for _, s := range []string{`"threshold":1.50`, `"big":12345678901234567890`} {
		if !bytes.Contains(data, []byte(s)) {
			t.Errorf("metadata.json lost the spelling %s:\n%s", s, data)
		}
	}
	m, _ := parseMetadata(data)
	var keys []string
	for _, f := range m.fields {
		keys = append(keys, f.key)
	}
	if want := []string{"run_name", "model", "layers", "prompts", "gpu", "trace_gpu_arch", "profiler", "files", "status"}; !slices.Equal(keys, want) {
		t.Errorf("key order = %v, want %v", keys, want)
	}

	if len(order) != 7 || order[len(order)-1] != "metadata.json" {
		t.Errorf("files reached their names in the order %v; want metadata.json last", order)
	}
}

func TestUploadWithoutMetadata(t *testing.T) {
	src := filepath.Join(t.TempDir(), "my-run")
	testkit.WriteTree(t, src, map[string]string{"traces/kernelslist": "kernel-1.trace\n", "traces/kernel-1.trace": "abc"})
	dest := filepath.Join(t.TempDir(), "elsewhere")
	res, err := Upload(context.Background(), Options{Source: src, Dest: dest})
	if err != nil {
		t.Fatal(err)
	}
	if res.Dest != dest || res.RunName != "my-run" {
		t.Errorf("result = %+v", res)
	}
	data, _ := os.ReadFile(filepath.Join(dest, "metadata.json"))
	want := `{
  "run_name": "my-run",
  "files": [
    {"path": "traces/kernel-1.trace", "size": 3},
    {"path": "traces/kernelslist", "size": 15}
  ]
}
`
	if string(data) != want {
		t.Errorf("metadata.json =\n%s\nwant\n%s", data, want)
	}
}

func TestUploadResume(t *testing.T) {
	src, dest := t.TempDir(), filepath.Join(t.TempDir(), "run")
	testkit.WriteTree(t, src, map[string]string{
		"metadata.json":      `{"model": "m"}`,
		"traces/done":        "complete",
		"traces/truncated":   "all of it",
		"traces/in-flight":   "was being copied",
		"traces/not-started": "never reached",
	})
	testkit.WriteTree(t, dest, map[string]string{
		"traces/done":                          "COMPLETE", // right size and time (below): must be kept, not recopied
		"traces/truncated":                     "all",
		"traces/.cascade_upload_in-flight.tmp": "was be",
		"traces/.cascade_upload_done.tmp":      "stale temp of a file that finished later",
		".cascade_upload_metadata.json.tmp":    "{",
	})
	// An earlier copy gave "done" the source's time, as copyFile does.
	fi, err := os.Stat(filepath.Join(src, "traces", "done"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(filepath.Join(dest, "traces", "done"), fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	res, err := Upload(context.Background(), Options{Source: src, Dest: dest})
	if err != nil {
		t.Fatal(err)
	}
	if res.Copied != 3 || res.Skipped != 1 {
		t.Errorf("copied %d, skipped %d; want 3 and 1", res.Copied, res.Skipped)
	}
	got := readTree(t, dest)
	delete(got, "metadata.json")
	want := map[string]string{
		"traces/done":        "COMPLETE",
		"traces/truncated":   "all of it",
		"traces/in-flight":   "was being copied",
		"traces/not-started": "never reached",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("destination = %v, want %v (no temporary files)", got, want)
	}
	if files, _ := readMetadata(t, dest); len(files) != 4 {
		t.Errorf("files = %v", files)
	}
}

func TestUploadRefusesOverwrite(t *testing.T) {
	tree := map[string]string{"metadata.json": `{"model": "m"}`, "traces/a": "aaaa", "traces/b": "bb"}
	for _, tc := range []struct {
		name     string
		dest     map[string]string // files already at the destination
		complete bool              // upload the source once before writing dest
		wantMsg  string
	}{
		{name: "complete upload", complete: true, wantMsg: "a complete upload of 2 files"},
		{name: "metadata without files list", dest: map[string]string{"metadata.json": `{}`, "traces/a": "aaaa"}, wantMsg: "no files list"},
		{name: "file not in source", dest: map[string]string{"traces/a": "aaaa", "traces/zzz": "z"}, wantMsg: "traces/zzz"},
		{name: "file larger than source", dest: map[string]string{"traces/b": "bbbbbb"}, wantMsg: "traces/b is 6 bytes there but 2 bytes in the source"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src, dest := t.TempDir(), filepath.Join(t.TempDir(), "run")
			testkit.WriteTree(t, src, tree)
			if tc.complete {
				if _, err := Upload(context.Background(), Options{Source: src, Dest: dest}); err != nil {
					t.Fatal(err)
				}
			}
			testkit.WriteTree(t, dest, tc.dest)
			// Another tool wrote these files earlier: their times are not
			// the source's. Written within one clock tick of the source,
			// they could share its times and pass as uploaded by us.
			earlier := time.Now().Add(-time.Hour)
			for rel := range tc.dest {
				if err := os.Chtimes(filepath.Join(dest, filepath.FromSlash(rel)), earlier, earlier); err != nil {
					t.Fatal(err)
				}
			}
			before := readTree(t, dest)

			_, err := Upload(context.Background(), Options{Source: src, Dest: dest})
			if !errors.Is(err, ErrExists) || !strings.Contains(err.Error(), tc.wantMsg) {
				t.Fatalf("err = %v; want ErrExists mentioning %q", err, tc.wantMsg)
			}
			if after := readTree(t, dest); !reflect.DeepEqual(after, before) {
				t.Errorf("a refused upload changed the destination: %v -> %v", before, after)
			}

			res, err := Upload(context.Background(), Options{Source: src, Dest: dest, Force: true})
			if err != nil {
				t.Fatal(err)
			}
			got := readTree(t, dest)
			delete(got, "metadata.json")
			if want := map[string]string{"traces/a": "aaaa", "traces/b": "bb"}; !reflect.DeepEqual(got, want) {
				t.Errorf("after --force the destination is %v, want %v", got, want)
			}
			wantCopied := 2
			if tc.complete && tc.dest == nil {
				wantCopied = 0 // the same upload again: only metadata.json is written (TestForceSameUpload)
			}
			if res.Copied != wantCopied || res.Skipped != 2-wantCopied {
				t.Errorf("--force copied %d, skipped %d; want %d copied", res.Copied, res.Skipped, wantCopied)
			}
		})
	}
}

func TestUploadNestedAndDotfiles(t *testing.T) {
	src, dest := t.TempDir(), filepath.Join(t.TempDir(), "run")
	testkit.WriteTree(t, src, map[string]string{
		"metadata.json":                    `{}`,
		".hidden":                          "no",
		".git/config":                      "no",
		"traces/.rclone_temp_put_kernel-9": "no",
		"traces/a/b/c/kernel-1.trace.xz":   "deep",
		"traces/a/.cache/x":                "no",
		"traces/a/b/notes.txt":             "yes",
		"extra/metadata.json":              "a nested metadata.json is data",
	})
	res, err := Upload(context.Background(), Options{Source: src, Dest: dest, RunName: "nested"})
	if err != nil {
		t.Fatal(err)
	}
	want := []File{{"extra/metadata.json", 30}, {"traces/a/b/c/kernel-1.trace.xz", 4}, {"traces/a/b/notes.txt", 3}}
	if files, _ := readMetadata(t, dest); !reflect.DeepEqual(files, want) || !reflect.DeepEqual(res.Files, want) {
		t.Errorf("files = %v, want %v", files, want)
	}
	got := readTree(t, dest)
	for rel := range got {
		if strings.Contains("/"+rel, "/.") {
			t.Errorf("dotfile %s was uploaded", rel)
		}
	}
	if len(got) != 4 {
		t.Errorf("destination holds %v", got)
	}
}

func TestRunName(t *testing.T) {
	for _, tc := range []struct {
		name, runName, metadata, wantErr string
	}{
		{name: "OK", runName: "llama3-8b_layer0.h100"},
		{name: "ErrEmpty", metadata: `{"run_name": ""}`, runName: "", wantErr: ""}, // falls back to the directory name
		{name: "ErrSlash", runName: "a/b", wantErr: "slash"},
		{name: "ErrBackslash", runName: `a\b`, wantErr: "slash"},
		{name: "ErrDot", runName: ".hidden", wantErr: "dot"},
		{name: "ErrDotDot", runName: "..", wantErr: "dot"},
		{name: "ErrControl", runName: "a\nb", wantErr: "control"},
		{name: "ErrLong", runName: strings.Repeat("x", 256), wantErr: "at most 247"},
		{name: "ErrLongerThanAnID", runName: strings.Repeat("x", 248), wantErr: "run name \"xxxxxxxxxxxxxxxxxxxx\"… is 248 bytes long; a trace id holds at most 247"},
		{name: "LongestID", runName: strings.Repeat("x", 247)},
		{name: "ErrMetadataSlash", metadata: `{"run_name": "../escape"}`, wantErr: "slash"},
		{name: "ErrMetadataNotString", metadata: `{"run_name": 7}`, wantErr: "run_name: want a string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src, prefix := filepath.Join(t.TempDir(), "dirname"), t.TempDir()
			testkit.WriteTree(t, src, map[string]string{"f": "x"})
			if tc.metadata != "" {
				testkit.WriteTree(t, src, map[string]string{"metadata.json": tc.metadata})
			}
			res, err := Upload(context.Background(), Options{Source: src, PrefixDir: prefix, RunName: tc.runName})
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if want := filepath.Join(prefix, filepath.Base(res.RunName)); res.Dest != want {
					t.Errorf("dest = %s, want %s", res.Dest, want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want one mentioning %q", err, tc.wantErr)
			}
			if entries, _ := os.ReadDir(prefix); len(entries) != 0 {
				t.Errorf("a rejected run name wrote %v", entries)
			}
		})
	}
	if err := ValidRunName("dirname"); err != nil {
		t.Error(err)
	}
}

func TestUploadSymlinks(t *testing.T) {
	outside := t.TempDir()
	testkit.WriteTree(t, outside, map[string]string{"big.trace": "kernel bytes", "dir/x": "x"})

	t.Run("OK", func(t *testing.T) {
		src, dest := t.TempDir(), filepath.Join(t.TempDir(), "run")
		testkit.WriteTree(t, src, map[string]string{"traces/real/k.trace": "inside"})
		mustSymlink(t, filepath.Join(outside, "big.trace"), filepath.Join(src, "traces/kernel-1.trace"))
		mustSymlink(t, "real", filepath.Join(src, "traces/alias"))
		if _, err := Upload(context.Background(), Options{Source: src, Dest: dest}); err != nil {
			t.Fatal(err)
		}
		got := readTree(t, dest)
		if got["traces/kernel-1.trace"] != "kernel bytes" || got["traces/alias/k.trace"] != "inside" {
			t.Errorf("destination = %v", got)
		}
		if fi, _ := os.Lstat(filepath.Join(dest, "traces/kernel-1.trace")); fi.Mode()&os.ModeSymlink != 0 {
			t.Error("a symlink was copied as a symlink, not as its file")
		}
	})
	for _, tc := range []struct{ name, target, wantErr string }{
		{name: "ErrDirOutside", target: filepath.Join(outside, "dir"), wantErr: "traces/link: symlink to directory " + outside},
		{name: "ErrLoop", target: "..", wantErr: "loops"},
		{name: "ErrBroken", target: "nothing-here", wantErr: "traces/link: broken symlink"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src, dest := t.TempDir(), filepath.Join(t.TempDir(), "run")
			testkit.WriteTree(t, src, map[string]string{"traces/k": "k"})
			mustSymlink(t, tc.target, filepath.Join(src, "traces/link"))
			_, err := Upload(context.Background(), Options{Source: src, Dest: dest})
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
			}
			if _, err := os.Stat(dest); err == nil {
				t.Error("a refused upload created the destination")
			}
		})
	}
}

func mustSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func TestUploadDestIsSymlink(t *testing.T) {
	src, real := t.TempDir(), t.TempDir()
	testkit.WriteTree(t, src, map[string]string{"traces/a": "aaaa"})
	testkit.WriteTree(t, real, map[string]string{"traces/a": "aa"}) // an interrupted upload
	dest := filepath.Join(t.TempDir(), "run")
	mustSymlink(t, real, dest)
	if _, err := Upload(context.Background(), Options{Source: src, Dest: dest}); err != nil {
		t.Fatal(err)
	}
	if got := readTree(t, real); got["traces/a"] != "aaaa" || got["metadata.json"] == "" {
		t.Errorf("linked destination = %v", got)
	}
}

func TestUploadDestInsideSource(t *testing.T) {
	src := t.TempDir()
	testkit.WriteTree(t, src, map[string]string{"f": "x"})
	_, err := Upload(context.Background(), Options{Source: src, Dest: filepath.Join(src, "out", "run")})
	if err == nil || !strings.Contains(err.Error(), "inside the source") {
		t.Fatalf("err = %v", err)
	}
}

// TestUploadCancel cancels in the middle of a file, as Ctrl-C would, and
// checks that nothing but complete files carry real names, then resumes.
func TestUploadCancel(t *testing.T) {
	src, dest := t.TempDir(), filepath.Join(t.TempDir(), "run")
	big := strings.Repeat("x", 5*copyBuffer)
	testkit.WriteTree(t, src, map[string]string{"metadata.json": `{}`, "traces/1-small": "small", "traces/2-big": big, "traces/3-after": "after"})
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	now := func() time.Time {
		calls++
		if calls == 4 { // the start, the small file, then 2 MiB into the big one
			cancel()
		}
		return time.Unix(0, 0)
	}
	_, err := Upload(ctx, Options{Source: src, Dest: dest, now: now})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	got := readTree(t, dest)
	if want := map[string]string{"traces/1-small": "small"}; !reflect.DeepEqual(got, want) {
		t.Errorf("after cancel the destination holds %d files %v; want only the complete one", len(got), slices.Sorted(maps.Keys(got)))
	}

	res, err := Upload(context.Background(), Options{Source: src, Dest: dest})
	if err != nil {
		t.Fatal(err)
	}
	if res.Skipped != 1 || res.Copied != 2 || readTree(t, dest)["traces/2-big"] != big {
		t.Errorf("resume: %+v", res)
	}
}

func TestUploadErrorsNameTheFile(t *testing.T) {
	t.Run("ErrBadMetadata", func(t *testing.T) {
		src := t.TempDir()
		testkit.WriteTree(t, src, map[string]string{"metadata.json": "{\n  \"model\": \"m\",\n  \"layers\": [0,\n}\n"})
		_, err := Upload(context.Background(), Options{Source: src, Dest: filepath.Join(t.TempDir(), "r")})
		if err == nil || !strings.Contains(err.Error(), "metadata.json: line 4") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("ErrUnreadable", func(t *testing.T) {
		if os.Geteuid() == 0 {
			t.Skip("root reads any file")
		}
		src := t.TempDir()
		testkit.WriteTree(t, src, map[string]string{"traces/secret": "x"})
		os.Chmod(filepath.Join(src, "traces/secret"), 0)
		_, err := Upload(context.Background(), Options{Source: src, Dest: filepath.Join(t.TempDir(), "r")})
		if err == nil || !strings.Contains(err.Error(), "traces/secret") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("ErrFIFO", func(t *testing.T) {
		src := t.TempDir()
		if err := syscall.Mkfifo(filepath.Join(src, "pipe"), 0o644); err != nil {
			t.Skip(err)
		}
		_, err := Upload(context.Background(), Options{Source: src, Dest: filepath.Join(t.TempDir(), "r")})
		if err == nil || !strings.Contains(err.Error(), "pipe: not a regular file") {
			t.Fatalf("err = %v", err)
		}
	})
}

// TestForceSameUpload: --force onto the very upload already there (its
// data files at their sizes and times) with the post-processor's files
// beside them keeps them all and rewrites metadata.json alone, so the
// trace is not processed again (QA: it deleted the processed files and
// copied every file again). A data file changed since, or a file of an
// earlier upload beside them, and it starts over: the processed files go,
// and the files changed since are copied again, not the others.
func TestForceSameUpload(t *testing.T) {
	tree := map[string]string{"metadata.json": `{"model": "m"}`, "traces/kernel-1.trace": "k1 lines", "traces/kernelslist": "kernel-1.trace\n", "traces/stats.csv": "s"}
	processed := map[string]string{"traces/kernelslist.g": "-trace = kernel-1.traceg\n", "traces/kernel-1.traceg": "processed"}
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, src, dest string)
		again  bool
		copied int // when not again: the files copied again
	}{
		{"the same upload", func(*testing.T, string, string) {}, true, 0},
		{"another model in metadata.json", func(t *testing.T, src, _ string) {
			testkit.WriteTree(t, src, map[string]string{"metadata.json": `{"model": "other"}`})
		}, true, 0},
		{"a data file changed", func(t *testing.T, src, _ string) {
			later := time.Now().Add(time.Hour)
			if err := os.Chtimes(filepath.Join(src, "traces", "kernel-1.trace"), later, later); err != nil {
				t.Fatal(err)
			}
		}, false, 1},
		{"an earlier upload's kernel beside it", func(t *testing.T, _, dest string) {
			testkit.WriteTree(t, dest, map[string]string{"traces/kernel-9.trace": "old"})
		}, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src, dest := t.TempDir(), filepath.Join(t.TempDir(), "run")
			testkit.WriteTree(t, src, tree)
			if _, err := Upload(context.Background(), Options{Source: src, Dest: dest}); err != nil {
				t.Fatal(err)
			}
			testkit.WriteTree(t, dest, processed)
			data := filepath.Join(dest, "traces", "kernel-1.trace")
			before, err := os.Stat(data)
			if err != nil {
				t.Fatal(err)
			}
			tc.change(t, src, dest)

			res, err := Upload(context.Background(), Options{Source: src, Dest: dest, Force: true})
			if err != nil {
				t.Fatal(err)
			}
			got := readTree(t, dest)
			meta, _ := os.ReadFile(filepath.Join(src, "metadata.json"))
			if !strings.Contains(got["metadata.json"], strings.Trim(string(meta), "{}")) {
				t.Errorf("metadata.json is %q, want the source's fields", got["metadata.json"])
			}
			after, err := os.Stat(data)
			if err != nil {
				t.Fatal(err)
			}
			kept := got["traces/kernelslist.g"] != "" && got["traces/kernel-1.traceg"] != ""
			if tc.again {
				if !kept || res.Copied != 0 || res.Removed != 0 || !os.SameFile(before, after) {
					t.Errorf("the same upload forced: processed files kept %v, %d copied, %d removed, data file replaced %v; want kept, none, none, no",
						kept, res.Copied, res.Removed, !os.SameFile(before, after))
				}
				return
			}
			// Only what changed is copied again (QA: every file was).
			if kept || res.Copied != tc.copied || res.Skipped != 3-tc.copied {
				t.Errorf("a changed upload forced: processed files kept %v, %d copied, %d skipped; want gone, %d copied", kept, res.Copied, res.Skipped, tc.copied)
			}
		})
	}
}
