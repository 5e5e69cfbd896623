package upload

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// isKernelList reports whether a file's base name is one of a trace's
// kernel lists: kernelslist, kernelslist_ctx_*, or the post-processed
// kernelslist.g.
func isKernelList(base string) bool {
	return base == "kernelslist" || base == "kernelslist.g" || strings.HasPrefix(base, "kernelslist_ctx_")
}

// checkFolder refuses, before a byte is sent, the two folders that are
// easily given in place of a trace directory: a trace's traces/ subfolder
// (its kernel lists are at the top, not in traces/) and a folder of
// traces (its subfolders have traces/ kernel lists, it has none). Either
// would be taken, written a metadata.json, and fail on the server.
func checkFolder(src *source) error {
	var top, inTraces bool
	var subs []string
	for _, f := range src.files {
		parts := strings.Split(f.rel, "/")
		base := parts[len(parts)-1]
		if !isKernelList(base) {
			continue
		}
		switch {
		case len(parts) == 1:
			top = true
		case len(parts) == 2 && parts[0] == "traces":
			inTraces = true
		case len(parts) == 3 && parts[1] == "traces":
			if !slices.Contains(subs, parts[0]) {
				subs = append(subs, parts[0])
			}
		}
	}
	if inTraces {
		return nil
	}
	parent := filepath.Dir(src.root)
	switch {
	case top && filepath.Base(src.root) == "traces":
		return fmt.Errorf("upload: %s is a trace's traces/ folder, nothing was sent: give its parent, the folder that holds traces/ (and metadata.json): cascade upload %s", src.root, parent)
	case top:
		return fmt.Errorf("upload: %s holds a kernel list at its top, nothing was sent: a trace directory holds it in traces/ (traces/kernelslist); if %s is the folder the tracer wrote traces/ into, give that, else move these files into a traces/ subfolder", src.root, parent)
	case len(subs) == 1:
		return fmt.Errorf("upload: %s holds a trace in its subfolder %s, nothing was sent: give that folder: cascade upload %s", src.root, subs[0], filepath.Join(src.root, subs[0]))
	case len(subs) > 1:
		names := subs
		more := ""
		if len(names) > 5 {
			more = fmt.Sprintf(" and %d more", len(names)-5)
			names = names[:5]
		}
		return fmt.Errorf("upload: %s holds %d traces, in its subfolders %s%s, nothing was sent: give one of them (cascade upload %s), or upload each: for d in %s/*/; do cascade upload \"$d\"; done",
			src.root, len(subs), strings.Join(names, ", "), more, filepath.Join(src.root, subs[0]), src.root)
	}
	return nil
}
