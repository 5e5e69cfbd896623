package tracedir

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path"
)

// FileSig fingerprints the file a trace names by name (a path in the
// trace directory, as metadata.json names its profiles): its size,
// modification time and, for a link, target; "missing" when the tree
// has no such file and "outside" when the name leaves the directory. Two
// walks give the same fingerprint for a file that did not change.
func (t *Tree) FileSig(name string) string {
	rel, err := t.Resolve(name)
	if err != nil {
		return "outside"
	}
	f, ok := t.Files[rel]
	if !ok {
		return "missing"
	}
	return fmt.Sprintf("%d:%d:%s", f.Size, f.ModTime.UnixNano(), f.Target)
}

// MetadataCoreSum fingerprints a metadata.json without what names its
// hardware profiles: the profiles field, and the entries of its files
// list that name a profile (of m, the file parsed). Two metadata.json
// with the same core sum differ in their profiles alone (or in layout:
// blanks, the order of fields). It returns "" when b is no JSON object.
func MetadataCoreSum(b []byte, m Metadata) string {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(TrimBOM(b), &raw); err != nil {
		return ""
	}
	delete(raw, "profiles")
	if files, ok := raw["files"]; ok && len(m.Profiles) > 0 {
		profile := map[string]bool{}
		for _, p := range m.Profiles {
			profile[path.Clean(p)] = true
		}
		var entries []json.RawMessage
		if json.Unmarshal(files, &entries) == nil {
			kept := entries[:0]
			for _, e := range entries {
				var f FileEntry
				if json.Unmarshal(e, &f) == nil && profile[path.Clean(f.Path)] {
					continue
				}
				kept = append(kept, e)
			}
			raw["files"], _ = json.Marshal(kept)
		}
	}
	b, err := json.Marshal(raw) // keys sorted, values compacted
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
