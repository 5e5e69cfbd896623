package tracegen

import (
	"io"
	"math/rand/v2"
	"strconv"
)

// generator produces one kernel's instruction lines.
type generator struct {
	cfg            Config
	seed           uint64
	rng            *rand.Rand
	threads, warps int
	nblocks        int
	clusterX       int
	line           []byte
}

type warpState struct {
	id, left, pc int
	pair         bool // the global half of an LDGSTS pair is due
}

type blockState struct {
	id     int
	active []*warpState
}

func newGenerator(cfg Config, seed uint64) *generator {
	g := &generator{cfg: cfg, seed: seed, rng: rand.New(rand.NewPCG(seed, 1))}
	g.threads = cfg.Block[0] * cfg.Block[1] * cfg.Block[2]
	g.warps = (g.threads + 31) / 32
	g.nblocks = cfg.Grid[0] * cfg.Grid[1] * cfg.Grid[2]
	g.clusterX = 1
	if cfg.Grid[0]%2 == 0 {
		g.clusterX = 2
	}
	return g
}

// chance is a deterministic coin for (block, warp): whether it is below p.
func (g *generator) chance(b, w int, p float64) bool {
	if p <= 0 {
		return false
	}
	x := g.seed ^ uint64(b)*0x9e3779b97f4a7c15 ^ uint64(w+1)*0xc2b2ae3d27d4eb4f
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	return float64(x>>11)/(1<<53) < p
}

func (g *generator) emptyBlock(b int) bool { return g.chance(b, -1, g.cfg.Empty) }
func (g *generator) idleWarp(b, w int) bool {
	return w > 0 && g.chance(b, w, g.cfg.Idle)
}

// instsForBytes picks instructions per warp so the kernel is about budget bytes.
func (g *generator) instsForBytes(budget int64) int {
	active := 0
	for b := range g.nblocks {
		if g.emptyBlock(b) {
			continue
		}
		for w := range g.warps {
			if !g.idleWarp(b, w) {
				active++
			}
		}
	}
	if active == 0 {
		return 1
	}
	sample := newGenerator(g.cfg, g.seed^0x5555)
	ws := &warpState{left: 1 << 30}
	var total int
	const n = 4096
	for range n {
		total += len(sample.inst(0, ws))
	}
	avg := float64(total) / n
	return max(1, int(float64(budget)/avg/float64(active)))
}

// run writes the lines of every block, interleaving the warps of
// cfg.Resident blocks at a time; it returns the number of lines.
func (g *generator) run(w io.Writer, insts int) (uint64, error) {
	var (
		resident []*blockState
		next     int
		lines    uint64
		out      = make([]byte, 0, 1<<16)
	)
	for len(resident) > 0 || next < g.nblocks {
		for len(resident) < g.cfg.Resident && next < g.nblocks {
			b := next
			next++
			if g.emptyBlock(b) || insts == 0 {
				continue
			}
			bs := &blockState{id: b}
			for wi := range g.warps {
				if !g.idleWarp(b, wi) {
					bs.active = append(bs.active, &warpState{id: wi, left: insts})
				}
			}
			resident = append(resident, bs)
		}
		if len(resident) == 0 {
			break
		}
		ri := g.rng.IntN(len(resident))
		bs := resident[ri]
		wi := g.rng.IntN(len(bs.active))
		ws := bs.active[wi]
		for burst := 1 + g.rng.IntN(8); burst > 0 && ws.left > 0; burst-- {
			out = append(out, g.inst(bs.id, ws)...)
			lines++
			if len(out) > 60<<10 {
				if _, err := w.Write(out); err != nil {
					return lines, err
				}
				out = out[:0]
			}
		}
		if ws.left == 0 {
			bs.active = append(bs.active[:wi], bs.active[wi+1:]...)
			if len(bs.active) == 0 {
				resident = append(resident[:ri], resident[ri+1:]...)
			}
		}
	}
	_, err := w.Write(out)
	return lines, err
}

var (
	aluOps = []string{"IMAD", "IADD3", "FFMA", "FADD", "MOV", "ISETP.GE.AND", "SHF.L.U32", "LOP3.LUT", "FMUL", "S2R", "HMMA.16816.F32", "BRA"}
	ldOps  = []string{"LDG.E", "LDG.E.64", "LDS", "LDG.E.128.CONSTANT"}
	stOps  = []string{"STG.E", "STS", "STG.E.64"}
)

// inst returns the next line of warp ws in block b (valid until the next call).
func (g *generator) inst(b int, ws *warpState) []byte {
	cfg, r := g.cfg, g.rng
	l := g.line[:0]
	x, y, z := b%cfg.Grid[0], b/cfg.Grid[0]%cfg.Grid[1], b/(cfg.Grid[0]*cfg.Grid[1])
	l = appendInts(l, x, y, z, ws.id)
	if cfg.Layout == 11 {
		l = appendInts(l, x/g.clusterX, y, z, x%g.clusterX, 0, 0, x%g.clusterX)
	}
	m := mask(ws.id, g.threads)
	if r.IntN(16) == 0 {
		m &= r.Uint32() | 1
	}
	if m == 0 {
		m = 1
	}
	lanes := popcount(m)
	pc := ws.pc
	l = appendHex(l, uint64(pc), 4)
	l = append(l, ' ')
	l = appendHex(l, uint64(m), 8)
	l = append(l, ' ')
	ws.left--
	switch {
	case ws.left == 0:
		l = append(l, "0 EXIT 0 0"...)
	case ws.pair:
		ws.pair = false
		l = append(l, "0 LDGSTS.E.BYPASS.128 2 R4 R6 16 "...)
		l = g.addrs(l, 0x7f0000000000+uint64(r.IntN(1<<24))*16, lanes, 16)
	case cfg.LDGSTS && ws.left >= 2 && r.IntN(12) == 0:
		ws.pair = true
		pc -= 0x10 // both halves share the PC
		l = append(l, "0 LDGSTS.E.BYPASS.128 2 R4 R6 16 1 0x"...)
		l = strconv.AppendUint(l, 0x100+uint64(r.IntN(1<<12))*16, 16)
		l = append(l, " 16"...)
	case cfg.Mem && r.IntN(4) == 0:
		width := []int{4, 8, 16}[r.IntN(3)]
		if r.IntN(2) == 0 {
			l = append(l, "1 R"...)
			l = appendInt(l, 2+r.IntN(30))
			l = append(l, ' ')
			l = append(l, ldOps[r.IntN(len(ldOps))]...)
			l = append(l, " 1 R"...)
		} else {
			l = append(l, "0 "...)
			l = append(l, stOps[r.IntN(len(stOps))]...)
			l = append(l, " 2 R"...)
			l = appendInt(l, 2+r.IntN(30))
			l = append(l, " R"...)
		}
		l = appendInt(l, 2+r.IntN(30))
		l = append(l, ' ')
		l = appendInt(l, width)
		l = append(l, ' ')
		l = g.addrs(l, 0x7f0000000000+uint64(r.IntN(1<<28))*4, lanes, width)
	default:
		op := aluOps[r.IntN(len(aluOps))]
		l = append(l, "1 R"...)
		l = appendInt(l, 2+r.IntN(60))
		l = append(l, ' ')
		l = append(l, op...)
		srcs := 1 + r.IntN(3)
		l = append(l, ' ')
		l = appendInt(l, srcs)
		for range srcs {
			l = append(l, " R"...)
			l = appendInt(l, r.IntN(64))
		}
		l = append(l, " 0"...)
	}
	if cfg.Version >= 5 {
		l = append(l, ' ')
		l = appendInt(l, r.IntN(3)*4)
	}
	l = append(l, '\n')
	ws.pc = pc + 0x10
	g.line = l
	return l
}

// addrs appends an address list in one of the three modes: 0 every lane's
// address, 1 base and stride, 2 base and per-lane deltas.
func (g *generator) addrs(l []byte, base uint64, lanes, width int) []byte {
	mode := g.rng.IntN(3)
	l = appendInt(l, mode)
	l = append(l, " 0x"...)
	l = strconv.AppendUint(l, base, 16)
	switch mode {
	case 0:
		a := base
		for range lanes - 1 {
			a += uint64(width) * uint64(1+g.rng.IntN(4))
			l = append(l, " 0x"...)
			l = strconv.AppendUint(l, a, 16)
		}
	case 1:
		l = append(l, ' ')
		l = appendInt(l, width)
	case 2:
		for range lanes - 1 {
			l = append(l, ' ')
			l = appendInt(l, width*(g.rng.IntN(9)-2))
		}
	}
	return l
}

func appendInts(l []byte, vs ...int) []byte {
	for _, v := range vs {
		l = appendInt(l, v)
		l = append(l, ' ')
	}
	return l
}

const hexDigits = "0123456789abcdef"

func appendHex(l []byte, v uint64, width int) []byte {
	var b [16]byte
	i := len(b)
	for v > 0 || i > len(b)-width {
		i--
		b[i] = hexDigits[v&15]
		v >>= 4
	}
	return append(l, b[i:]...)
}
