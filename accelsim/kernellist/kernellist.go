package kernellist

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Name is the file name of a processed kernel list.
const Name = "kernelslist.g"

// Ref names one traced kernel: its id within its CUDA context and the
// context ("0x6165bdd7ec90"), which is "" for single-context traces.
type Ref struct {
	ID      int
	Context string
}

// String gives "3" or "3@0x6165bdd7ec90".
func (r Ref) String() string {
	if r.Context == "" {
		return strconv.Itoa(r.ID)
	}
	return strconv.Itoa(r.ID) + "@" + r.Context
}

// matches reports whether r selects k: same id, and the same context unless
// r leaves the context open.
func (r Ref) matches(k Ref) bool {
	return r.ID == k.ID && (r.Context == "" || r.Context == k.Context)
}

// NormalizeContext gives a CUDA context in the one spelling Cascade compares:
// lowercase with a "0x" prefix ("0x6165BDD7EC90", "6165bdd7ec90" →
// "0x6165bdd7ec90"). Anything that is not hex is returned trimmed, as is.
func NormalizeContext(ctx string) string {
	s := strings.ToLower(strings.TrimSpace(ctx))
	hex := strings.TrimPrefix(s, "0x")
	if hex == "" {
		return s
	}
	for _, r := range hex {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f') {
			return strings.TrimSpace(ctx)
		}
	}
	return "0x" + hex
}

// traceName matches kernel trace file names of every generation:
// kernel-3.trace, kernel-3.trace.xz, kernel-3.traceg[.xz], kernel-3.tracez,
// each optionally with -ctx_0x<context> after the id.
var traceName = regexp.MustCompile(`^kernel-(\d+)(?:-ctx_(0x[0-9a-fA-F]+))?\.trace[gz]?(?:\.xz)?$`)

// ParseTraceFileName reads the kernel id and context from a kernel trace
// file name or path, e.g. "traces/kernel-3-ctx_0x6165bdd7ec90.tracez" →
// {3, "0x6165bdd7ec90"}.
func ParseTraceFileName(name string) (Ref, bool) {
	m := traceName.FindStringSubmatch(filepath.Base(name))
	if m == nil {
		return Ref{}, false
	}
	id, err := strconv.Atoi(m[1])
	if err != nil {
		return Ref{}, false
	}
	return Ref{ID: id, Context: NormalizeContext(m[2])}, true
}

// CheckTraceName refuses a kernel line's trace path holding a byte the
// shell would act on. Accel-Sim opens each kernel trace with
// popen("cat <the list's directory>/<path>") (trace_parser.cc), so a
// blank splits the path and a ';', '$' or quote in it is run as shell
// code: a trace path may hold letters, digits and . _ - / + = , : @ %.
func CheckTraceName(path string) error {
	if i := shellByteAt(path); i >= 0 {
		return fmt.Errorf("kernel trace %q holds %q, which the simulator's shell would act on (it opens each trace with popen(\"cat <dir>/<name>\")): name kernel traces with letters, digits and . _ - / + = , : @ %% only", path, string(rune(path[i])))
	}
	return nil
}

// SafeTracePath reports whether the shell takes path as it is (every
// byte one CheckTraceName allows).
func SafeTracePath(path string) bool { return shellByteAt(path) < 0 }

// shellByteAt is the index of path's first byte CheckTraceName refuses,
// -1 when there is none.
func shellByteAt(path string) int {
	for i := 0; i < len(path); i++ {
		if !safeNameByte(path[i]) {
			return i
		}
	}
	return -1
}

func safeNameByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("._-/+=,:@%", c) >= 0
}

// Command is one line of a kernel list that Accel-Sim acts on.
type Command struct {
	Line int    // 1-based line number in the list
	Text string // the line as written, without its newline

	// For kernel lines: the trace path relative to the list's directory,
	// and the kernel it names (ok false when the file name is not of the
	// kernel-N[-ctx_0x..].trace* form).
	TraceFile string
	Kernel    Ref
	KernelOK  bool
}

// IsMemcpy reports whether c is a MemcpyHtoD command.
func (c Command) IsMemcpy() bool { return c.TraceFile == "" }

// List is a parsed kernelslist.g.
type List struct {
	Path     string // the file read, or written
	Commands []Command
}

// Dir is the directory kernel trace paths are relative to.
func (l *List) Dir() string { return filepath.Dir(l.Path) }

// Kernels returns the kernel commands, in list order.
func (l *List) Kernels() []Command {
	var ks []Command
	for _, c := range l.Commands {
		if !c.IsMemcpy() {
			ks = append(ks, c)
		}
	}
	return ks
}

// TracePath is the path of a kernel command's trace file.
func (l *List) TracePath(c Command) string {
	return filepath.Join(l.Dir(), filepath.FromSlash(c.TraceFile))
}

// Read reads and parses the kernel list at path.
func Read(path string) (*List, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read kernel list: %w", err)
	}
	cmds, err := Parse(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &List{Path: path, Commands: cmds}, nil
}

// Parse reads kernel list commands the way Accel-Sim does
// (formats.md §5): a line starting with "MemcpyHtoD" is a copy, a line
// starting with "kernel" is a trace path relative to the list's directory,
// and every other line is ignored. A MemcpyHtoD line that is not
// "MemcpyHtoD,0x<hex>,<bytes>" is an error naming its line, since Accel-Sim
// would assert on it.
func Parse(r io.Reader) ([]Command, error) {
	var cmds []Command
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	n := 1
	for ; sc.Scan(); n++ {
		text := strings.TrimRight(sc.Text(), "\r")
		switch {
		case strings.HasPrefix(text, "MemcpyHtoD"):
			if err := checkMemcpy(text); err != nil {
				return nil, fmt.Errorf("line %d: %w", n, err)
			}
			cmds = append(cmds, Command{Line: n, Text: text})
		case strings.HasPrefix(text, "kernel"):
			path := strings.TrimSpace(text)
			if err := CheckTraceName(path); err != nil {
				return nil, fmt.Errorf("line %d: %w", n, err)
			}
			ref, ok := ParseTraceFileName(path)
			cmds = append(cmds, Command{Line: n, Text: text, TraceFile: path, Kernel: ref, KernelOK: ok})
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %w", n, err)
	}
	return cmds, nil
}

// CheckMemcpy reports why a MemcpyHtoD line is not
// "MemcpyHtoD,0x<hex>,<bytes>", which Accel-Sim would assert on, or nil.
func CheckMemcpy(text string) error { return checkMemcpy(text) }

func checkMemcpy(text string) error {
	parts := strings.Split(text, ",")
	if len(parts) != 3 || parts[0] != "MemcpyHtoD" {
		return fmt.Errorf("%q: want MemcpyHtoD,0x<address>,<bytes>", text)
	}
	addr, ok := strings.CutPrefix(strings.TrimSpace(parts[1]), "0x")
	if _, err := strconv.ParseUint(addr, 16, 64); !ok || err != nil {
		return fmt.Errorf("%q: address is not 0x<hex>", text)
	}
	if _, err := strconv.ParseUint(strings.TrimSpace(parts[2]), 10, 64); err != nil {
		return fmt.Errorf("%q: byte count is not a decimal number", text)
	}
	return nil
}

// UnknownKernelsError is returned by [WriteSubset] when a chosen kernel
// is not in the list.
type UnknownKernelsError struct {
	Kernels []Ref
}

func (e *UnknownKernelsError) Error() string {
	s := make([]string, len(e.Kernels))
	for i, k := range e.Kernels {
		s[i] = k.String()
	}
	return "unknown kernel ids: " + strings.Join(s, ", ")
}

// WriteSubset writes into runDir a kernelslist.g holding only the
// chosen kernels of src, each beside it as a link to its trace file, and
// returns the written list (whose Kernels are what the simulator will run).
//
// A chosen Ref with an empty Context selects that kernel id in every
// context; with a Context it selects only that one. Kernels keep their order
// in src whatever the order of chosen. Every MemcpyHtoD line that precedes a
// chosen kernel in src is kept, in order, so the simulated memory holds what
// it held when that kernel ran; copies after the last chosen kernel are
// dropped (formats.md §7). Trace files are linked by symlink to their
// absolute path, or else hard-linked, or else copied; an existing file of
// that name in runDir is replaced, so the call can be repeated.
//
// A chosen kernel that src does not hold gives an [*UnknownKernelsError] and
// writes nothing.
func WriteSubset(src *List, runDir string, chosen []Ref) (*List, error) {
	if len(chosen) == 0 {
		return nil, errors.New("write kernel subset: no kernels chosen")
	}
	chosen = slices.Clone(chosen)
	for i := range chosen {
		chosen[i].Context = NormalizeContext(chosen[i].Context)
	}
	found := make([]bool, len(chosen))
	byID := make(map[int][]int, len(chosen)) // the chosen refs of each id, by index
	for i, r := range chosen {
		byID[r.ID] = append(byID[r.ID], i)
	}
	var keep []Command
	var pendingCopies []Command
	for _, c := range src.Commands {
		if c.IsMemcpy() {
			pendingCopies = append(pendingCopies, c)
			continue
		}
		selected := false
		if c.KernelOK {
			for _, i := range byID[c.Kernel.ID] {
				if chosen[i].matches(c.Kernel) {
					found[i], selected = true, true
				}
			}
		}
		if selected {
			keep = append(keep, pendingCopies...)
			keep = append(keep, c)
			pendingCopies = nil
		}
	}
	var unknown []Ref
	for i, ok := range found {
		if !ok && !slices.Contains(unknown, chosen[i]) {
			unknown = append(unknown, chosen[i])
		}
	}
	if len(unknown) > 0 {
		sort.Slice(unknown, func(i, j int) bool {
			if unknown[i].ID != unknown[j].ID {
				return unknown[i].ID < unknown[j].ID
			}
			return unknown[i].Context < unknown[j].Context
		})
		return nil, &UnknownKernelsError{Kernels: unknown}
	}

	if err := src.CheckFiles(keep...); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(runDir, 0o755); err != nil {
		return nil, fmt.Errorf("write kernel subset: %w", err)
	}
	var buf bytes.Buffer
	out := &List{Path: filepath.Join(runDir, Name)}
	for i, c := range keep {
		if !c.IsMemcpy() {
			rel := filepath.FromSlash(c.TraceFile)
			if filepath.IsAbs(rel) || !filepath.IsLocal(rel) {
				return nil, fmt.Errorf("%s:%d: trace path %q leaves the list's directory", src.Path, c.Line, c.TraceFile)
			}
			if err := linkFile(src.TracePath(c), filepath.Join(runDir, rel)); err != nil {
				return nil, fmt.Errorf("write kernel subset: %w", err)
			}
		}
		c.Line = i + 1
		out.Commands = append(out.Commands, c)
		buf.WriteString(c.Text)
		buf.WriteByte('\n')
	}
	if err := writeFileAtomic(out.Path, buf.Bytes()); err != nil {
		return nil, fmt.Errorf("write kernel subset: %w", err)
	}
	return out, nil
}

// linkFile makes dst name the same content as src: a symlink to src's
// absolute path, or a hard link, or a copy, whichever works first.
func linkFile(src, dst string) error {
	abs, err := filepath.Abs(src)
	if err != nil {
		return err
	}
	if _, err := os.Stat(abs); err != nil {
		return fmt.Errorf("kernel trace: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if err := os.Remove(dst); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if os.Symlink(abs, dst) == nil || os.Link(abs, dst) == nil {
		return nil
	}
	return copyFile(abs, dst)
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("copy %s: %w", src, err)
	}
	return out.Close()
}

func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// PutFirst rewrites the list l (one a run wrote, as [WriteSubset] does)
// with a kernel line traceFile (relative to its directory, starting with
// "kernel" as Accel-Sim wants of a kernel line) before its first kernel, and
// returns the list written. The kernel it names is no kernel of the trace
// (its command's KernelOK is false unless its name says otherwise): a
// synthetic kernel the simulator runs first.
func PutFirst(l *List, traceFile string) (*List, error) {
	if !strings.HasPrefix(traceFile, "kernel") || strings.ContainsAny(traceFile, "\r\n") {
		return nil, fmt.Errorf("put first in %s: %q is no kernel line", l.Path, traceFile)
	}
	ref, ok := ParseTraceFileName(traceFile)
	add := Command{Text: traceFile, TraceFile: traceFile, Kernel: ref, KernelOK: ok}
	out := &List{Path: l.Path}
	done := false
	var buf bytes.Buffer
	for _, c := range l.Commands {
		if !done && !c.IsMemcpy() {
			add.Line = len(out.Commands) + 1
			out.Commands = append(out.Commands, add)
			buf.WriteString(add.Text + "\n")
			done = true
		}
		c.Line = len(out.Commands) + 1
		out.Commands = append(out.Commands, c)
		buf.WriteString(c.Text + "\n")
	}
	if !done {
		return nil, fmt.Errorf("put first in %s: the list has no kernel", l.Path)
	}
	if err := writeFileAtomic(l.Path, buf.Bytes()); err != nil {
		return nil, fmt.Errorf("put first in %s: %w", l.Path, err)
	}
	return out, nil
}
