package scanner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cascade-sim/cascade/tracedir"
)

// wrongFolder says why tree can never complete, because it was uploaded
// from the wrong folder, or "" when it may: the two folders easily given
// in place of a trace, which `cascade upload` refuses and other clients
// do not (an `aws s3 cp --recursive` of either one).
//
//   - a trace's traces/ folder itself: its kernel lists and kernel traces
//     lie at the top, no traces/ folder holds them, so no completeness
//     rule is ever met;
//   - a folder of traces: its subfolders hold metadata.json or traces/,
//     and it has no metadata.json of its own.
//
// Either stayed UPLOADING for good, with nothing to say why.
func wrongFolder(tree *tracedir.Tree, hasMeta bool) string {
	var subTraces []string
	flat, hasTraces := false, false
	for p := range tree.Files {
		first, rest, nested := strings.Cut(p, "/")
		switch {
		case !nested:
			_, list := tracedir.RawListContext(p)
			flat = flat || list || tracedir.IsRawKernel(p)
		case first == tracedir.TracesDir:
			hasTraces = true
		case rest == tracedir.MetadataFile || strings.HasPrefix(rest, tracedir.TracesDir+"/"):
			subTraces = append(subTraces, first+"/")
		}
	}
	const fix = "upload the folder the tracer wrote, the one that holds traces/ and metadata.json, and delete this trace (Delete on its page, or removeTrace)"
	switch {
	case hasTraces:
		return ""
	case flat:
		return "the upload has no traces/ folder, and its kernel traces and lists lie at the top: it was made from a trace's traces/ folder; " + fix
	case !hasMeta && len(subTraces) > 0:
		slices.Sort(subTraces)
		subTraces = slices.Compact(subTraces)
		shown := subTraces
		if len(shown) > 3 {
			shown = append(shown[:3:3], "…")
		}
		return fmt.Sprintf("the upload is a folder of %d traces (%s): upload each as a trace of its own, and delete this one (Delete on its page, or removeTrace)",
			len(subTraces), strings.Join(shown, ", "))
	}
	return ""
}
