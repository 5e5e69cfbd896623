package sampling_test

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/sampling"
)

// llmKernel is one kernel of a synthetic LLM layer: its name and, per
// launch shape, a grid, warp instructions and a lognormal duration.
type llmKernel struct {
	name   string
	shapes []llmShape
}

type llmShape struct {
	grid  cascade.Dim3
	insts int64
	mu    float64 // log of the median duration, ns
	sigma float64
}

// llmTrace generates n launches as an LLM's steps launch them: a prefill
// step (each kernel at its first shape) then decode steps (each at one of
// its other shapes, as the batch changes every few steps), layers of the
// same kernels over and over. Durations are lognormal per (name, grid);
// with timed false none is measured.
func llmTrace(rng *rand.Rand, n, names int, timed bool) sampling.Input {
	kernels := make([]llmKernel, names)
	for k := range kernels {
		kernels[k].name = fmt.Sprintf("_Z%dllm_kernel_%dPfS_i", 14+len(fmt.Sprint(k)), k)
		shapes := 2 + rng.IntN(4)
		for s := range shapes {
			blocks := 1 << (3 + rng.IntN(8))
			kernels[k].shapes = append(kernels[k].shapes, llmShape{
				grid:  cascade.Dim3{X: blocks, Y: 1 + s%2, Z: 1},
				insts: int64(blocks) * int64(200+rng.IntN(5000)),
				mu:    math.Log(2000 + rng.Float64()*200000),
				sigma: 0.02 + rng.Float64()*0.28,
			})
		}
	}
	block := cascade.Dim3{X: 128, Y: 1, Z: 1}
	in := sampling.Input{Launches: make([]sampling.Launch, 0, n)}
	const layers = 32
	step, shape := 0, 0
	for len(in.Launches) < n {
		if step > 0 && step%8 == 1 {
			shape = 1 + rng.IntN(3) // the batch changed
		}
		for range layers {
			for k := range kernels {
				if len(in.Launches) == n {
					break
				}
				kk := &kernels[k]
				sh := &kk.shapes[0]
				if step > 0 {
					sh = &kk.shapes[1+(shape-1)%(len(kk.shapes)-1)]
				}
				l := sampling.Launch{
					KernelID: len(in.Launches) + 1, Name: kk.name, Grid: sh.grid, Block: block,
					WarpInstructions: sh.insts,
				}
				if timed {
					l.DurationNs = math.Exp(sh.mu + sh.sigma*rng.NormFloat64())
				}
				in.Launches = append(in.Launches, l)
			}
		}
		step++
	}
	return in
}

// newRand is a generator with a fixed seed.
func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x5eed)) }
