package tracedir

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/ulikunitz/xz"
)

// A kernel trace's header names the binary version of the code it traced
// ("-binary version = 61", formats.md §3): the GPU architecture the trace
// was taken on, which the simulator decodes its instructions by.
var (
	binaryVersionRe = regexp.MustCompile(`^-binary version = (\d+)\s*$`)
	kernelTraceRe   = regexp.MustCompile(`^kernel-\d+(-ctx_0x[0-9a-fA-F]+)?\.(trace|traceg)(\.xz)?$`)
)

// headerLimit bounds what BinaryVersion reads of a file: a header is a few
// hundred bytes, before the first instruction line.
const headerLimit = 16 << 10

// BinaryVersion is a trace's binary version as its kernel traces' headers
// give it, and the file that said so.
type BinaryVersion struct {
	Version int
	File    string // relative to the trace directory
}

// Arch is the version as an architecture name: 61 → "sm_61".
func (b BinaryVersion) Arch() string { return fmt.Sprintf("sm_%d", b.Version) }

var versions struct {
	sync.Mutex
	seen map[string]BinaryVersion // by file path, size and time
}

// BinaryVersion reads the binary version from the header of the first
// kernel trace of the tree (raw kernel-N.trace, .trace.xz, or a
// post-processed .traceg), in name order. It reports false when no kernel
// trace is there or none gives a version. A file's answer is remembered
// while its size and time stay, so a trace scanned every two seconds is
// read once.
func (t *Tree) BinaryVersion() (BinaryVersion, bool) {
	var names []string
	for p := range t.Files {
		if path.Dir(p) == TracesDir && kernelTraceRe.MatchString(path.Base(p)) {
			names = append(names, p)
		}
	}
	sort.Slice(names, func(i, j int) bool { return kernelOrder(names[i]) < kernelOrder(names[j]) })
	for _, p := range names[:min(len(names), 3)] {
		f := t.Files[p]
		key := t.Root + "\x00" + p + "\x00" + strconv.FormatInt(f.Size, 10) + "\x00" + f.ModTime.String()
		versions.Lock()
		b, ok := versions.seen[key]
		versions.Unlock()
		if !ok {
			rel, err := t.Resolve(p) // a link may not lead outside the trace
			if err != nil {
				continue
			}
			v, err := readBinaryVersion(filepath.Join(t.Root, filepath.FromSlash(rel)), strings.HasSuffix(p, ".xz"))
			if err != nil || v == 0 {
				continue
			}
			b = BinaryVersion{Version: v, File: p}
			versions.Lock()
			if versions.seen == nil || len(versions.seen) > 4096 {
				versions.seen = map[string]BinaryVersion{}
			}
			versions.seen[key] = b
			versions.Unlock()
		}
		return b, true
	}
	return BinaryVersion{}, false
}

// kernelOrder sorts kernel-2 before kernel-10.
func kernelOrder(p string) string {
	base := strings.TrimPrefix(path.Base(p), "kernel-")
	n := base
	if i := strings.IndexAny(base, "-."); i >= 0 {
		n = base[:i]
	}
	return fmt.Sprintf("%012s %s", n, base)
}

// readBinaryVersion reads the header of one kernel trace: its lines up to
// the first that is not a "-key = value" or blank one.
func readBinaryVersion(abs string, compressed bool) (int, error) {
	f, err := os.Open(abs)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var r io.Reader = f
	if compressed {
		xr, err := xz.NewReader(f)
		if err != nil {
			return 0, err
		}
		r = xr
	}
	sc := bufio.NewScanner(io.LimitReader(r, headerLimit))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if m := binaryVersionRe.FindStringSubmatch(line); m != nil {
			return strconv.Atoi(m[1])
		}
		if line != "" && !strings.HasPrefix(line, "-") {
			break
		}
	}
	return 0, sc.Err()
}
