package l2warm_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/kernellist"
	"github.com/cascade-sim/cascade/accelsim/l2warm"
	"github.com/cascade-sim/cascade/accelsim/posttraces"
	"github.com/cascade-sim/cascade/accelsim/simlog"
	"github.com/cascade-sim/cascade/accelsim/simstats"
	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/tracegen"
)

// TestRealWarmSegment: on the real simulator, a segment of one decode
// attention launch misses in L2 more often than the same launch in the
// full simulation (the prefill's attention left the lines it reads in
// L2), and with the warming kernel first it misses no more often than
// there. The trace is a small LLM-like one (tracegen): a prefill of
// embed, qkv, attention, lm_head, then a decode step's embed, qkv and
// attention.
func TestRealWarmSegment(t *testing.T) {
	accel := testkit.RealAccelSim(t)
	src := testkit.RealTrace(t, "vecadd-sm61")
	gen := t.TempDir()
	const launches = 7
	res, err := tracegen.GenerateLLM(context.Background(), gen, tracegen.LLMConfig{From: src, Launches: launches, Layers: 1, Kinds: 2, DecodeSteps: 2, Noise: -1})
	if err != nil {
		t.Fatal(err)
	}
	if l := res.Launches[launches-1]; l.Kind != "attention" || l.Step != 1 {
		t.Fatalf("launch %d is %+v, want the decode step's attention", launches, l)
	}
	traces := filepath.Join(gen, "traces")
	if err := posttraces.Run(context.Background(), traces, posttraces.Options{Text: true, Jobs: 2}); err != nil {
		t.Fatal(err)
	}
	list, err := kernellist.Read(filepath.Join(traces, kernellist.Name))
	if err != nil {
		t.Fatal(err)
	}
	cfg := cascade.SimConfig{Name: "SM6_TITANX", Dir: filepath.Join(accel, "gpu-simulator/gpgpu-sim/configs/tested-cfgs/SM6_TITANX"),
		TraceDir: filepath.Join(accel, "gpu-simulator/configs/tested-cfgs/SM6_TITANX")}
	l2, err := l2warm.L2(cfg)
	if err != nil || l2.Flushed || l2.Bytes != 3<<20 {
		t.Fatalf("SM6_TITANX's L2: %+v, %v", l2, err)
	}
	seg := []kernellist.Ref{{ID: launches}}
	plan, err := l2warm.Plan(l2warm.NewCache(t.TempDir()), list, seg, l2.Window(l2warm.WindowShare))
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Lines) == 0 {
		t.Fatal("nothing to warm before the decode attention")
	}

	full := simulate(t, accel, cfg, list, nil, l2warm.Warm{})
	cold := simulate(t, accel, cfg, list, seg, l2warm.Warm{})
	warm := simulate(t, accel, cfg, list, seg, plan)
	t.Logf("decode attention's L2 misses: full run %d, cold segment %d, warmed segment %d (%d lines from %d earlier launches)",
		full, cold, warm, plan.Lines.Count(), plan.Launches)
	if cold <= full {
		t.Errorf("the cold segment misses %d times, the full run %d: no warming to show", cold, full)
	}
	if warm > full {
		t.Errorf("the warmed segment misses %d times, more than the full run's %d", warm, full)
	}
}

// simulate runs the kernels of list refs names (all for nil), with w's
// warming kernel first when it has lines, and returns the last kernel's
// L2 misses (reads and writes).
func simulate(t *testing.T, accel string, cfg cascade.SimConfig, list *kernellist.List, refs []kernellist.Ref, w l2warm.Warm) int {
	t.Helper()
	r := simulateAll(t, accel, cfg, list, refs, w)
	return r[len(r)-1][1]
}

// simulateAll gives each kernel's cycles and L2 misses.
func simulateAll(t *testing.T, accel string, cfg cascade.SimConfig, list *kernellist.List, refs []kernellist.Ref, w l2warm.Warm) [][2]int {
	t.Helper()
	dir := t.TempDir()
	if refs == nil {
		for _, k := range list.Kernels() {
			refs = append(refs, k.Kernel)
		}
	}
	sub, err := kernellist.WriteSubset(list, dir, refs)
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Lines) > 0 {
		name, err := l2warm.WriteKernel(dir, w, sub.TracePath(sub.Kernels()[0]))
		if err != nil {
			t.Fatal(err)
		}
		if sub, err = kernellist.PutFirst(sub, name); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{cfg.Dir, cfg.TraceDir} {
		es, err := os.ReadDir(d)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range es {
			b, err := os.ReadFile(filepath.Join(d, e.Name()))
			if err == nil {
				err = os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	cmd := exec.Command(filepath.Join(accel, "gpu-simulator/bin/release/accel-sim.out"), "-trace", "./"+kernellist.Name, "-config", "gpgpusim.config", "-config", "trace.config")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+filepath.Join(accel, "gpu-simulator/gpgpu-sim/lib/gcc-12.2.0/cuda-11080/release"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("simulator: %v\n%s", err, out)
	}
	n := len(refs)
	tbl := simstats.Builtin()
	p := simlog.NewParser(n).ReadStats(tbl)
	p.Write(out)
	if o := p.Outcome(simlog.Exit{}); !o.Succeeded {
		t.Fatalf("simulation of %v: %s", refs, o.Reason)
	}
	ks := p.TakeAll()
	if len(ks) != n {
		t.Fatalf("%d results, want %d (the warming kernel's left out)", len(ks), n)
	}
	var res [][2]int
	for _, k := range ks {
		v, err := simstats.Decode(k.Stats)
		if err != nil {
			t.Fatal(err)
		}
		get := func(name string) int {
			i := tbl.Index(name)
			if i < 0 || !simstats.Present(v[i]) {
				t.Fatalf("no %s: %v", name, v)
			}
			return int(v[i])
		}
		misses := get("l2_read_accesses") - get("l2_read_hits") + get("l2_write_accesses") - get("l2_write_hits")
		if misses < 0 {
			t.Fatalf("negative misses %d", misses)
		}
		res = append(res, [2]int{int(k.SimCycles), misses})
	}
	return res
}
