package kernellist

import (
	"fmt"
	"os"
	"strings"
)

// MissingFilesError is a kernel list whose kernel lines name trace files
// that are not on disk: Accel-Sim would stop at the first of them with an
// unreadable trace header, after simulating every kernel before it.
type MissingFilesError struct {
	List    string    // the list's path
	Missing []Command // the kernel lines whose files are missing, in list order
}

func (e *MissingFilesError) Error() string {
	c := e.Missing[0]
	more := ""
	if n := len(e.Missing) - 1; n > 0 {
		more = fmt.Sprintf(" (and %d more of its kernel lines: %s)", n, e.lines(5))
	}
	return fmt.Sprintf("%s line %d names %s, which is not on disk%s", e.List, c.Line, c.TraceFile, more)
}

// lines lists up to n of the missing lines after the first, as "line L
// (file)".
func (e *MissingFilesError) lines(n int) string {
	rest := e.Missing[1:]
	var b strings.Builder
	for i, c := range rest {
		if i == n {
			fmt.Fprintf(&b, ", …")
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "line %d (%s)", c.Line, c.TraceFile)
	}
	return b.String()
}

// CheckFiles returns a [*MissingFilesError] naming every kernel line of l
// (or of cmds, when given) whose trace file is not on disk, or nil. A
// file that cannot be looked at for another reason (permissions) is left
// to the simulator to report.
func (l *List) CheckFiles(cmds ...Command) error {
	if cmds == nil {
		cmds = l.Commands
	}
	var missing []Command
	for _, c := range cmds {
		if c.IsMemcpy() {
			continue
		}
		if _, err := os.Stat(l.TracePath(c)); os.IsNotExist(err) {
			missing = append(missing, c)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return &MissingFilesError{List: l.Path, Missing: missing}
}
