package tracedir

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// File is a regular file or symlink of a trace, by slash-separated path
// relative to the trace directory.
type File struct {
	Path    string
	Size    int64
	ModTime time.Time
	Link    bool // a symlink: Size is the link's, not its target's
	// Target is a symlink's text, as Walk read it; Resolve follows it.
	Target string
}

// Tree is what one walk of a trace directory saw. Dotfiles and dot
// directories are left out: rclone uploads to .rclone_temp_put_* names.
type Tree struct {
	Root  string
	Files map[string]File      // by Path
	Dirs  map[string]time.Time // modification time by slash path; "." is the root
}

// Walk reads the tree below root without following symlinks.
func Walk(root string) (*Tree, error) {
	t := &Tree{Root: root, Files: map[string]File{}, Dirs: map[string]time.Time{}}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p != root && errors.Is(err, fs.ErrNotExist) {
				return nil // removed while we walked; the next scan sees it
			}
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if rel != "." && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		info, err := d.Info()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		switch {
		case d.IsDir():
			t.Dirs[rel] = info.ModTime()
		case d.Type().IsRegular():
			t.Files[rel] = File{Path: rel, Size: info.Size(), ModTime: info.ModTime()}
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil
				}
				return err
			}
			t.Files[rel] = File{Path: rel, Size: info.Size(), ModTime: info.ModTime(), Link: true, Target: target}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("walk %s: %w", root, err)
	}
	return t, nil
}

// Bytes is the size of every regular file in the tree.
func (t *Tree) Bytes() int64 {
	var n int64
	for _, f := range t.Files {
		if !f.Link {
			n += f.Size
		}
	}
	return n
}

// Has reports whether the tree holds a file at rel.
func (t *Tree) Has(rel string) bool { _, ok := t.Files[rel]; return ok }

// Glob returns the sorted paths of files in dir (slash path relative to the
// root, "." for the root) whose base name matches pattern.
func (t *Tree) Glob(dir, pattern string) []string {
	var out []string
	for p := range t.Files {
		if path.Dir(p) == dir {
			if ok, _ := path.Match(pattern, path.Base(p)); ok {
				out = append(out, p)
			}
		}
	}
	sort.Strings(out)
	return out
}

// Signature summarises every file's path, size and modification time: two
// walks with equal signatures saw the same tree.
func (t *Tree) Signature() string {
	paths := make([]string, 0, len(t.Files))
	for p := range t.Files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	h := sha256.New()
	var b [16]byte
	for _, p := range paths {
		f := t.Files[p]
		h.Write([]byte(p))
		binary.LittleEndian.PutUint64(b[:8], uint64(f.Size))
		binary.LittleEndian.PutUint64(b[8:], uint64(f.ModTime.UnixNano()))
		h.Write(b[:])
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// DirSignature summarises the modification times of the tree's directories
// and of the file at extra (if any), as they are on disk now. A directory's
// time changes when an entry is added, removed or renamed in it, so two
// equal DirSignatures mean no file came or went: it is the cheap check of a
// finished trace, one stat per directory instead of one per file.
func DirSignature(root string, dirs []string, extra string) string {
	h := sha256.New()
	var b [16]byte
	stat := func(rel string) {
		h.Write([]byte(rel))
		info, err := os.Lstat(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			h.Write([]byte{0})
			return
		}
		binary.LittleEndian.PutUint64(b[:8], uint64(info.Size()))
		binary.LittleEndian.PutUint64(b[8:], uint64(info.ModTime().UnixNano()))
		h.Write(b[:])
	}
	for _, d := range dirs {
		stat(d)
	}
	if extra != "" {
		stat(extra)
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// SortedDirs returns the tree's directories, sorted.
func (t *Tree) SortedDirs() []string {
	out := make([]string, 0, len(t.Dirs))
	for d := range t.Dirs {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}

// ErrOutside is wrapped by Resolve for paths that leave the trace directory.
var ErrOutside = errors.New("resolves outside the trace directory")

// Resolve turns rel, a path from metadata.json, into the slash path of a
// file inside the tree, following symlinks by their text only. It refuses
// absolute paths, ".." components and links that lead outside. It reads
// nothing from disk: links are followed by the text Walk saw.
func (t *Tree) Resolve(rel string) (string, error) {
	switch {
	case rel == "":
		return "", errors.New("empty path")
	case filepath.IsAbs(rel) || strings.HasPrefix(rel, "/") || strings.HasPrefix(rel, `\`):
		return "", fmt.Errorf("%q is an absolute path", rel)
	}
	for _, c := range strings.Split(filepath.ToSlash(rel), "/") {
		if c == ".." {
			return "", fmt.Errorf("%q has a \"..\" component", rel)
		}
	}
	cur := path.Clean(filepath.ToSlash(rel))
	for hops := 0; hops < 40; hops++ {
		link, rest, ok := t.firstLink(cur)
		if !ok {
			return cur, nil
		}
		target := t.Files[link].Target
		if filepath.IsAbs(target) {
			abs, err := filepath.Rel(t.Root, target)
			if err != nil || abs == ".." || strings.HasPrefix(abs, ".."+string(filepath.Separator)) {
				return "", fmt.Errorf("%q: %w (%s -> %s)", rel, ErrOutside, link, target)
			}
			target = abs
		} else {
			target = path.Join(path.Dir(link), filepath.ToSlash(target))
		}
		if target == ".." || strings.HasPrefix(target, "../") {
			return "", fmt.Errorf("%q: %w (%s -> %s)", rel, ErrOutside, link, target)
		}
		cur = path.Join(target, rest)
	}
	return "", fmt.Errorf("%q: too many levels of symbolic links", rel)
}

// firstLink finds the first component of p that the tree saw as a symlink
// (a link to a directory is listed as a file, since Walk does not follow).
func (t *Tree) firstLink(p string) (link, rest string, ok bool) {
	parts := strings.Split(p, "/")
	for i := range parts {
		prefix := strings.Join(parts[:i+1], "/")
		if f, found := t.Files[prefix]; found && f.Link {
			return prefix, strings.Join(parts[i+1:], "/"), true
		}
	}
	return "", "", false
}

// IsDotPath reports whether a slash path in a trace has a dotfile's
// component (".hidden", "traces/.rclone_temp_put_x", ".cache/x"): Walk
// skips it, so no tree holds it. "." and ".." are no dotfiles.
func IsDotPath(rel string) bool {
	for _, c := range strings.Split(filepath.ToSlash(rel), "/") {
		if strings.HasPrefix(c, ".") && c != "." && c != ".." {
			return true
		}
	}
	return false
}
