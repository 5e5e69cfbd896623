package simlog

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade"
)

// FuzzParse: a simulator log never panics the parser; fed whole or in
// pieces cut anywhere, it gives the same kernels, progress and outcome,
// the kernels of the pieces taken (Take) after each piece and the rest
// at the end (TakeAll), each once and in order;
// an outcome fails with a reason or succeeds with none, and success
// means every expected kernel has a complete result.
func FuzzParse(f *testing.F) {
	logs, _ := filepath.Glob("testdata/*.log")
	for _, p := range logs {
		if b, err := os.ReadFile(p); err == nil && len(b) < 64<<10 {
			f.Add(b, uint8(3), []byte{7, 1, 200})
		}
	}
	f.Add([]byte("launching kernel name: _Z1kv uid: 1 cuda_stream_id: 0\nkernel_name = _Z1kv\r\ngpu_sim_cycle = 10\ngpu_sim_insn = 20\ngpu_ipc = -nan\ngpu_tot_sim_cycle = 10\nGPGPU-Sim: *** exit detected ***"), uint8(1), []byte{5})
	f.Add([]byte("kernel_name = a b\nkernel_launch_uid = 2 1\ngpu_sim_cycle = 0\ngpu_sim_insn = 0\nGPGPU-Sim: ** break due to reaching the maximum cycles (or instructions) **\n"), uint8(2), []byte{})
	f.Fuzz(func(t *testing.T, log []byte, expected uint8, cuts []byte) {
		whole, err := Parse(bytes.NewReader(log), int(expected))
		if err != nil {
			return // a line past the scanner's limit
		}
		pieces := NewParser(int(expected))
		var taken []cascade.RunKernel
		rest := log
		for i := 0; len(rest) > 0; i++ {
			n := len(rest)
			if i < len(cuts) {
				n = min(n, int(cuts[i]))
			}
			pieces.Write(rest[:n])
			rest = rest[n:]
			taken = append(taken, pieces.Take()...)
		}
		for _, exit := range []Exit{{Code: 0}, {Code: 1}, {Code: -1, Signal: "killed"}} {
			a, b := whole.Outcome(exit), pieces.Outcome(exit)
			if a != b {
				t.Fatalf("exit %v: whole log gives %+v, in pieces %+v", exit, a, b)
			}
			if a.Succeeded != (a.Failure == "") || a.Succeeded != (a.Reason == "") {
				t.Fatalf("outcome %+v", a)
			}
			if a.Succeeded && (!exit.OK() || whole.Progress().Done < int(expected)) {
				t.Fatalf("succeeded with exit %v and progress %+v", exit, whole.Progress())
			}
		}
		ka, kb := whole.Kernels(), append(taken, pieces.TakeAll()...)
		if !reflect.DeepEqual(ka, kb) {
			t.Fatalf("whole log gives kernels %+v, in pieces %+v", ka, kb)
		}
		if pa, pb := whole.Progress(), pieces.Progress(); pa != pb || pa.Done > len(ka) || pa.Launched > strings.Count(string(log), logLaunching) {
			t.Fatalf("progress %+v, in pieces %+v, with %d kernels", pa, pb, len(ka))
		}
		for _, k := range ka {
			if math.IsNaN(k.IPC) || math.IsInf(k.IPC, 0) {
				t.Fatalf("kernel %+v: IPC %v", k, k.IPC)
			}
		}
	})
}
