package tracegen_test

import (
	"math"
	"testing"

	"github.com/cascade-sim/cascade/tracegen"
)

func TestShapes(t *testing.T) {
	cfg := tracegen.Shapes["decode48"]
	cfg.Launches = 300
	ls, err := tracegen.LLMLaunches(cfg, 736)
	if err != nil {
		t.Fatal(err)
	}
	type key struct {
		name   string
		blocks int
	}
	groups := map[key]int{}
	odd, batch := 0, 0
	for _, l := range ls {
		groups[key{l.Name, l.Blocks}]++
		if l.Name == "_Z13attention_rePdS_S_i" {
			odd++
		}
		if l.Step == 20 && l.Kind == "qkv" && l.Blocks != 6 {
			t.Errorf("step 20 is batch-2: qkv has %d blocks", l.Blocks)
		}
		if l.Step == 20 {
			batch++
		}
	}
	// A step: embed, qkv, attention, mlp_up, mlp_down, lm_head.
	if ls[6].Step != 1 || ls[6].Kind != "embed" || ls[7].Kind != "qkv" || ls[8].Kind != "attention" {
		t.Errorf("step 1 starts %+v %+v %+v", ls[6], ls[7], ls[8])
	}
	if odd != 3 || batch != 6 {
		t.Errorf("%d odd attentions (want steps 16, 32, 48), %d batch-2 launches", odd, batch)
	}
	if len(groups) < 15 {
		t.Errorf("%d (name, grid) groups: %v", len(groups), groups)
	}
	for name, cfg := range tracegen.Shapes {
		cfg.Launches = 500
		if _, err := tracegen.LLMLaunches(cfg, 736); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := tracegen.LLMLaunches(tracegen.LLMConfig{Kinds: 7}, 736); err == nil {
		t.Error("7 kinds a layer were taken")
	}
}

// TestNoise: durations of launches of one kernel and grid spread as far
// as Noise says: a standard deviation near Noise/√3 (uniform on ±Noise).
func TestNoise(t *testing.T) {
	cfg := tracegen.Shapes["noisy"]
	cfg.Launches = 3000
	ls, err := tracegen.LLMLaunches(cfg, 736)
	if err != nil {
		t.Fatal(err)
	}
	var ds []float64
	for _, l := range ls {
		if l.Kind == "qkv" && l.Step > 0 && l.Blocks == 3 {
			ds = append(ds, l.DurationNs)
		}
	}
	mean, ss := 0.0, 0.0
	for _, d := range ds {
		mean += d
	}
	mean /= float64(len(ds))
	for _, d := range ds {
		ss += (d - mean) * (d - mean)
	}
	cv := math.Sqrt(ss/float64(len(ds)-1)) / mean
	if want := 0.05 / math.Sqrt(3); len(ds) < 100 || cv < 0.8*want || cv > 1.2*want {
		t.Fatalf("%d qkv launches: duration CV %.4f, want about %.4f", len(ds), cv, want)
	}
}
