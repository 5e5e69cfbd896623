package upload

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cascade-sim/cascade"
)

// ErrExists is wrapped by the error [Upload] returns when the destination
// already holds a different or complete trace and [Options.Force] is false.
var ErrExists = errors.New("upload: destination already holds a trace")

const (
	tempPrefix = ".cascade_upload_"
	tempSuffix = ".tmp"
	// copyBuffer is large enough that a copy of a 100 GB trace is not
	// dominated by system calls, small enough to be nothing beside it.
	copyBuffer = 1 << 20
)

// Options says what to upload and where. Exactly one of Dest, PrefixDir and
// Endpoint is set.
type Options struct {
	// Source is the local trace directory.
	Source string
	// Dest is the trace directory to write, used as given (--to).
	Dest string
	// PrefixDir is $CASCADE_DATA_DIR/s3/<bucket>/<prefix>; the trace goes
	// into its subdirectory named after the run.
	PrefixDir string
	// Endpoint is the URL of a remote Cascade's S3 endpoint; the trace goes
	// to Bucket under Prefix/<run name>/, signed with Keys.
	Endpoint string
	Bucket   string
	Prefix   string
	Keys     Keys
	// Parallel is how many parts of a large file are sent at once; 0
	// means DefaultParallel. PartSize is the size of a multipart
	// upload's parts; 0 means 16 MiB, or larger for a file of more than
	// 10,000 of them.
	Parallel int
	PartSize int64
	// RunName names the run. Empty means metadata.json's run_name, else the
	// source directory's base name. It is written to metadata.json only when
	// the source has none.
	RunName string
	// Force overwrites a trace already at the destination: its
	// metadata.json goes first, so the app sees an upload again, then every
	// file not in the source, and every file is copied anew.
	Force bool
	// Progress receives progress output; nil discards it.
	Progress io.Writer
	// Terminal draws a progress bar redrawn in place (for traces of
	// 64 MiB or more) instead of a plain line every 10 seconds.
	Terminal bool
	// Width is the terminal's width in columns; 0 means 80.
	Width int
	// PartSent, when set, is called after each part of a multipart
	// upload to an Endpoint is sent: the tests of resumed uploads
	// (servertests) interrupt one with it and see which parts went.
	PartSent func(key string, part int32)

	// Test hooks.
	now      func() time.Time
	interval time.Duration
	renamed  func(rel string) // after each file reaches its real name
}

// Result describes a finished upload.
type Result struct {
	RunName string
	Dest    string
	// Files is the files list written to metadata.json.
	Files []File
	// Copied and Skipped count data files copied and already present with
	// the right size and modification time (a resumed upload); CopiedBytes
	// is what was copied. Changed counts the files copied again although
	// one of the right size was there, because its time was not the
	// local file's (the file changed since, or another tool wrote it).
	Copied, Skipped, Changed int
	CopiedBytes              int64
	// Removed counts files not in the source deleted from the destination
	// by Force.
	Removed int
	// PartsSent and PartsSkipped count the parts of multipart uploads to
	// an Endpoint sent now and found already there (a resumed upload).
	PartsSent, PartsSkipped int
}

// String is the upload's summary for a person: "uploaded run to dest: 12
// files, 1.5 GiB copied, 3 already there".
func (r Result) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "uploaded %s to %s: %d files, %s copied", r.RunName, r.Dest, len(r.Files), formatBytes(r.CopiedBytes))
	if r.Skipped > 0 {
		fmt.Fprintf(&b, ", %d already there", r.Skipped)
	}
	if r.Changed > 0 {
		fmt.Fprintf(&b, ", %d changed since and sent again", r.Changed)
	}
	if r.PartsSkipped > 0 {
		fmt.Fprintf(&b, ", %d parts already there", r.PartsSkipped)
	}
	if r.Removed > 0 {
		fmt.Fprintf(&b, ", %d old files removed", r.Removed)
	}
	return b.String()
}

// Upload copies the trace directory opts.Source to its destination. It is
// safe to run again after a failure or a cancelled ctx: files already
// complete are kept and temporary files are replaced. Only a successful
// Upload leaves a metadata.json, so the app never takes a partial upload for
// a complete one.
func Upload(ctx context.Context, opts Options) (Result, error) {
	set := 0
	for _, d := range []string{opts.Dest, opts.PrefixDir, opts.Endpoint} {
		if d != "" {
			set++
		}
	}
	if set != 1 {
		return Result{}, errors.New("upload: set exactly one of Dest, PrefixDir and Endpoint")
	}
	if opts.now == nil {
		opts.now = time.Now
	}
	src, meta, runName, err := readSource(opts)
	if err != nil {
		return Result{}, err
	}
	if opts.Endpoint != "" {
		return uploadRemote(ctx, opts, src, meta, runName)
	}
	dest := opts.Dest
	if dest == "" {
		dest = filepath.Join(opts.PrefixDir, runName)
	}
	if dest, err = filepath.Abs(dest); err != nil {
		return Result{}, fmt.Errorf("upload: %w", err)
	}
	if within(resolvePath(src.root), resolvePath(dest)) {
		return Result{}, fmt.Errorf("upload: destination %s is inside the source %s", dest, src.root)
	}

	d, err := inspectDest(dest, src)
	if err != nil {
		return Result{}, fmt.Errorf("upload: %w", err)
	}
	if d.conflict != "" && !opts.Force {
		return Result{}, fmt.Errorf("%w: %s", ErrExists, d.conflict)
	}
	res := Result{RunName: runName, Dest: dest}
	again := opts.Force && d.metadata && uploadedAgain(src, func(f sourceFile) bool {
		there, ok := d.files[f.rel]
		return ok && there.size == f.size && there.mtime.Equal(f.mtime)
	}, d.extra)
	if opts.Force && !again {
		if res.Removed, err = d.clear(); err != nil {
			return res, fmt.Errorf("upload: %w", err)
		}
	}
	for _, t := range d.temps {
		os.Remove(t) // leftovers of an interrupted upload; rewritten below if still needed
	}
	if err := os.MkdirAll(dest, 0o755); err != nil {
		return res, fmt.Errorf("upload: %w", err)
	}

	var todo []sourceFile
	var total int64
	for _, f := range src.files {
		res.Files = append(res.Files, File{Path: f.rel, Size: f.size})
		if there, ok := d.files[f.rel]; ok && there.size == f.size {
			if there.mtime.Equal(f.mtime) {
				res.Skipped++
				continue
			}
			res.Changed++
		}
		todo = append(todo, f)
		total += f.size
	}
	if opts.Progress != nil {
		fmt.Fprintf(opts.Progress, "upload: %s -> %s: copying %d files (%s)%s\n", src.root, dest, len(todo), formatBytes(total), resumeNote(res))
	}

	prog := newProgress(opts.Progress, opts.Terminal, opts.Width, total, opts.now, opts.interval)
	buf := make([]byte, copyBuffer)
	dirs := map[string]bool{dest: true, filepath.Dir(dest): true}
	for _, f := range todo {
		if err := ctx.Err(); err != nil {
			prog.finish()
			return res, fmt.Errorf("upload: interrupted: %w", err)
		}
		target := filepath.Join(dest, filepath.FromSlash(f.rel))
		for dir := filepath.Dir(target); !dirs[dir]; dir = filepath.Dir(dir) {
			dirs[dir] = true
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			prog.finish()
			return res, fmt.Errorf("upload: %w", err)
		}
		n, err := copyFile(ctx, f, target, buf, prog)
		if err != nil {
			prog.finish()
			if ctx.Err() != nil {
				return res, fmt.Errorf("upload: interrupted while copying %s: %w", f.rel, ctx.Err())
			}
			return res, fmt.Errorf("upload: %s: %w", f.rel, err)
		}
		res.Copied++
		res.CopiedBytes += n
		if opts.renamed != nil {
			opts.renamed(f.rel)
		}
	}
	prog.finish()

	// Every rename must be on disk before metadata.json says the upload is
	// complete, or a crash could leave a complete-looking trace with holes.
	for _, dir := range slices.Sorted(maps.Keys(dirs)) {
		if err := syncDir(dir); err != nil {
			return res, fmt.Errorf("upload: %w", err)
		}
	}
	if err := ctx.Err(); err != nil {
		return res, fmt.Errorf("upload: interrupted: %w", err)
	}
	meta.set("files", nil) // in place if the source had one, else last
	data, err := meta.encode(res.Files)
	if err != nil {
		return res, fmt.Errorf("upload: %s: %w", src.metadata, err)
	}
	if err := writeFile(filepath.Join(dest, "metadata.json"), data); err != nil {
		return res, fmt.Errorf("upload: metadata.json: %w", err)
	}
	if err := syncDir(dest); err != nil {
		return res, fmt.Errorf("upload: %w", err)
	}
	if opts.renamed != nil {
		opts.renamed("metadata.json")
	}
	return res, nil
}

// readSource walks the source directory and reads its metadata.json; it
// returns the run name the trace gets.
func readSource(opts Options) (*source, *metadata, string, error) {
	src, err := scanSource(opts.Source)
	if err != nil {
		return nil, nil, "", fmt.Errorf("upload: %w", err)
	}
	meta := &metadata{}
	if src.metadata != "" {
		data, err := os.ReadFile(src.metadata)
		if err != nil {
			return nil, nil, "", fmt.Errorf("upload: %w", err)
		}
		if meta, err = parseMetadata(data); err != nil {
			return nil, nil, "", fmt.Errorf("upload: %s: %w", src.metadata, err)
		}
		if err := meta.serverCheck(); err != nil {
			return nil, nil, "", fmt.Errorf("upload: %s: %w", src.metadata, err)
		}
	}
	runName := opts.RunName
	if runName == "" {
		if runName, err = meta.runName(); err != nil {
			return nil, nil, "", fmt.Errorf("upload: %s: %w", src.metadata, err)
		}
	}
	if runName == "" {
		runName = filepath.Base(src.root)
	}
	if err := ValidRunName(runName); err != nil {
		return nil, nil, "", fmt.Errorf("upload: %w", err)
	}
	if err := checkSource(src, meta); err != nil {
		return nil, nil, "", err
	}
	if src.metadata == "" {
		meta.set("run_name", jsonString(runName))
	}
	return src, meta, runName, nil
}

// ValidRunName reports why name cannot name a trace directory, or nil. The
// name becomes one path element under the bucket prefix and the trace's id,
// so it must be non-empty, have no slashes, not be a dotfile (which the
// app skips), and be no longer than a trace id can be
// (cascade.MaxTraceIDLen).
func ValidRunName(name string) error {
	switch {
	case name == "":
		return errors.New("run name is empty")
	case strings.ContainsAny(name, `/\`):
		return fmt.Errorf("run name %q has a slash; it must be a single directory name", name)
	case strings.HasPrefix(name, "."):
		return fmt.Errorf("run name %q starts with a dot; the app skips dotfiles", name)
	case cascade.TraceIDTooLong(name) != "":
		return fmt.Errorf("run name %.20q… %s", name, cascade.TraceIDTooLong(name))
	case strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return fmt.Errorf("run name %q has a control character", name)
	}
	return nil
}

// destFile is a data file already at the destination.
type destFile struct {
	size  int64
	mtime time.Time
}

// destState is what is already at the destination.
type destState struct {
	dir      string
	exists   bool
	files    map[string]destFile // non-dot regular files by slash path; metadata.json excluded
	extra    []string            // slash paths of entries the source does not have
	metadata bool                // metadata.json is present
	temps    []string            // our leftover temporary files
	conflict string              // why this is another trace; "" when safe to write
}

// inspectDest reads what is at dest and decides whether writing src there
// would overwrite another trace. An upload interrupted by this package leaves
// only files of the source at their full size and temporary files, so that
// (and an empty or missing directory) is safe; anything else is a conflict:
// a metadata.json (the upload had finished, or came from elsewhere), a file
// the source does not have, or one larger than the source's.
func inspectDest(dest string, src *source) (*destState, error) {
	d := &destState{dir: dest, files: map[string]destFile{}}
	fi, err := os.Stat(dest) // a destination linked to a directory elsewhere is that directory
	if errors.Is(err, fs.ErrNotExist) {
		return d, nil
	}
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s exists and is not a directory", dest)
	}
	d.exists = true
	want := map[string]int64{}
	for _, f := range src.files {
		want[f.rel] = f.size
	}
	root, err := filepath.EvalSymlinks(dest)
	if err != nil {
		return nil, err
	}
	err = filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == root {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if strings.HasPrefix(e.Name(), ".") {
			if e.Type().IsRegular() && strings.HasPrefix(e.Name(), tempPrefix) && strings.HasSuffix(e.Name(), tempSuffix) {
				d.temps = append(d.temps, p)
			}
			if e.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		switch {
		case e.IsDir():
			return nil
		case rel == "metadata.json":
			d.metadata = true
		case !e.Type().IsRegular():
			d.extra = append(d.extra, rel)
		default:
			info, err := e.Info()
			if err != nil {
				return err
			}
			size, ok := want[rel]
			if !ok {
				d.extra = append(d.extra, rel)
			} else if info.Size() > size {
				d.conflict = fmt.Sprintf("%s: %s is %d bytes there but %d bytes in the source", dest, rel, info.Size(), size)
			}
			d.files[rel] = destFile{info.Size(), info.ModTime()}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	switch {
	case d.metadata:
		d.conflict = fmt.Sprintf("%s has a metadata.json (%s)", dest, d.describeMetadata())
	case len(d.extra) > 0:
		d.conflict = fmt.Sprintf("%s holds %d files that are not in the source, such as %s", dest, len(d.extra), d.extra[0])
	}
	return d, nil
}

// describeMetadata says whether the metadata.json at the destination marks
// a finished upload.
func (d *destState) describeMetadata() string {
	data, err := os.ReadFile(filepath.Join(d.dir, "metadata.json"))
	if err != nil {
		return err.Error()
	}
	m, err := parseMetadata(data)
	if err != nil {
		return "unreadable: " + err.Error()
	}
	files, ok := m.filesList()
	if !ok {
		return "no files list: an upload by another tool"
	}
	for _, f := range files {
		if there, ok := d.files[path.Clean(f.Path)]; !ok || there.size != f.Size {
			return fmt.Sprintf("its files list names %s, which is missing or has another size", f.Path)
		}
	}
	return fmt.Sprintf("a complete upload of %d files", len(files))
}

// clear removes metadata.json, then every file the source does not have,
// and returns how many of those it removed.
func (d *destState) clear() (removed int, err error) {
	if d.metadata {
		if err := os.Remove(filepath.Join(d.dir, "metadata.json")); err != nil {
			return 0, err
		}
		if err := syncDir(d.dir); err != nil {
			return 0, err
		}
	}
	for _, rel := range d.extra {
		if err := os.Remove(filepath.Join(d.dir, filepath.FromSlash(rel))); err != nil {
			return removed, err
		}
		removed++
	}
	return removed, nil
}

// copyFile copies f to target through a temporary dotfile beside it, which
// it syncs and renames when the copy is complete. On error it removes the
// temporary file, so target is either absent, as it was, or complete.
func copyFile(ctx context.Context, f sourceFile, target string, buf []byte, prog *progress) (int64, error) {
	in, err := os.Open(f.path)
	if err != nil {
		return 0, err
	}
	defer in.Close()
	tmp := tempName(target)
	out, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return 0, err
	}
	// Neither side is an *os.File to io.CopyBuffer, so it uses buf and
	// every chunk passes the context check and the progress count.
	n, err := io.CopyBuffer(&countingWriter{out, prog}, &contextReader{ctx, in}, buf)
	if err == nil && n != f.size {
		err = fmt.Errorf("size changed during the upload: %d bytes when listed, %d copied", f.size, n)
	}
	if err == nil {
		// The source's time when listed, like cp -p: a resumed upload
		// skips the file only while the source still has it (and its size).
		err = os.Chtimes(tmp, time.Time{}, f.mtime)
	}
	return n, commitTemp(out, tmp, target, err)
}

// commitTemp syncs and closes out, then renames tmp to target if nothing
// failed so far (err == nil), or removes tmp.
func commitTemp(out *os.File, tmp, target string, err error) error {
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, target)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// writeFile writes data to path the same way copyFile does.
func writeFile(target string, data []byte) error {
	tmp := tempName(target)
	out, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, err = out.Write(data)
	return commitTemp(out, tmp, target, err)
}

// tempName is the dotfile a file is written to before it gets its name. A
// name too long to carry the prefix and suffix is shortened; the temporary
// name only needs to be a dotfile unique within its directory.
func tempName(target string) string {
	dir, name := filepath.Split(target)
	if len(name) > 255-len(tempPrefix)-len(tempSuffix) {
		h := fnv.New64a()
		h.Write([]byte(name))
		name = fmt.Sprintf("%.200s_%x", name, h.Sum64())
	}
	return filepath.Join(dir, tempPrefix+name+tempSuffix)
}

func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

func jsonString(s string) []byte {
	b, _ := json.Marshal(s)
	return b
}

type contextReader struct {
	ctx context.Context
	r   io.Reader
}

func (r *contextReader) Read(p []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, err
	}
	return r.r.Read(p)
}

type countingWriter struct {
	w    io.Writer
	prog *progress
}

func (w *countingWriter) Write(p []byte) (int, error) {
	n, err := w.w.Write(p)
	w.prog.add(int64(n))
	return n, err
}
