package upload

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// sourceFile is one data file to upload.
type sourceFile struct {
	rel  string // slash-separated, relative to the trace directory
	path string // where to read it; may be a symlink, which os.Open follows
	size int64
	// mtime is its modification time when listed: a resumed upload skips
	// a file already there only at this size and time (see sameTime).
	mtime time.Time
}

// source is the result of walking a local trace directory.
type source struct {
	root     string       // the directory as given, made absolute
	files    []sourceFile // sorted by rel; never metadata.json at the top
	metadata string       // path of the top-level metadata.json, or ""
}

// scanSource walks root. Dotfiles and dot-directories are skipped anywhere.
// Symlinks to regular files are followed wherever they point, so a trace can
// be assembled from links into a scratch area; a symlink to a directory is
// followed only when the directory is inside root, because uploading
// whatever tree it happens to name is rarely what the user meant.
func scanSource(root string) (*source, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s: not a directory", root)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, err
	}
	s := &source{root: abs}
	w := walker{src: s, realRoot: real}
	if err := w.walk(abs, "", []string{real}); err != nil {
		return nil, err
	}
	slices.SortFunc(s.files, func(a, b sourceFile) int { return strings.Compare(a.rel, b.rel) })
	return s, nil
}

type walker struct {
	src      *source
	realRoot string
}

// walk reads dir, whose path relative to the root is rel; ancestors holds
// the resolved paths of dir and every directory above it, to catch loops.
func (w *walker) walk(dir, rel string, ancestors []string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		p := filepath.Join(dir, name)
		r := path.Join(rel, name)
		mode := e.Type()
		if mode&os.ModeSymlink != 0 {
			fi, err := os.Stat(p)
			if err != nil {
				return fmt.Errorf("%s: broken symlink: %w", r, err)
			}
			mode = fi.Mode().Type()
			if fi.IsDir() {
				target, err := filepath.EvalSymlinks(p)
				if err != nil {
					return fmt.Errorf("%s: %w", r, err)
				}
				if !within(w.realRoot, target) {
					return fmt.Errorf("%s: symlink to directory %s, which is outside the trace directory; refusing to follow it (copy or link its files in instead)", r, target)
				}
				if slices.Contains(ancestors, target) {
					return fmt.Errorf("%s: symlink to %s loops back to a directory above it", r, target)
				}
				if err := w.walk(p, r, append(slices.Clip(ancestors), target)); err != nil {
					return err
				}
				continue
			}
		}
		switch {
		case mode.IsDir():
			real, err := filepath.EvalSymlinks(p)
			if err != nil {
				return fmt.Errorf("%s: %w", r, err)
			}
			if err := w.walk(p, r, append(slices.Clip(ancestors), real)); err != nil {
				return err
			}
		case mode.IsRegular():
			fi, err := os.Stat(p)
			if err != nil {
				return fmt.Errorf("%s: %w", r, err)
			}
			if r == "metadata.json" {
				w.src.metadata = p
				continue
			}
			w.src.files = append(w.src.files, sourceFile{rel: r, path: p, size: fi.Size(), mtime: fi.ModTime()})
		default:
			return fmt.Errorf("%s: not a regular file (%v); only files and directories can be uploaded", r, mode)
		}
	}
	return nil
}

// within reports whether path p is dir or inside it. Both must be clean and
// absolute.
func within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// resolvePath resolves the symlinks of p's longest existing prefix, so a
// destination that does not exist yet can still be compared with the source.
func resolvePath(p string) string {
	p, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	rest := ""
	for {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(real, rest)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return filepath.Join(p, rest)
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}
