package results

import (
	"strings"
	"testing"

	"github.com/cascade-sim/cascade"
)

// TestGPUWarnings: a profile is said to be of another GPU than the
// config models (by compute capability, or by the card a tested config
// models) or than the trace was taken on (by its metadata's gpu, else its
// architecture); one of the very GPU is not, nor is one that gave no
// counters.
func TestGPUWarnings(t *testing.T) {
	t.Parallel()
	titanx := cascade.SimConfig{Name: "SM6_TITANX", ComputeCapability: "6.1"}
	qv100 := cascade.SimConfig{Name: "SM7_QV100", ComputeCapability: "7.0"}
	variant := cascade.SimConfig{Name: "SM6_TITANX-64SM", Base: "SM6_TITANX", ComputeCapability: "6.1"}
	trace := func(gpu string, profiles ...cascade.ProfileRead) cascade.Trace {
		t := cascade.Trace{ID: "t", TraceGPUArch: "sm_61", TraceGPUArchFrom: cascade.ArchFromMetadata, Profiles: profiles}
		if gpu != "" {
			t.SourceGPU = &gpu
		}
		return t
	}
	prof := func(gpu, cc string) cascade.ProfileRead {
		return cascade.ProfileRead{File: "p.csv", GPU: gpu, CC: cc, Matched: 1, Stats: []string{"cycles"}}
	}
	for _, c := range []struct {
		name  string
		t     cascade.Trace
		cfg   cascade.SimConfig
		found bool
		want  []string // parts of each warning, in order
	}{
		{"the very GPU", trace("NVIDIA TITAN X (Pascal)", prof("TITAN X (Pascal)", "")), titanx, true, nil},
		{"a variant of its config", trace("NVIDIA TITAN X (Pascal)", prof("NVIDIA TITAN X (Pascal)", "6.1")), variant, true, nil},
		{"same architecture, another card than the config models", trace("NVIDIA GeForce GTX 1080", prof("NVIDIA GeForce GTX 1080", "")), titanx, true,
			[]string{"measured on NVIDIA GeForce GTX 1080 (sm_61); config SM6_TITANX models a TITAN X (Pascal)"}},
		{"another architecture than the config", trace("NVIDIA GeForce GTX 1080", prof("NVIDIA GeForce GTX 1080", "")), qv100, true,
			[]string{"config SM7_QV100 models sm_70: its figures set two GPUs side by side"}},
		{"another GPU than the trace's", trace("NVIDIA GeForce GTX 1080", prof("Quadro GV100", "7.0")), qv100, true,
			[]string{"measured on Quadro GV100 (sm_70); the trace was taken on NVIDIA GeForce GTX 1080"}},
		{"another architecture than the trace's, its gpu unknown", trace("", prof("Quadro GV100", "7.0")), qv100, true,
			[]string{"the trace was taken on an sm_61 GPU"}},
		{"a config that is gone, by its name", trace("", prof("Quadro GV100", "")), cascade.SimConfig{Name: "SM6_TITANX"}, false,
			[]string{"config SM6_TITANX models a TITAN X (Pascal)", "the trace was taken on an sm_61 GPU"}},
		{"a profile that gave nothing", trace("NVIDIA GeForce GTX 1080", cascade.ProfileRead{File: "p.csv", GPU: "Quadro GV100", Error: "line 3"}), titanx, true, nil},
		{"an unknown card", trace("", prof("Some GPU", "")), titanx, true, nil},
		{"a GPU named by index", trace("NVIDIA GeForce GTX 1080", prof("0", "")), titanx, true, nil},
		{"a GPU named by index, with its compute capability", trace("", prof("0", "9.0")), titanx, true,
			[]string{"profile p.csv was measured on an sm_90 GPU (device 0); config SM6_TITANX models sm_61", "profile p.csv was measured on an sm_90 GPU (device 0); the trace was taken on an sm_61 GPU"}},
	} {
		got := gpuWarnings(c.t, c.cfg, c.found)
		if len(got) != len(c.want) {
			t.Errorf("%s: %q, want %d warnings", c.name, got, len(c.want))
			continue
		}
		for i, w := range c.want {
			if !strings.Contains(got[i], w) {
				t.Errorf("%s: %q, want it to say %q", c.name, got[i], w)
			}
		}
	}
}
