package accelwattch_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade/accelsim/accelwattch"
)

// FuzzReader: a report never panics the reader; it gives at most one
// kernel per kernel_name line, each named; it ends with io.EOF or an
// *Error naming the file and a line of the input.
func FuzzReader(f *testing.F) {
	if b, err := os.ReadFile(real); err == nil {
		f.Add(b)
	}
	f.Add([]byte("kernel_name = k \nkernel_launch_uid = 3\nKernel Average Power Data:\nkernel_avg_power = nan\ngpu_avg_STATICP = 1\n"))
	f.Add([]byte("kernel_name = a\nkernel_avg_power = 1\nkernel_avg_power = 2\n"))
	f.Add([]byte("gpu_avg_DRAMP, = 1\n"))
	f.Fuzz(func(t *testing.T, report []byte) {
		r := accelwattch.NewReader(bytes.NewReader(report), "f.log")
		names := bytes.Count(report, []byte("kernel_name"))
		lines := bytes.Count(report, []byte("\n")) + 1
		n := 0
		for {
			k, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				var e *accelwattch.Error
				if !errors.As(err, &e) || e.File != "f.log" || e.Line < 1 || e.Line > lines+1 || !strings.HasPrefix(err.Error(), "f.log:") {
					t.Fatalf("error %#v", err)
				}
				break
			}
			n++
			if k.Name == "" || len(k.Breakdown) != len(accelwattch.Components) {
				t.Fatalf("kernel %+v", k)
			}
		}
		if n > names {
			t.Fatalf("%d kernels from %d kernel_name lines", n, names)
		}
	})
}
