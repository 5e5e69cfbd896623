package tracegen

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// An LLM-like trace built from one real raw kernel trace (a vecAdd-like
// kernel: each block reads two arrays and writes a third, one element a
// thread). The trace is a series of requests, each a prefill step (large
// grids) then decode steps (small grids); a step is an embedding kernel,
// Layers layers of six kernels (rmsnorm, qkv, attention, out_proj,
// mlp_up, mlp_down) and an lm_head kernel. Each kernel is the source
// kernel renamed, with a grid of k blocks: the source's blocks, dropped
// or replicated with their block index and memory addresses shifted as a
// larger vecAdd would access them. A kernel reads a per-layer, per-kind
// "weight" array, reads the activation buffer the kernel before it wrote
// and writes the other one, so L2 and DRAM state between kernels matters
// as in a model. Attention's grid grows with the sequence length during
// decode.
//
// Measured durations (real_timing.json) are made up: a deterministic
// function of the kernel's work, DurationBaseNs plus DurationPerInstNs a
// warp instruction, times 1 + a noise of up to ±Noise drawn from a hash
// of the launch's position. Everything written depends only on the
// LLMConfig and the source trace.

// LLMConfig describes an LLM-like trace. The zero value of a field means
// its documented default.
type LLMConfig struct {
	From        string // source trace directory (holding traces/kernel-1.trace, or the traces dir itself)
	Launches    int    // kernel launches in all (default 300)
	Layers      int    // layers a step (default 4)
	DecodeSteps int    // decode steps a request (default 11)
	Prompt      int    // prompt tokens (default 512): attention's decode grid is 1 + tokens/64

	// Kinds is how many kernels a layer launches (default 6, at most 6):
	// qkv, attention, mlp_up, mlp_down, out_proj, rmsnorm in that order of
	// choice, launched in a layer's order.
	Kinds int
	// OddEvery, when > 0, makes every OddEvery-th decode step launch an
	// odd variant of attention (another kernel name, twice the grid), as
	// a model's cache reallocation or split-K path does now and then.
	OddEvery int
	// BatchEvery, when > 0, makes every BatchEvery-th decode step a
	// batch-2 step: its decode grids doubled.
	BatchEvery int

	DurationBaseNs    float64 // default 2500
	DurationPerInstNs float64 // default 0.35
	Noise             float64 // default 0.02; < 0 for none
}

// kindChoice is the order llmKinds are chosen in when a layer launches
// fewer than all of them (LLMConfig.Kinds).
var kindChoice = []string{"qkv", "attention", "mlp_up", "mlp_down", "out_proj", "rmsnorm"}

func (c *LLMConfig) defaults() error {
	if c.Launches == 0 {
		c.Launches = 300
	}
	if c.Layers == 0 {
		c.Layers = 4
	}
	if c.DecodeSteps == 0 {
		c.DecodeSteps = 11
	}
	if c.Prompt == 0 {
		c.Prompt = 512
	}
	if c.Kinds == 0 {
		c.Kinds = len(llmKinds)
	}
	if c.DurationBaseNs == 0 {
		c.DurationBaseNs = 2500
	}
	if c.DurationPerInstNs == 0 {
		c.DurationPerInstNs = 0.35
	}
	// A negative Noise stays negative (none, see noiseAmp): defaults runs
	// again on a config it filled in (GenerateLLM's, in LLMLaunches), and
	// a 0 there would become the default 2 %.
	if c.Noise == 0 {
		c.Noise = 0.02
	}
	if c.Launches < 1 || c.Layers < 1 || c.DecodeSteps < 0 || c.Prompt < 1 {
		return fmt.Errorf("tracegen: llm: launches, layers and prompt must be >= 1 and decode steps >= 0")
	}
	if c.Kinds < 1 || c.Kinds > len(llmKinds) || c.OddEvery < 0 || c.BatchEvery < 0 {
		return fmt.Errorf("tracegen: llm: kinds must be 1 to %d, odd and batch periods >= 0", len(llmKinds))
	}
	return nil
}

// noiseAmp is the noise's amplitude: Noise, 0 for none (Noise < 0).
func (c *LLMConfig) noiseAmp() float64 { return max(c.Noise, 0) }

// LLMLaunch is one launch of an LLM-like trace.
type LLMLaunch struct {
	KernelID int    // 1-based
	Name     string // mangled name
	Kind     string // rmsnorm, qkv, ...
	Request  int
	Step     int // step within its request: 0 is the prefill
	Layer    int // -1 for embed and lm_head
	Blocks   int
	// Insts is its warp instructions (total_insts), DurationNs its
	// measured duration.
	Insts      int64
	DurationNs float64

	weight int // index of its weight array
	in     int // activation buffer it reads (0 or 1)
}

// kernelKind is one kernel of a step: its name and its grids.
type kernelKind struct {
	kind, name      string
	prefill, decode int // blocks
}

var llmKinds = []kernelKind{
	{"rmsnorm", "_Z7rmsnormPdS_S_i", 8, 1},
	{"qkv", "_Z8qkv_gemmPdS_S_i", 48, 3},
	{"attention", "_Z9attentionPdS_S_i", 32, 0}, // decode: 1 + tokens/64
	{"out_proj", "_Z8out_projPdS_S_i", 32, 2},
	{"mlp_up", "_Z6mlp_upPdS_S_i", 64, 4},
	{"mlp_down", "_Z8mlp_downPdS_S_i", 48, 3},
}

var (
	embedKind  = kernelKind{"embed", "_Z5embedPdS_S_i", 8, 1}
	lmHeadKind = kernelKind{"lm_head", "_Z7lm_headPdS_S_i", 16, 4}
	// oddAttention is the odd variant of attention (OddEvery).
	oddAttention = kernelKind{"attention", "_Z13attention_rePdS_S_i", 32, 0}
)

// layerKinds are the kernels of a layer, in its order, for cfg.Kinds, each
// with its index in llmKinds.
func layerKinds(n int) []int {
	chosen := map[string]bool{}
	for _, k := range kindChoice[:n] {
		chosen[k] = true
	}
	var out []int
	for i, k := range llmKinds {
		if chosen[k.kind] {
			out = append(out, i)
		}
	}
	return out
}

// LLMLaunches returns the launches of cfg's trace, with instructions
// counted for a source kernel of blockInsts warp instructions a block
// (the source's full blocks).
func LLMLaunches(cfg LLMConfig, blockInsts int64) ([]LLMLaunch, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	out := make([]LLMLaunch, 0, cfg.Launches)
	add := func(k kernelKind, req, step, layer, blocks, weight int) {
		l := LLMLaunch{
			KernelID: len(out) + 1, Name: k.name, Kind: k.kind, Request: req, Step: step, Layer: layer,
			Blocks: blocks, Insts: int64(blocks) * blockInsts, weight: weight, in: len(out) % 2,
		}
		l.DurationNs = (cfg.DurationBaseNs + cfg.DurationPerInstNs*float64(l.Insts)) * (1 + cfg.noiseAmp()*noise(len(out)))
		out = append(out, l)
	}
	nw := 2 + len(llmKinds)*cfg.Layers
	for req := 0; len(out) < cfg.Launches; req++ {
		for step := 0; step <= cfg.DecodeSteps && len(out) < cfg.Launches; step++ {
			odd := step > 0 && cfg.OddEvery > 0 && step%cfg.OddEvery == 0
			batch := 1
			if step > 0 && cfg.BatchEvery > 0 && step%cfg.BatchEvery == 0 {
				batch = 2
			}
			pick := func(k kernelKind) int {
				switch {
				case step == 0:
					return k.prefill
				case k.kind == "attention" && odd:
					return 2 * batch * (1 + (cfg.Prompt+step)/64)
				case k.kind == "attention":
					return batch * (1 + (cfg.Prompt+step)/64)
				}
				return batch * k.decode
			}
			steps := []func(){func() { add(embedKind, req, step, -1, pick(embedKind), 0) }}
			for layer := range cfg.Layers {
				for _, ki := range layerKinds(cfg.Kinds) {
					k := llmKinds[ki]
					if odd && k.kind == "attention" {
						k = oddAttention
					}
					steps = append(steps, func() { add(k, req, step, layer, pick(k), 1+layer*len(llmKinds)+ki) })
				}
			}
			steps = append(steps, func() { add(lmHeadKind, req, step, -1, pick(lmHeadKind), nw-1) })
			for _, f := range steps {
				if len(out) == cfg.Launches {
					break
				}
				f()
			}
		}
	}
	return out, nil
}

// noise is a deterministic value in [-1, 1] for launch i: splitmix64's
// output for i, whose every bit depends on every bit of i (a hash of a
// short string such as FNV-1a barely moves its top bits when only the
// last digit changes, which left neighbouring launches with almost the
// same noise).
func noise(i int) float64 {
	z := uint64(i) + 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	z ^= z >> 31
	return float64(z>>11)/float64(1<<53)*2 - 1
}

// source is a parsed real kernel trace.
type source struct {
	header []string   // header lines up to and including "#traces format"
	blocks [][]string // per source block: its lines without the 4 leading ids, "warp rest"
	arrays [3]uint64  // base of each array the kernel touches, ascending
	span   uint64     // bytes of one array a block covers
	full   int        // blocks whose warps all ran (templates)
}

func readSource(dir string) (*source, error) {
	path := filepath.Join(dir, "traces", "kernel-1.trace")
	if _, err := os.Stat(path); err != nil {
		path = filepath.Join(dir, "kernel-1.trace")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tracegen: llm: source: %w", err)
	}
	s := &source{}
	lines := strings.Split(string(b), "\n")
	i := 0
	for ; i < len(lines); i++ {
		s.header = append(s.header, lines[i])
		if strings.HasPrefix(lines[i], "#traces format") {
			i++
			break
		}
	}
	counts := map[int]int{}
	for ; i < len(lines); i++ {
		f := strings.Fields(lines[i])
		if len(f) < 5 {
			continue
		}
		x, err := strconv.Atoi(f[0])
		if err != nil || f[1] != "0" || f[2] != "0" {
			return nil, fmt.Errorf("tracegen: llm: %s:%d: want a 1-D grid, 4 leading ids", path, i+1)
		}
		for len(s.blocks) <= x {
			s.blocks = append(s.blocks, nil)
		}
		s.blocks[x] = append(s.blocks[x], strings.Join(f[3:], " "))
		counts[x]++
	}
	if len(s.blocks) == 0 {
		return nil, fmt.Errorf("tracegen: llm: %s: no instructions", path)
	}
	// The arrays: each address is base + block·span + lane·8; find the
	// bases as the smallest address of each of three clusters.
	var all []uint64
	for _, blk := range s.blocks {
		for _, line := range blk {
			for _, t := range strings.Fields(line) {
				if strings.HasPrefix(t, "0x") {
					a, err := strconv.ParseUint(t[2:], 16, 64)
					if err != nil {
						return nil, fmt.Errorf("tracegen: llm: %s: address %q", path, t)
					}
					all = append(all, a)
				}
			}
		}
	}
	s.arrays, err = arrayBases(all)
	if err != nil {
		return nil, fmt.Errorf("tracegen: llm: %s: %w", path, err)
	}
	// A full block holds the most lines.
	most := 0
	for _, c := range counts {
		most = max(most, c)
	}
	for s.full < len(s.blocks) && counts[s.full] == most {
		s.full++
	}
	if s.full == 0 {
		return nil, fmt.Errorf("tracegen: llm: %s: block 0 is not full", path)
	}
	// A block's span: threads a block × 8 bytes (double).
	var bx int
	for _, h := range s.header {
		if strings.HasPrefix(h, "-block dim = (") {
			fmt.Sscanf(strings.TrimPrefix(h, "-block dim = "), "(%d,", &bx)
		}
	}
	if bx <= 0 {
		return nil, fmt.Errorf("tracegen: llm: %s: no block dim", path)
	}
	s.span = uint64(bx) * 8
	return s, nil
}

// arrayBases finds the three arrays a vecAdd touches: the addresses sorted,
// split at the two largest gaps.
func arrayBases(all []uint64) ([3]uint64, error) {
	var out [3]uint64
	if len(all) == 0 {
		return out, fmt.Errorf("no memory addresses")
	}
	uniq := map[uint64]bool{}
	for _, a := range all {
		uniq[a] = true
	}
	sorted := make([]uint64, 0, len(uniq))
	for a := range uniq {
		sorted = append(sorted, a)
	}
	slices.Sort(sorted)
	g1, g2 := -1, -1 // indices of the two largest gaps (after i)
	for i := 0; i+1 < len(sorted); i++ {
		d := sorted[i+1] - sorted[i]
		switch {
		case g1 < 0 || d > sorted[g1+1]-sorted[g1]:
			g2, g1 = g1, i
		case g2 < 0 || d > sorted[g2+1]-sorted[g2]:
			g2 = i
		}
	}
	if g2 < 0 {
		return out, fmt.Errorf("want three arrays")
	}
	lo, hi := min(g1, g2), max(g1, g2)
	out = [3]uint64{sorted[0], sorted[lo+1], sorted[hi+1]}
	return out, nil
}

// LLMResult is what GenerateLLM wrote.
type LLMResult struct {
	Launches   []LLMLaunch
	BlockInsts int64
}

// The LLM trace's memory: a 1 MiB-aligned region for each weight array
// and the two activation buffers, each big enough for the largest grid.
const llmBase = 0x7f1000000000

// GenerateLLM writes the LLM-like raw trace cfg describes into dir, as
// the profiler uploads it: traces/kernel-N.trace, traces/kernelslist
// (MemcpyHtoD lines first, one more a step), traces/stats.csv,
// metadata.json and real_timing.json.
func GenerateLLM(ctx context.Context, dir string, cfg LLMConfig) (*LLMResult, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	src, err := readSource(cfg.From)
	if err != nil {
		return nil, err
	}
	blockInsts := int64(len(src.blocks[0]))
	launches, err := LLMLaunches(cfg, blockInsts)
	if err != nil {
		return nil, err
	}
	maxBlocks := 0
	for _, l := range launches {
		maxBlocks = max(maxBlocks, l.Blocks)
	}
	region := (uint64(maxBlocks)*src.span + 0xfffff) &^ 0xfffff
	nw := 2 + len(llmKinds)*cfg.Layers
	act := func(i int) uint64 { return llmBase + uint64(i)*region }
	weight := func(w int) uint64 { return llmBase + uint64(2+w)*region }

	tdir := filepath.Join(dir, "traces")
	if err := os.MkdirAll(tdir, 0o755); err != nil {
		return nil, err
	}
	var list, stats bytes.Buffer
	for i := range 2 {
		fmt.Fprintf(&list, "MemcpyHtoD,0x%016x,%d\n", act(i), region)
	}
	for w := range nw {
		fmt.Fprintf(&list, "MemcpyHtoD,0x%016x,%d\n", weight(w), region)
	}
	stats.WriteString("kernel id, kernel mangled name, grid_dimX, grid_dimY, grid_dimZ, #blocks, block_dimX, block_dimY, block_dimZ, #threads, total_insts, total_reported_insts\n")
	var bx int
	for _, h := range src.header {
		if strings.HasPrefix(h, "-block dim = (") {
			fmt.Sscanf(strings.TrimPrefix(h, "-block dim = "), "(%d,", &bx)
		}
	}
	type timingRow struct {
		KernelID   int     `json:"kernel_id"`
		KernelName string  `json:"kernel_name"`
		DurationNs float64 `json:"duration_ns"`
	}
	rows := make([]timingRow, 0, len(launches))
	for i, l := range launches {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if i > 0 && l.Step != launches[i-1].Step {
			// A new step: its input tokens.
			fmt.Fprintf(&list, "MemcpyHtoD,0x%016x,%d\n", act(l.in), src.span)
		}
		name := fmt.Sprintf("kernel-%d.trace", l.KernelID)
		fmt.Fprintf(&list, "%s\n", name)
		fmt.Fprintf(&stats, "%s, %s, %d, 1, 1, %d, %d, 1, 1, %d, %d,%d\n", name, l.Name, l.Blocks, l.Blocks, bx, bx, l.Insts, l.Insts)
		bases := [3]uint64{weight(l.weight), act(l.in), act(1 - l.in)}
		if err := writeLLMKernel(filepath.Join(tdir, name), src, l, bases); err != nil {
			return nil, err
		}
		rows = append(rows, timingRow{l.KernelID, l.Name, math.Round(l.DurationNs*10) / 10})
	}
	if err := os.WriteFile(filepath.Join(tdir, "kernelslist"), list.Bytes(), 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(tdir, "stats.csv"), stats.Bytes(), 0o644); err != nil {
		return nil, err
	}
	rt, err := json.MarshalIndent(map[string]any{"rows": rows}, "", " ")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "real_timing.json"), rt, 0o644); err != nil {
		return nil, err
	}
	meta, _ := json.MarshalIndent(map[string]any{
		"run_name":             filepath.Base(dir),
		"model":                fmt.Sprintf("LLM-like: %d layers, prompt %d, %d decode steps a request, from %s", cfg.Layers, cfg.Prompt, cfg.DecodeSteps, filepath.Base(filepath.Clean(cfg.From))),
		"gpu":                  "NVIDIA GeForce GTX 1080",
		"trace_gpu_arch":       "sm_61",
		"suggested_sim_config": "SM6_TITANX",
		"real_timing":          "real_timing.json",
	}, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, "metadata.json"), meta, 0o644); err != nil {
		return nil, err
	}
	return &LLMResult{Launches: launches, BlockInsts: blockInsts}, nil
}

// writeLLMKernel writes launch l: the source's header with its name, id
// and grid, then its blocks, block b made from source block b mod
// src.full with its index and addresses shifted; bases are the new bases
// of the source's three arrays.
func writeLLMKernel(path string, src *source, l LLMLaunch, bases [3]uint64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<16)
	for _, h := range src.header {
		switch {
		case strings.HasPrefix(h, "-kernel name = "):
			h = "-kernel name = " + l.Name
		case strings.HasPrefix(h, "-kernel id = "):
			h = "-kernel id = " + strconv.Itoa(l.KernelID)
		case strings.HasPrefix(h, "-grid dim = "):
			h = fmt.Sprintf("-grid dim = (%d,1,1)", l.Blocks)
		}
		w.WriteString(h)
		w.WriteByte('\n')
	}
	w.WriteByte('\n')
	var buf []byte
	for b := range l.Blocks {
		t := b % src.full
		shift := uint64(b) * src.span
		for _, line := range src.blocks[t] {
			buf = strconv.AppendInt(buf[:0], int64(b), 10)
			buf = append(buf, " 0 0 "...)
			for k, tok := range strings.Fields(line) {
				if k > 0 {
					buf = append(buf, ' ')
				}
				if strings.HasPrefix(tok, "0x") {
					a, err := strconv.ParseUint(tok[2:], 16, 64)
					if err != nil {
						f.Close()
						return fmt.Errorf("tracegen: llm: address %q", tok)
					}
					arr := 0
					for arr < 2 && a >= src.arrays[arr+1] {
						arr++
					}
					off := a - src.arrays[arr] - uint64(t)*src.span
					buf = append(buf, "0x"...)
					buf = strconv.AppendUint(buf, bases[arr]+shift+off, 16)
					continue
				}
				buf = append(buf, tok...)
			}
			buf = append(buf, ' ', '\n')
			w.Write(buf)
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Shapes are the LLM-like shapes sampled simulation is measured on
// (docs/sampling-benchmarks.md, "Sampled simulation"), each an LLMConfig without
// its source and launch count:
//
//   - decode48: one request of a prefill then 48 decode steps of six
//     kernels (one layer of qkv, attention, mlp_up, mlp_down), an odd
//     attention every 16 steps, batch-2 steps every 20, 3 % noise;
//   - layers3: three layers of qkv, attention and mlp_up (11 kernels a
//     step), 24 decode steps, attention's grid growing once, an odd
//     attention every 8 steps, 1 % noise;
//   - noisy: two layers of all six kernels (14 a step), 20 decode steps,
//     batch-2 steps every 5, 5 % noise;
//   - quiet: two layers of qkv and attention, 40 decode steps, no noise;
//   - requests: many short requests (a prefill and 6 decode steps of two
//     layers of five kernels, 84 launches a request: 3 and a half in 300
//     launches), a 250-token prompt so that attention's grid grows once
//     a request, batch-2 steps every 3, 2 % noise; added as a held-out
//     shape (docs/benchmarks.md, "Held-out shapes"): prefill launches
//     after a request's decode steps, which the other shapes barely have;
//   - default: the zero LLMConfig (four layers of six kernels, 11 decode
//     steps, 2 % noise), the trace of docs/sampling-benchmarks.md's first tables.
var Shapes = map[string]LLMConfig{
	"decode48": {Layers: 1, Kinds: 4, DecodeSteps: 48, OddEvery: 16, BatchEvery: 20, Noise: 0.03},
	"layers3":  {Layers: 3, Kinds: 3, DecodeSteps: 24, Prompt: 500, OddEvery: 8, Noise: 0.01},
	"noisy":    {Layers: 2, Kinds: 6, DecodeSteps: 20, BatchEvery: 5, Noise: 0.05},
	"quiet":    {Layers: 2, Kinds: 2, DecodeSteps: 40, Noise: -1},
	"requests": {Layers: 2, Kinds: 5, DecodeSteps: 6, Prompt: 250, BatchEvery: 3, Noise: 0.02},
	"default":  {},
}
