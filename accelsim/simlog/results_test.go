package simlog

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/simlog/simlogtest"
	"github.com/cascade-sim/cascade/accelsim/simstats"
)

// takeEvery feeds lines to a new parser, taking its final results every
// n lines, and returns everything it gave, TakeAll's rest after the
// outcome included.
func takeEvery(lines []string, expected, n int, stats bool) (*Parser, []cascade.RunKernel) {
	p := NewParser(expected)
	if stats {
		p.ReadStats(simstats.Builtin())
	}
	var got []cascade.RunKernel
	for i, l := range lines {
		p.Line(l)
		if (i+1)%n == 0 {
			got = append(got, p.Take()...)
		}
	}
	p.Outcome(Exit{})
	return p, append(got, p.TakeAll()...)
}

// TestTakeGivesEachResultOnceInLaunchOrder: whenever it is asked, Take
// gives the results that became final since, in launch order, and
// TakeAll the rest: together they are every result once, as a parser
// never taken from lists them at the end, whether results are taken after
// every line or every few, and as a parser that keeps every result to the
// end (as it once did) gives them, across every chunk's boundary, with concurrent
// kernels finishing out of order.
func TestTakeGivesEachResultOnceInLaunchOrder(t *testing.T) {
	logs := map[string][]string{}
	paths, _ := filepath.Glob("testdata/*.log")
	for _, path := range paths {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		logs[filepath.Base(path)] = strings.Split(string(b), "\n")
	}
	var gen bytes.Buffer
	simlogtest.WriteLog(&gen, simlogtest.RealBlock(t), 300, true)
	logs["generated"] = strings.Split(gen.String(), "\n")
	// Kernels finish out of order: 2 and 4 before 1, 3 after.
	var ooo []string
	for uid := 1; uid <= 6; uid++ {
		ooo = append(ooo, fmt.Sprintf("Processing kernel /t/kernel-%d.traceg", uid),
			fmt.Sprintf("launching kernel name: _Z1kv uid: %d cuda_stream_id: %d", uid, uid%3))
	}
	block := func(uid, cycles int) []string {
		return []string{"kernel_name = _Z1kv ", fmt.Sprintf("kernel_launch_uid = %d ", uid),
			fmt.Sprintf("gpu_sim_cycle = %d", cycles), "gpu_sim_insn = 100", fmt.Sprintf("gpu_tot_sim_cycle = %d", 1000+cycles),
			fmt.Sprintf("L2_total_cache_accesses = %d", uid)}
	}
	for _, uid := range []int{2, 4, 1, 3, 6, 5} {
		ooo = append(ooo, block(uid, 10*uid)...)
	}
	logs["out-of-order"] = append(ooo, logExit)

	for name, lines := range logs {
		for _, stats := range []bool{true, false} {
			name := fmt.Sprintf("%s (statistics %v)", name, stats)
			whole := NewParser(3)
			if stats {
				whole.ReadStats(simstats.Builtin())
			}
			whole.keepAll = true
			for _, l := range lines {
				whole.Line(l)
			}
			whole.Outcome(Exit{})
			want := whole.Kernels()
			for _, n := range []int{1, 2, 7, 1 << 30} {
				p, got := takeEvery(lines, 3, n, stats)
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s, taken every %d lines: got %d results%s\nwant %d%s", name, n, len(got), kernelsText(got), len(want), kernelsText(want))
				}
				if ks := p.Kernels(); len(ks) != 0 {
					t.Errorf("%s: %d results left after TakeAll", name, len(ks))
				}
				if p.Progress() != whole.Progress() {
					t.Errorf("%s: progress %+v, taken from %+v", name, whole.Progress(), p.Progress())
				}
			}
		}
	}
	if ks := takeAllUIDs(logs["out-of-order"]); !reflect.DeepEqual(ks, []int{1, 2, 3, 4, 5, 6}) {
		t.Errorf("out-of-order log gives uids %v", ks)
	}
}

func takeAllUIDs(lines []string) []int {
	_, ks := takeEvery(lines, 6, 1, true)
	var uids []int
	for _, k := range ks {
		uids = append(uids, k.LaunchUID)
	}
	return uids
}

// TestTakeKeepsAChunk: a parser taken from after every line holds a
// kernel or two of a long run, never the run: its results, trace paths,
// launches and names all stay small, and each result leaves complete,
// statistics included, one kernel after its block.
func TestTakeKeepsAChunk(t *testing.T) {
	const n = 2000
	var log bytes.Buffer
	simlogtest.WriteLog(&log, simlogtest.RealBlock(t), n, true)
	p := NewParser(n).ReadStats(simstats.Builtin())
	taken, most := 0, 0
	for _, l := range strings.Split(log.String(), "\n") {
		p.Line(l)
		for _, k := range p.Take() {
			if taken++; k.LaunchUID != taken || k.Stats == nil || k.TraceFile != fmt.Sprintf("./traces/kernel-%d.traceg", taken) || k.Name != "_Z6vecAddPdS_S_i" {
				t.Fatalf("result %d: %+v", taken, k)
			}
		}
		most = max(most, len(p.results)+len(p.out), len(p.processed), len(p.launched), len(p.names), len(p.byUID))
		if d := p.Progress().Done; d-taken > 1 {
			t.Fatalf("%d kernels done, %d taken", d, taken)
		}
	}
	if most > 2 {
		t.Errorf("the parser held %d of something at once", most)
	}
	if o := p.Outcome(Exit{}); !o.Succeeded {
		t.Fatal(o.Reason)
	}
	rest := p.TakeAll()
	if taken+len(rest) != n || len(rest) != 1 || rest[0].Stats == nil {
		t.Errorf("%d taken, then %d", taken, len(rest))
	}
}

// TestResultFinalWhenTheNextKernelStarts: on the real simulator's log of
// two kernels, the first kernel's result, statistics included (the
// simulation time printed after its block among them), is final as soon
// as the simulator launches the second kernel: progress and the results
// taken agree while the second kernel runs.
func TestResultFinalWhenTheNextKernelStarts(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "simstats", "testdata", "vecadd-x2-SM7_QV100.log"))
	if err != nil {
		t.Fatal(err)
	}
	p := NewParser(2).ReadStats(simstats.Builtin())
	var taken []cascade.RunKernel
	second := false
	for _, l := range strings.Split(string(b), "\n") {
		p.Line(l)
		taken = append(taken, p.Take()...)
		if strings.HasPrefix(l, "launching kernel name: _Z6vecAddPdS_S_i uid: 2") {
			second = true
		}
		if second && strings.HasPrefix(l, "kernel_name = ") {
			second = false // the second kernel ended: its result waits for the end of the log
			continue
		}
		if second {
			if d := p.Progress().Done; d != len(taken) {
				t.Fatalf("at %q: %d kernels done, %d results final", l, d, len(taken))
			}
		}
	}
	if len(taken) != 1 {
		t.Fatalf("%d results final before the end", len(taken))
	}
	v, err := simstats.Decode(taken[0].Stats)
	if err != nil {
		t.Fatal(err)
	}
	if got := v[simstats.Builtin().Index("sim_seconds")]; got != 21 {
		t.Errorf("first kernel's sim_seconds = %v, want 21 (printed after its statistics)", got)
	}
	if got := v[simstats.Builtin().Index("cycles")]; got <= 0 {
		t.Errorf("first kernel's cycles = %v", got)
	}
}
