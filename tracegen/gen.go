package tracegen

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/bits"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"

	"github.com/ulikunitz/xz"
)

// Config describes the traces to generate. The zero value of a field
// means its documented default.
type Config struct {
	Kernels  int       // kernels per context (default 1)
	Contexts int       // 0: single-context naming (kernel-N.trace, kernelslist, stats.csv); n ≥ 1: per-context naming with n contexts
	Grid     [3]int    // grid dim (default 4,1,1)
	Block    [3]int    // block dim (default 128,1,1)
	Insts    int       // instructions per active warp (default 64); ignored when Bytes > 0
	Bytes    int64     // approximate raw bytes per kernel
	Layout   int       // 4 or 11 leading ids (default 4)
	Version  int       // tracer version 3 or 5 (default 5)
	XZ       bool      // write kernel-N.trace.xz
	Mem      bool      // memory instructions (all three address modes)
	LDGSTS   bool      // LDGSTS pairs
	Idle     float64   // fraction of warps (not warp 0) that execute nothing
	Empty    float64   // fraction of blocks that execute nothing
	Resident int       // blocks whose warps interleave (default 4)
	Seed     uint64    // random seed
	XZBin    string    // xz binary; "" looks it up, "-" forces pure Go
	Name     string    // kernel mangled name (default _Z6kernelPfS_i)
	Binary   int       // -binary version (default 90)
	Progress io.Writer // optional: one line per kernel written
}

func (c *Config) defaults() error {
	if c.Kernels == 0 {
		c.Kernels = 1
	}
	if c.Grid == [3]int{} {
		c.Grid = [3]int{4, 1, 1}
	}
	if c.Block == [3]int{} {
		c.Block = [3]int{128, 1, 1}
	}
	for i := range 3 {
		if c.Grid[i] == 0 {
			c.Grid[i] = 1
		}
		if c.Block[i] == 0 {
			c.Block[i] = 1
		}
	}
	if c.Insts == 0 {
		c.Insts = 64
	}
	if c.Layout == 0 {
		c.Layout = 4
	}
	if c.Version == 0 {
		c.Version = 5
	}
	if c.Resident == 0 {
		c.Resident = 4
	}
	if c.Name == "" {
		c.Name = "_Z6kernelPfS_i"
	}
	if c.Binary == 0 {
		c.Binary = 90
	}
	switch {
	case c.Layout != 4 && c.Layout != 11:
		return fmt.Errorf("tracegen: layout %d: want 4 or 11", c.Layout)
	case c.Version != 3 && c.Version != 5:
		return fmt.Errorf("tracegen: tracer version %d: want 3 or 5", c.Version)
	case c.Kernels < 0 || c.Contexts < 0 || c.Insts < 0:
		return fmt.Errorf("tracegen: negative count")
	}
	return nil
}

// Kernel describes one generated kernel trace.
type Kernel struct {
	Context string // "" or "0x…"
	ID      int
	Path    string // the trace file
	Lines   uint64 // instruction lines written
	Bytes   int64  // raw (uncompressed) bytes written
}

// Result lists what [Generate] wrote.
type Result struct {
	Kernels []Kernel
	Lists   []string // raw kernel list files
	Stats   []string // stats files
}

// Generate writes traces into dir (created if needed).
func Generate(ctx context.Context, dir string, cfg Config) (*Result, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", dir, err)
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x9e3779b97f4a7c15))
	res := &Result{}
	contexts := []string{""}
	if cfg.Contexts > 0 {
		contexts = contexts[:0]
		for i := range cfg.Contexts {
			contexts = append(contexts, fmt.Sprintf("0x%x", 0x6165bdd7ec90+uint64(i)*0x1000+uint64(rng.IntN(0x100))*0x10))
		}
	}
	for _, cx := range contexts {
		listName, statsName, suffix := "kernelslist", "stats.csv", ""
		if cx != "" {
			listName, statsName, suffix = "kernelslist_ctx_"+cx, "stats_ctx_"+cx, "-ctx_"+cx
		}
		var list, stats []byte
		stats = append(stats, "kernel id, kernel mangled name, grid_dimX, grid_dimY, grid_dimZ, #blocks, block_dimX, block_dimY, block_dimZ, #threads, total_insts, total_reported_insts\n"...)
		for id := 1; id <= cfg.Kernels; id++ {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			name := fmt.Sprintf("kernel-%d%s.trace", id, suffix)
			if cfg.XZ {
				name += ".xz"
			}
			for range 1 + rng.IntN(2) {
				list = fmt.Appendf(list, "MemcpyHtoD,0x%016x,%d\n", 0x7f0000000000+uint64(rng.IntN(1<<20))*0x100, 4*(1+rng.IntN(1<<16)))
			}
			list = append(list, name...)
			list = append(list, '\n')
			k, err := writeKernelFile(ctx, filepath.Join(dir, name), id, cfg, rng.Uint64())
			if err != nil {
				return nil, err
			}
			k.Context = cx
			res.Kernels = append(res.Kernels, k)
			g, b := cfg.Grid, cfg.Block
			stats = fmt.Appendf(stats, "%s, %s, %d, %d, %d, %d, %d, %d, %d, %d, %d,%d\n", name, cfg.Name,
				g[0], g[1], g[2], g[0]*g[1]*g[2], b[0], b[1], b[2], b[0]*b[1]*b[2], int32(uint32(k.Lines)), int32(uint32(k.Lines)))
			if cfg.Progress != nil {
				fmt.Fprintf(cfg.Progress, "wrote %s: %d lines, %d raw bytes\n", k.Path, k.Lines, k.Bytes)
			}
		}
		for _, f := range []struct {
			name string
			data []byte
			out  *[]string
		}{{listName, list, &res.Lists}, {statsName, stats, &res.Stats}} {
			p := filepath.Join(dir, f.name)
			if err := os.WriteFile(p, f.data, 0o644); err != nil {
				return nil, fmt.Errorf("write %s: %w", p, err)
			}
			*f.out = append(*f.out, p)
		}
	}
	return res, nil
}

func writeKernelFile(ctx context.Context, path string, id int, cfg Config, seed uint64) (Kernel, error) {
	f, err := os.Create(path)
	if err != nil {
		return Kernel{}, fmt.Errorf("create %s: %w", path, err)
	}
	defer f.Close()
	var (
		w       io.Writer = f
		closeFn           = func() error { return nil }
	)
	if cfg.XZ {
		bin := cfg.XZBin
		if bin == "" {
			bin, _ = exec.LookPath("xz")
		}
		if bin != "" && bin != "-" {
			cmd := exec.CommandContext(ctx, bin, "-1", "-T0", "-c")
			cmd.Stdout = f
			in, err := cmd.StdinPipe()
			if err != nil {
				return Kernel{}, err
			}
			if err := cmd.Start(); err != nil {
				return Kernel{}, fmt.Errorf("start %s: %w", bin, err)
			}
			w, closeFn = in, func() error { in.Close(); return cmd.Wait() }
		} else {
			zw, err := xz.NewWriter(f)
			if err != nil {
				return Kernel{}, err
			}
			w, closeFn = zw, zw.Close
		}
	}
	k, werr := WriteKernel(w, id, cfg, seed)
	cerr := closeFn()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = f.Close()
	}
	if werr != nil {
		return Kernel{}, fmt.Errorf("write %s: %w", path, werr)
	}
	k.ID, k.Path = id, path
	return k, nil
}

// countingWriter counts bytes on their way to a bufio.Writer.
type countingWriter struct {
	w *bufio.Writer
	n int64
}

func (c *countingWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}

// WriteKernel writes one raw kernel trace (header and instruction lines)
// with the given kernel id to w. cfg's zero fields take their defaults.
func WriteKernel(w io.Writer, id int, cfg Config, seed uint64) (Kernel, error) {
	if err := cfg.defaults(); err != nil {
		return Kernel{}, err
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	cw := &countingWriter{w: bw}
	g, b := cfg.Grid, cfg.Block
	fmt.Fprintf(cw, "-kernel name = %s\n-kernel id = %d\n-grid dim = (%d,%d,%d)\n-block dim = (%d,%d,%d)\n-shmem = 0\n-nregs = 32\n-binary version = %d\n-cuda stream id = 0\n-shmem base_addr = 0x00007f0e8e000000\n-local mem base_addr = 0x00007f0e8c000000\n-nvbit version = 1.7.4\n-accelsim tracer version = %d\n",
		cfg.Name, id, g[0], g[1], g[2], b[0], b[1], b[2], cfg.Binary, cfg.Version)
	if cfg.Version >= 5 {
		fmt.Fprintf(cw, "-enable lineinfo = 0\n\n#traces format = [line_num] PC mask dest_num [reg_dests] opcode src_num [reg_srcs] mem_width [adrrescompress?] [mem_addresses] immediate\n\n")
	} else {
		fmt.Fprintf(cw, "\n#traces format = threadblock_x threadblock_y threadblock_z warpid_tb PC mask dest_num [reg_dests] opcode src_num [reg_srcs] mem_width [adrrescompress?] [mem_addresses]\n\n")
	}
	gen := newGenerator(cfg, seed)
	insts := cfg.Insts
	if cfg.Bytes > 0 {
		insts = gen.instsForBytes(cfg.Bytes - cw.n)
	}
	lines, err := gen.run(cw, insts)
	if err == nil {
		err = bw.Flush()
	}
	return Kernel{ID: id, Lines: lines, Bytes: cw.n}, err
}

// mask returns the active-lane mask of warp w in a block of threads threads.
func mask(w, threads int) uint32 {
	left := threads - 32*w
	if left >= 32 {
		return 0xFFFFFFFF
	}
	return uint32(1)<<uint(left) - 1
}

func popcount(m uint32) int { return bits.OnesCount32(m) }

func appendInt(b []byte, v int) []byte { return strconv.AppendInt(b, int64(v), 10) }
