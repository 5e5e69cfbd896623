package tracedir

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"time"
)

// UploadSum fingerprints the upload's data files (IsUploadFile):
// those metadata.json lists, when it has a files list, else those in the
// tree. Each counts with its path, size, modification time and, for a
// link, target; a listed file that is missing counts as missing. Files
// added beside a files list do not count: an upload that means them
// lists them in a new metadata.json. It returns which file to name if
// the sum changed: the first listed file missing ("traces/x gone"), else
// the file modified last (without a files list, [Gone] tells the files
// gone since an earlier walk). The scanner keeps it as a trace's
// UploadSum when its upload is complete; the post-processor checks it
// again before the trace is ready.
func UploadSum(tree *Tree, meta *Metadata) (sum, which string) {
	sum, which, _ = UploadSumPaths(tree, meta)
	return sum, which
}

// UploadSumPaths is UploadSum with the paths of the data files present
// summed up, which a later walk's [Gone] tells the files gone by.
func UploadSumPaths(tree *Tree, meta *Metadata) (sum, which string, paths UploadPaths) {
	var files []string
	if meta != nil && meta.HasFiles {
		for _, f := range meta.Files {
			if rel, err := tree.Resolve(f.Path); err == nil && IsUploadFile(rel) {
				files = append(files, rel)
			}
		}
	} else {
		for p := range tree.Files {
			if IsUploadFile(p) {
				files = append(files, p)
			}
		}
	}
	slices.Sort(files)
	files = slices.Compact(files)
	h := sha256.New()
	var at time.Time
	newest, gone := "", ""
	for _, p := range files {
		f, ok := tree.Files[p]
		if !ok {
			fmt.Fprintf(h, "%s\x00missing\x00", p)
			if gone == "" {
				gone = p + " gone"
			}
			continue
		}
		fmt.Fprintf(h, "%s\x00%d\x00%d\x00%s\x00", p, f.Size, f.ModTime.UnixNano(), f.Target)
		paths.add(p)
		if newest == "" || f.ModTime.After(at) {
			newest, at = p, f.ModTime
		}
	}
	if gone != "" {
		newest = gone
	}
	return hex.EncodeToString(h.Sum(nil)), newest, paths
}
