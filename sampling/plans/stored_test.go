package plans_test

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade/sampling"
)

// storedFull is the full run of trace on cfg that sampling's calibration
// fixtures hold (../testdata/fullruns/<shape>-<config>.csv, written by
// BenchmarkFixtures), or nil when there is none of exactly in's launches,
// or CASCADE_BENCH_STORED=0. A sampled run is compared with it instead of
// simulating the whole trace again (368 to 4,345 s a run): the fixture
// is used only when every launch's kernel, grid and warp instructions are
// in's, so a trace tracegen now builds differently is simulated anew.
// Its wall time is not stored: the table prints 0 for it.
func storedFull(b *testing.B, trace, cfg string, in sampling.Input) *simResult {
	if os.Getenv("CASCADE_BENCH_STORED") == "0" {
		return nil
	}
	base := filepath.Base(trace)
	shape := base[:max(strings.LastIndexByte(base, '-'), 0)]
	path := filepath.Join("..", "testdata", "fullruns", shape+"-"+cfg+".csv")
	cycles, err := readStored(path, in)
	if err != nil {
		fmt.Fprintf(os.Stdout, "%s on %s: no stored full run used (%v)\n", base, cfg, err)
		return nil
	}
	fmt.Fprintf(os.Stdout, "%s on %s: the stored full run %s\n", base, cfg, path)
	return &simResult{cycles: cycles, cached: true}
}

// readStored reads a fixture's cycles, checking each row against in.
func readStored(path string, in sampling.Input) (map[int]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cycles := map[int]float64{}
	sc := bufio.NewScanner(f)
	line := 0
	for sc.Scan() {
		line++
		t := sc.Text()
		if strings.HasPrefix(t, "#") || strings.HasPrefix(t, "launch,") {
			continue
		}
		// launch,kernel_id,name,grid_x,block_x,warp_insts,duration_ns,cycles
		fs := strings.Split(t, ",")
		if len(fs) != 8 {
			return nil, fmt.Errorf("%s:%d: %d fields, want 8", path, line, len(fs))
		}
		i, err1 := strconv.Atoi(fs[0])
		grid, err2 := strconv.Atoi(fs[3])
		insts, err3 := strconv.ParseInt(fs[5], 10, 64)
		c, err4 := strconv.ParseFloat(fs[7], 64)
		if err1 != nil || err2 != nil || err3 != nil || err4 != nil {
			return nil, fmt.Errorf("%s:%d: not a launch row", path, line)
		}
		if i < 0 || i >= len(in.Launches) {
			return nil, fmt.Errorf("%s:%d: launch %d, the trace has %d", path, line, i, len(in.Launches))
		}
		l := in.Launches[i]
		if l.Name != fs[2] || l.Grid.X != grid || l.WarpInstructions != insts {
			return nil, fmt.Errorf("%s:%d: launch %d is %s grid %d (%d warp insts) there, %s grid %d (%d) in the trace", path, line, i, fs[2], grid, insts, l.Name, l.Grid.X, l.WarpInstructions)
		}
		cycles[i] = c
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(cycles) != len(in.Launches) {
		return nil, fmt.Errorf("%s: %d launches, the trace has %d", path, len(cycles), len(in.Launches))
	}
	return cycles, nil
}
