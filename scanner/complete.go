package scanner

import (
	"fmt"
	"strings"

	"github.com/cascade-sim/cascade/tracedir"
)

// The guide's two rules of a complete upload, as inspect applies them,
// and what an upload that is not complete says it waits for.

// filesComplete applies the guide's first rule: every listed file is on
// disk with the listed size. An entry that leaves the trace directory is an
// error; one that is missing or short means the upload goes on.
// When it is not, waiting says which listed files it waits for: how many,
// and the first by its size on disk against the listed one.
func filesComplete(tree *tracedir.Tree, files []tracedir.FileEntry) (complete bool, waiting string, err error) {
	const want = "it should list every file of the upload with its size in bytes (as cascade upload writes it)"
	if len(files) == 0 {
		return false, "", fmt.Errorf("%s: files: the list is empty; %s", tracedir.MetadataFile, want)
	}
	n, first, dots := 0, "", 0
	for i, f := range files {
		if tracedir.IsDotPath(f.Path) {
			dots++ // never seen: not waited for (listedDotfiles)
			continue
		}
		rel, err := tree.Resolve(f.Path)
		if err != nil {
			return false, "", fmt.Errorf("metadata.json: files[%d]: %w", i, err)
		}
		got, ok := tree.Files[rel]
		if ok && !got.Link && got.Size == f.Size {
			continue
		}
		n++
		if first != "" {
			continue
		}
		switch {
		case !ok:
			first = fmt.Sprintf("%s (listed at %d bytes) is not there", f.Path, f.Size)
		default:
			first = fmt.Sprintf("%s is %d bytes, listed at %d", f.Path, got.Size, f.Size)
		}
	}
	if dots == len(files) {
		return false, "", fmt.Errorf("%s: files: the list names only dotfiles (files[0] %q), which Cascade skips; %s", tracedir.MetadataFile, files[0].Path, want)
	}
	if n == 0 {
		return true, "", nil
	}
	return false, fmt.Sprintf("%s: waiting for %d of its %d listed files: %s", tracedir.MetadataFile, n, len(files)-dots, first), nil
}

// listedDotfiles is the warning for the entries of a files list that
// name dotfiles, which the scanner skips everywhere (they are uploads in
// flight), so filesComplete does not wait for them: "" when none does.
// Three are named at most.
func listedDotfiles(files []tracedir.FileEntry) string {
	var named []string
	n := 0
	for i, f := range files {
		if !tracedir.IsDotPath(f.Path) {
			continue
		}
		n++
		if len(named) < 3 {
			named = append(named, fmt.Sprintf("files[%d] %q", i, f.Path))
		}
	}
	const why = "which Cascade skips (dotfiles are uploads in flight)"
	switch {
	case n == 0:
		return ""
	case n == 1:
		return fmt.Sprintf("%s: %s is a dotfile, %s, so it is not waited for", tracedir.MetadataFile, strings.Replace(named[0], " ", ": ", 1), why)
	case n > len(named):
		return fmt.Sprintf("%s: files: %d entries name dotfiles, %s, so they are not waited for: %s and %d more", tracedir.MetadataFile, n, why, strings.Join(named, ", "), n-len(named))
	}
	return fmt.Sprintf("%s: files: %d entries name dotfiles, %s, so they are not waited for: %s", tracedir.MetadataFile, n, why, strings.Join(named, ", "))
}

// streamComplete applies the second rule's file part: at least one kernel
// list, and a stats file for each.
func streamComplete(tree *tracedir.Tree) bool {
	lists := tree.KernelLists()
	for _, l := range lists {
		if !tree.Has(tracedir.StatsFor(l)) {
			return false
		}
	}
	return len(lists) > 0
}

// streamWaiting says what an upload without a files list that is not
// streamComplete waits for: the stats files its raw kernel lists lack
// (three named at most), or a raw kernel list.
func streamWaiting(tree *tracedir.Tree) string {
	const head = tracedir.MetadataFile + ": no files list, so the upload is complete once every raw kernel list has its stats file: "
	var missing []string
	seen := map[string]bool{}
	for _, l := range tree.KernelLists() {
		s := tracedir.StatsFor(l)
		if !tree.Has(s) && !seen[s] {
			seen[s] = true
			missing = append(missing, fmt.Sprintf("%s (for %s)", s, l))
		}
	}
	switch n := len(missing); {
	case n == 0:
		return head + "no raw kernel list (traces/kernelslist_ctx_* or traces/kernelslist) is there"
	case n == 1:
		return head + missing[0] + " is not there"
	case n > 3:
		return head + strings.Join(missing[:3], ", ") + fmt.Sprintf(" and %d more are not there", n-3)
	default:
		return head + strings.Join(missing[:n-1], ", ") + " and " + missing[n-1] + " are not there"
	}
}
