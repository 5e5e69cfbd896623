package runs_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/simconfig/simconfigtest"
	"github.com/cascade-sim/cascade/accelsim/simprobe"
	"github.com/cascade-sim/cascade/runs"
	"github.com/cascade-sim/cascade/runs/local"
	"github.com/cascade-sim/cascade/testkit/fakesim"
)

// TestProbe: the Manager asks the simulator (the stand-in, decoding
// binary versions 61, 70 and 86) at start which configs it accepts and
// which versions it decodes. A config with -smem_latency gets the
// simulator's line as its Err, and is refused at launch; an sm_90 trace is
// not simulatable, saying why. A second Manager on the same cache asks the
// simulator nothing; a simulator binary changed since is asked again.
func TestProbe(t *testing.T) {
	t.Parallel()
	sim := fakesim.Build(t)
	dir := t.TempDir()
	calls := filepath.Join(dir, "calls")
	script := filepath.Join(dir, "accel-sim.out")
	simconfigtest.WriteFile(t, script, "#!/bin/sh\necho >> "+calls+"\nexec "+sim+" \"$@\"\n")
	if err := os.Chmod(script, 0o755); err != nil {
		t.Fatal(err)
	}
	configs := simconfigtest.Write(t, t.TempDir(), simconfigtest.RTX3070)
	kepler := filepath.Join(configs, "SM3_KEPLER_TITAN")
	if err := os.CopyFS(kepler, os.DirFS(filepath.Join(configs, simconfigtest.RTX3070))); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(kepler, "gpgpusim.config"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("\n-smem_latency 24\n")
	f.Close()
	cache := filepath.Join(dir, "simprobe.json")
	ctx := context.Background()

	probe := func() *runs.Configs {
		t.Helper()
		ev := &events{}
		m := runs.New(runs.Config{
			BucketDir: t.TempDir(), WorkDir: t.TempDir(), ConfigsDir: configs, Events: ev,
			NewExecutor: func(h runs.Host) runs.Executor { return local.New(h, local.Config{Command: []string{"false"}}) },
			Probe:       simprobeSim(script), ProbeCache: cache,
		}).Configs()
		if m.SimConfigsChecked() {
			t.Error("checked before the probe")
		}
		m.Probe(ctx)
		if !m.SimConfigsChecked() || len(ev.all) != 1 || ev.all[0] != (cascade.SimConfigsChecked{}) {
			t.Errorf("after the probe: checked %v, events %v", m.SimConfigsChecked(), ev.all)
		}
		cfgs, err := m.SimConfigs()
		if err != nil {
			t.Fatal(err)
		}
		const refusal = "the simulator refuses it: GPGPU-Sim ** ERROR: Unknown Option: '-smem_latency'"
		for _, c := range cfgs {
			if want := map[string]string{"SM3_KEPLER_TITAN": refusal}[c.Name]; c.Err != want {
				t.Errorf("%s: Err %q, want %q", c.Name, c.Err, want)
			}
		}
		h100 := cascade.Trace{TraceGPUArch: "sm_90", TraceGPUArchFrom: cascade.ArchFromMetadata}
		const why = "the simulator (Accel-Sim [build fakesim]; GPGPU-Sim Simulator Version 4.2.0  [build fakesim]) decodes binary versions 61, 70, 86; this trace is sm_90 (from metadata.json): it needs a simulator that decodes 90 (Accel-Sim 2.0)"
		if got := m.NotSimulatable(h100); got != why {
			t.Errorf("sm_90 trace: %q, want %q", got, why)
		}
		if got := m.NotSimulatable(cascade.Trace{TraceGPUArch: "sm_86"}); got != "" {
			t.Errorf("sm_86 trace: %q", got)
		}
		// metadata.json says sm_90, the kernel headers 61: the simulator
		// decodes the headers' (QA: refused up front, though it runs);
		// and the other way round it is the headers' that it lacks.
		if got := m.NotSimulatable(cascade.Trace{TraceGPUArch: "sm_90", TraceGPUArchFrom: cascade.ArchFromMetadata, HeaderArch: "sm_61"}); got != "" {
			t.Errorf("sm_90 by metadata.json, sm_61 by its headers: %q", got)
		}
		const whyHeaders = "the simulator (Accel-Sim [build fakesim]; GPGPU-Sim Simulator Version 4.2.0  [build fakesim]) decodes binary versions 61, 70, 86; this trace is sm_90 (by its kernel traces' headers; metadata.json says sm_61): it needs a simulator that decodes 90 (Accel-Sim 2.0)"
		if got := m.NotSimulatable(cascade.Trace{TraceGPUArch: "sm_61", TraceGPUArchFrom: cascade.ArchFromMetadata, HeaderArch: "sm_90"}); got != whyHeaders {
			t.Errorf("sm_61 by metadata.json, sm_90 by its headers: %q, want %q", got, whyHeaders)
		}
		return m
	}
	count := func() int {
		b, _ := os.ReadFile(calls)
		return strings.Count(string(b), "\n")
	}

	probe()
	first := count()
	if first == 0 {
		t.Fatal("the simulator was not asked")
	}
	probe()
	if n := count(); n != first {
		t.Errorf("the cached answers were not reused: %d more simulator runs", n-first)
	}
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(script, later, later); err != nil {
		t.Fatal(err)
	}
	probe()
	if n := count(); n == first {
		t.Error("a simulator changed since was not asked again")
	}
}

func simprobeSim(command string) simprobe.Simulator {
	return simprobe.Simulator{Command: []string{command}, Env: []string{fakesim.EnvBinaryVersions + "=61,70,86"}}
}
