package upload

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"strings"

	"github.com/cascade-sim/cascade/accelsim/kernellist"
	"github.com/cascade-sim/cascade/tracedir"
)

// ErrNotATrace is wrapped by Upload's error for a source directory that
// holds no trace: nothing to upload, or no kernel list.
var ErrNotATrace = errors.New("not an NVBit trace directory")

// checkSource makes sure, before a byte is sent, that src holds files and
// that every kernel trace its kernel lists (traces/kernelslist,
// kernelslist_ctx_*, or a post-processed kernelslist.g, which then wins)
// name is there: the
// server would otherwise take the upload and fail it after the fact. A metadata.json that already says status "failed" is sent as
// it is: the profiler reports a failed trace so.
func checkSource(src *source, meta *metadata) error {
	if len(src.files) == 0 {
		what := "is empty"
		if src.metadata != "" {
			what = "holds only metadata.json"
		}
		return fmt.Errorf("%s %s: %w; point cascade upload at the directory the tracer wrote (it holds traces/kernelslist and the kernel-N.trace files)", src.root, what, ErrNotATrace)
	}
	if err := checkFolder(src); err != nil {
		return err
	}
	if meta.failed() {
		return nil
	}
	have := map[string]bool{}
	var raw, processed []sourceFile
	for _, f := range src.files {
		have[f.rel] = true
		switch base := path.Base(f.rel); {
		case path.Dir(f.rel) != "traces":
		case base == "kernelslist.g":
			processed = append(processed, f)
		case base == "kernelslist" || strings.HasPrefix(base, "kernelslist_ctx_"):
			raw = append(raw, f)
		}
	}
	// An upload with kernelslist.g skips post-processing: the raw lists
	// are then not read, and the files they name need not be there.
	lists := raw
	if len(processed) > 0 {
		lists = processed
	}
	var missing []string
	for _, l := range lists {
		f, err := os.Open(l.path)
		if err != nil {
			return fmt.Errorf("upload: %w", err)
		}
		cmds, err := kernellist.Parse(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("upload: %s: %w", l.rel, err)
		}
		for _, c := range cmds {
			if c.IsMemcpy() {
				continue
			}
			name := path.Join("traces", c.TraceFile)
			if !have[name] && !have[name+".xz"] {
				missing = append(missing, fmt.Sprintf("%s:%d names %s", l.rel, c.Line, c.TraceFile))
			}
		}
	}
	if len(missing) > 0 {
		more := ""
		if len(missing) > 5 {
			more = fmt.Sprintf(" and %d more", len(missing)-5)
			missing = missing[:5]
		}
		return fmt.Errorf("upload: %s: kernel traces missing, nothing was sent: %s%s, which %s not in traces/; copy the missing files there (or trace again) and run the same command",
			src.root, strings.Join(missing, "; "), more, map[bool]string{true: "is", false: "are"}[len(missing) == 1 && more == ""])
	}
	return nil
}

// failed reports whether metadata.json says status "failed", in any case,
// as the server reads it (tracedir.Metadata.Failed).
func (m *metadata) failed() bool {
	var status string
	return json.Unmarshal(m.get("status"), &status) == nil && (tracedir.Metadata{Status: status}).Failed()
}
