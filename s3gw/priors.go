package s3gw

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/versity/versitygw/backend/posix"
)

// A server stopped while it compared an object written again with its
// kept bytes (same.go) left the object with its new modification time:
// the scanner then took a byte-identical re-upload for new data, started
// the ready trace over and post-processed it again. So each kept link has
// a note beside it (<link>.json: the object's bucket, key, size, time and
// ETag), and the next start finishes what the
// stopped server began: the comparison runs again, in the background, the
// object counted as being written meanwhile (Gateway.Writing), and the
// same bytes get their earlier time back. A link without its note (a
// server stopped between the two) is only removed.

// priorNote is what a kept link's note says.
type priorNote struct {
	Bucket string    `json:"bucket"`
	Key    string    `json:"key"`
	Size   int64     `json:"size"`
	Mtime  time.Time `json:"mtime"`
	ETag   string    `json:"etag,omitempty"`
}

// noteSuffix ends a kept link's note.
const noteSuffix = ".json"

// writeNote writes the note of p beside its link.
func writeNote(p *prior) error {
	b, err := json.Marshal(priorNote{Bucket: p.bucket, Key: p.key, Size: p.size, Mtime: p.mtime, ETag: p.etag})
	if err != nil {
		return err
	}
	return os.WriteFile(p.link+noteSuffix, b, 0o644)
}

// dropPrior removes p's kept link and its note.
func dropPrior(p *prior) {
	os.Remove(p.link)
	os.Remove(p.link + noteSuffix)
}

// leftPriors returns the kept links a stopped server left under root, in
// every bucket, whose notes say what they kept, and removes the rest
// (links without a note, notes without a link, notes that do not read).
// It runs before the gateway serves.
func leftPriors(root string) []*prior {
	var out []*prior
	names, _ := filepath.Glob(filepath.Join(root, "*", posix.MetaTmpDir, priorPrefix+"*"))
	for _, name := range names {
		if strings.HasSuffix(name, noteSuffix) {
			if _, err := os.Lstat(strings.TrimSuffix(name, noteSuffix)); err != nil {
				os.Remove(name) // its link went
			}
			continue
		}
		p, ok := readNote(root, name)
		if !ok {
			os.Remove(name)
			os.Remove(name + noteSuffix)
			continue
		}
		out = append(out, p)
	}
	return out
}

// readNote reads the note of the kept link at link; ok is false when it
// is missing, does not read, or names an object outside its bucket.
func readNote(root, link string) (*prior, bool) {
	b, err := os.ReadFile(link + noteSuffix)
	if err != nil {
		return nil, false
	}
	var n priorNote
	if json.Unmarshal(b, &n) != nil || n.Bucket != filepath.Base(filepath.Dir(filepath.Dir(link))) || CheckKey(n.Key) != nil || strings.Contains("/"+n.Key+"/", "/../") {
		return nil, false
	}
	return &prior{
		bucket: n.Bucket, key: n.Key,
		path: filepath.Join(root, n.Bucket, filepath.FromSlash(n.Key)),
		link: link, size: n.Size, mtime: n.Mtime, etag: n.ETag,
	}, true
}
