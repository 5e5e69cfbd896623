package hwprofile_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade/accelsim/hwprofile"
)

// at is how every error of a profile's text begins: its file and line.
var at = regexp.MustCompile(`^f\.csv(:\d+(:\d+)?)?: `)

// FuzzReader: a profile never panics the reader; it is read whole or
// refused with an error naming the file (and line); every launch has a
// value per column, none for identity columns, and launches are numbered
// in order; the table binds to any header it reads and evaluates without
// panicking.
func FuzzReader(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.csv")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`"ID","Kernel Name","m"` + "\n" + `"","",""` + "\n" + `"0","k","1,0"` + "\n"))
	f.Add([]byte(`"Device","Context","Stream","Kernel","Correlation_ID","x"` + "\n,,,,,%\n\"G (0)\",\"1\",\"7\",\"k [3]\",3,\"12.5%\"\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := hwprofile.NewReader(strings.NewReader(string(data)), "f.csv")
		if err != nil {
			if !at.MatchString(err.Error()) {
				t.Fatalf("error without the file: %v", err)
			}
			return
		}
		h := r.Header()
		if len(h.Units) != len(h.Columns) || len(h.BaseUnits) != len(h.Columns) || len(h.Identity) != len(h.Columns) {
			t.Fatalf("header %+v", h)
		}
		var b *hwprofile.Bound
		var out []float64
		var l hwprofile.Launch
		for n := 0; ; n++ {
			err := r.Next(&l)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				if !at.MatchString(err.Error()) {
					t.Fatalf("error without the file: %v", err)
				}
				return
			}
			if l.Index != n || len(l.Values) != len(h.Columns) || l.Kernel == "" {
				t.Fatalf("launch %d: %+v", n, l)
			}
			for i, v := range l.Values {
				if h.Identity[i] && hwprofile.Present(v) {
					t.Fatalf("identity column %q has value %v", h.Columns[i], v)
				}
			}
			if b == nil {
				b = hwprofile.Builtin().Bind(h, hwprofile.GPU{Name: l.Device, CC: l.CC})
			}
			out = b.Eval(l.Values, out)
		}
		_ = r.Notes()
	})
}

// FuzzPairs: a pair file never panics its parser; what it accepts binds
// and evaluates over any header.
func FuzzPairs(f *testing.F) {
	f.Add("cycles ncu all gpc__cycles_elapsed.max * (2 - -x) / \"Grid X\"\n")
	f.Add("a nvprof sm_70 b.c/0\n# c\n")
	f.Fuzz(func(t *testing.T, text string) {
		ps, err := hwprofile.ParsePairs(strings.NewReader(text), "p.txt")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "p.txt") {
				t.Fatalf("error without the file: %v", err)
			}
			return
		}
		h := &hwprofile.Header{Profiler: hwprofile.NsightCompute}
		for _, p := range ps {
			h.Columns = append(h.Columns, p.Expr.Columns()...)
		}
		h.Identity = make([]bool, len(h.Columns))
		vals := make([]float64, len(h.Columns))
		b := (&hwprofile.Mapping{Pairs: ps}).Bind(h, hwprofile.GPU{Name: "x", CC: "7.0"})
		b.Eval(vals, nil)
	})
}
