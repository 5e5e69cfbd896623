package tracedir

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
)

// UploadPaths sums up the paths of an upload's data files present in a
// walk (UploadSumPaths): how many, and the sum of a hash of each. A later
// walk's differs by the files gone and come, which is how [Gone] tells
// the files gone without the earlier walk's list: 16 bytes, whatever the
// files.
type UploadPaths struct {
	N   int
	Sum uint64
}

func (u *UploadPaths) add(p string) { u.N, u.Sum = u.N+1, u.Sum+pathHash(p) }

// pathHash is FNV-1a of p, without an allocation per path of a walk.
func pathHash(p string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(p); i++ {
		h = (h ^ uint64(p[i])) * 1099511628211
	}
	return h
}

// processedRe is a kernel trace the post-processor wrote: kernel-N.tracez
// (from kernel-N.trace or .trace.xz), .traceg (from .trace) or .traceg.xz
// (from .trace.xz).
var processedRe = regexp.MustCompile(`^(kernel-\d+(?:-ctx_0x[0-9a-fA-F]+)?)\.(tracez|traceg|traceg\.xz)$`)

// Gone names the data files of an upload without a files list that tree,
// whose data files' paths sum up to now, lost since a walk that summed
// them up to before: "traces/kernel-1.trace gone", "traces/kernel-1.trace
// and 2 more gone", or, when it cannot tell which, "2 data files gone";
// "" when none is surely gone (fewer files than before) and for an upload
// with a files list, whose missing files UploadSum names itself.
//
// The files it can name are those the post-processor's outputs and the
// kernel lists show were there: the raw kernel trace of a processed one,
// the raw list of a processed list, the stats file of a raw list and the
// list of a stats file. They are named only when their paths account for
// the difference of the sums exactly.
func Gone(tree *Tree, meta *Metadata, before, now UploadPaths) string {
	k := before.N - now.N
	if k <= 0 || meta != nil && meta.HasFiles {
		return ""
	}
	diff := before.Sum - now.Sum
	slots := goneSlots(tree)
	var gone []string
	if k == 1 {
		for _, alts := range slots {
			for _, p := range alts {
				if pathHash(p) == diff {
					gone = []string{p}
				}
			}
		}
	} else {
		// Several gone: the same choice for every raw kernel trace (a
		// trace's are all .trace or all .trace.xz).
		for _, last := range []bool{false, true} {
			var sum uint64
			pick := make([]string, 0, len(slots))
			for _, alts := range slots {
				p := alts[0]
				if last {
					p = alts[len(alts)-1]
				}
				pick, sum = append(pick, p), sum+pathHash(p)
			}
			if len(pick) == k && sum == diff {
				gone = pick
				break
			}
		}
	}
	switch {
	case len(gone) == 1:
		return gone[0] + " gone"
	case len(gone) > 1:
		slices.Sort(gone)
		return fmt.Sprintf("%s and %d more gone", gone[0], len(gone)-1)
	case k == 1:
		return "1 data file gone"
	}
	return fmt.Sprintf("%d data files gone", k)
}

// goneSlots are the data files the tree shows were there and are not,
// each as the paths it may have had.
func goneSlots(tree *Tree) [][]string {
	var slots [][]string
	missing := func(alts ...string) {
		for _, p := range alts {
			if tree.Has(p) {
				return
			}
		}
		slots = append(slots, alts)
	}
	stems := map[string][]string{}
	hasCtx := false
	for p := range tree.Files {
		if path.Dir(p) != TracesDir {
			continue
		}
		b := path.Base(p)
		if m := processedRe.FindStringSubmatch(b); m != nil {
			raw := path.Join(TracesDir, m[1]+".trace")
			switch m[2] {
			case "tracez":
				stems[m[1]] = []string{raw, raw + ".xz"}
			case "traceg":
				if stems[m[1]] == nil {
					stems[m[1]] = []string{raw}
				}
			default:
				if stems[m[1]] == nil {
					stems[m[1]] = []string{raw + ".xz"}
				}
			}
			continue
		}
		list, processed := strings.CutSuffix(b, ".g")
		if ctx, ok := RawListContext(list); ok {
			hasCtx = hasCtx || ctx != ""
			if processed && list != RawKernelList {
				missing(path.Join(TracesDir, list))
			}
			if list != RawKernelList || !processed {
				missing(StatsFor(path.Join(TracesDir, list)))
			}
		}
		if ctx, ok := strings.CutPrefix(b, "stats_ctx_"); ok {
			hasCtx = true
			missing(path.Join(TracesDir, RawKernelListCtxPrefix+ctx))
		}
	}
	// kernelslist.g is the processed kernelslist, or the lists of a
	// trace's contexts merged.
	if tree.Has(KernelsListG) && !hasCtx {
		missing(path.Join(TracesDir, RawKernelList))
		missing(path.Join(TracesDir, "stats.csv"))
	}
	if tree.Has(TracesDir+"/stats.csv") && !hasCtx {
		missing(path.Join(TracesDir, RawKernelList))
	}
	for _, alts := range stems {
		missing(alts...)
	}
	slices.SortFunc(slots, func(a, b []string) int { return strings.Compare(a[0], b[0]) })
	return slices.CompactFunc(slots, func(a, b []string) bool { return a[0] == b[0] })
}
