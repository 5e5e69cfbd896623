package hwprofile_test

import (
	"errors"
	"io"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade/accelsim/hwprofile"
)

// The files under testdata are made up, small, and written to the shapes
// of the profilers' real outputs as public repositories commit them:
//   - ncu-raw.csv: Nsight Compute's raw page (ncu --csv --page raw), as
//     in the fixtures of tools that parse it (a quoted header naming
//     "ID","Process ID","Process Name","Host Name","Kernel Name",
//     "Context","Stream","Block Size","Grid Size","Device","CC" then the
//     metrics; a units row of "" for those; values with thousands
//     separators; "n/a"), and Accel-Sim's correlator (plot-correlation.py
//     reads device__attribute_display_name for the GPU's name).
//   - nvprof-gpu-trace.csv: nvprof --csv --print-gpu-trace, as
//     leimingyu/magus commits them (00_featSel/13app_trace/*_trace.csv):
//     ==<pid>== lines, a quoted header, an unquoted units row ("ms,ms,,"),
//     memory copies among the launches, and the kernel names followed by
//     the correlation ID in brackets.
//   - nvprof-trace-metrics.csv: nvprof --csv --print-gpu-trace --metrics,
//     per formats.md §9 and the correlator's parse_hw_csv ("Device",
//     "Context","Stream","Kernel","Correlation_ID", then the metrics;
//     the metric names and "Low (2)"-style text values are those of
//     leimingyu/magus's nvprof --metrics all files).

func read(t *testing.T, path string) (*hwprofile.Header, []hwprofile.Launch, *hwprofile.Reader) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := hwprofile.NewReader(f, path)
	if err != nil {
		t.Fatal(err)
	}
	var out []hwprofile.Launch
	for {
		var l hwprofile.Launch
		err := r.Next(&l)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, l)
	}
	return r.Header(), out, r
}

func value(t *testing.T, h *hwprofile.Header, l hwprofile.Launch, col string) float64 {
	t.Helper()
	i := h.Column(col)
	if i < 0 {
		t.Fatalf("no column %q in %q", col, h.Columns)
	}
	return l.Values[i]
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestNsightComputeRaw(t *testing.T) {
	h, ls, r := read(t, "testdata/ncu-raw.csv")
	if h.Profiler != hwprofile.NsightCompute || h.Line != 9 {
		t.Fatalf("profiler %q, header on line %d", h.Profiler, h.Line)
	}
	if len(ls) != 3 {
		t.Fatalf("%d launches, want 3", len(ls))
	}
	l := ls[1]
	if l.Line != 12 || l.Index != 1 || l.ID != 1 || l.Context != 1 || l.Stream != 7 ||
		l.Kernel != "scale(float*, float, int)" || l.Device != "Quadro GV100" || l.CC != "7.0" {
		t.Fatalf("launch 1: %+v", l)
	}
	for col, want := range map[string]float64{
		"dram__sectors_read.sum":             1255,  // "1,255"
		"dram__bytes_read.sum":               40160, // "40.16" Kbyte
		"gpu__time_duration.sum":             3070,  // "3.07" usecond, in ns
		"lts__t_sector_op_read_hit_rate.pct": 50.02,
		"smsp__inst_executed.sum":            1920,
	} {
		if got := value(t, h, l, col); !near(got, want) {
			t.Errorf("%s = %v, want %v", col, got, want)
		}
	}
	if v := value(t, h, l, "dram__sectors_write.sum"); hwprofile.Present(v) {
		t.Errorf("n/a read as %v", v)
	}
	if v := value(t, h, l, "Kernel Name"); hwprofile.Present(v) {
		t.Errorf("an identity column has value %v", v)
	}
	if i := h.Column("gpu__time_duration.sum"); h.Units[i] != "usecond" || h.BaseUnits[i] != "nsecond" {
		t.Errorf("duration's units %q → %q", h.Units[i], h.BaseUnits[i])
	}
	if i := h.Column("dram__bytes_read.sum"); h.BaseUnits[i] != "byte" {
		t.Errorf("Kbyte → %q", h.BaseUnits[i])
	}
	if len(r.Notes()) != 0 {
		t.Errorf("notes: %q", r.Notes())
	}
}

func TestNvprofTraceMetrics(t *testing.T) {
	h, ls, r := read(t, "testdata/nvprof-trace-metrics.csv")
	if h.Profiler != hwprofile.Nvprof || len(ls) != 2 {
		t.Fatalf("profiler %q, %d launches", h.Profiler, len(ls))
	}
	l := ls[0]
	if l.ID != 117 || l.Kernel != "vecAdd(float*, float*, float*, int)" || l.Device != "TITAN X (Pascal)" || l.Context != 1 {
		t.Fatalf("launch 0: %+v", l)
	}
	if v := value(t, h, l, "global_hit_rate"); v != 50 {
		t.Errorf("global_hit_rate %v", v)
	}
	if v := value(t, h, ls[1], "inst_issued"); v != 17534 {
		t.Errorf("inst_issued %v", v)
	}
	if v := value(t, h, l, "sysmem_utilization"); hwprofile.Present(v) {
		t.Errorf("text read as %v", v)
	}
	notes := r.Notes()
	if len(notes) != 1 || !strings.Contains(notes[0], `sysmem_utilization: 2 values are not numbers, taken as absent (the first "Low (2)", line 9)`) {
		t.Errorf("notes %q", notes)
	}
}

func TestNvprofGPUTrace(t *testing.T) {
	h, ls, r := read(t, "testdata/nvprof-gpu-trace.csv")
	if h.Profiler != hwprofile.Nvprof || len(ls) != 2 || r.Skipped != 2 {
		t.Fatalf("profiler %q, %d launches, %d skipped", h.Profiler, len(ls), r.Skipped)
	}
	l := ls[1]
	if l.Kernel != "scale(float*, float, int)" || l.ID != -1 || l.Index != 1 || l.Line != 8 {
		t.Fatalf("launch 1: %+v", l)
	}
	if v := value(t, h, l, "Duration"); !near(v, 3104) { // 3.1040 us
		t.Errorf("Duration %v ns", v)
	}
	if v := value(t, h, l, "Start"); !near(v, 587.898094e6) {
		t.Errorf("Start %v ns", v)
	}
	if v := value(t, h, l, "Registers Per Thread"); v != 12 {
		t.Errorf("registers %v", v)
	}
}

// TestBadInput: each malformed profile is refused with a message naming
// the file, the line and, where one is to blame, the column.
func TestBadInput(t *testing.T) {
	const hdr = `"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","dram__sectors_read.sum","gpu__time_duration.sum"` + "\n"
	const units = `"","","","","","","","sector","nsecond"` + "\n"
	row := func(id, name, sectors string) string {
		return `"` + id + `","1","app","h","` + name + `","1","7","` + sectors + `","1,000"` + "\n"
	}
	for _, c := range []struct{ name, text, want string }{
		{"empty", "", "p.csv: no profile in it"},
		{"program output only", "==PROF== Connected\nhello \"world\nResult = PASS\n", "p.csv: no profile in it"},
		{"details page", `"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Section Name","Metric Name","Metric Unit","Metric Value"` + "\n",
			"p.csv:1:1: Nsight Compute's details page (a row per metric): export the raw page, ncu --csv --page raw"},
		{"nvprof summary", "==1== Metric result:\n" + `"Device","Kernel","Invocations","Metric Name","Metric Description","Min","Max","Avg"` + "\n",
			"p.csv:2:1: nvprof's summary (per kernel name, over its invocations): profile with --print-gpu-trace"},
		{"no Kernel Name column", "==PROF== Connected\n" + strings.Replace(hdr, `"Kernel Name",`, "", 1) + units,
			`p.csv:2:1: Nsight Compute's raw page, but the header lacks the column "Kernel Name"`},
		{"header only", hdr, "p.csv:2: the file ends after its header: no units row and no launches"},
		{"units row missing", hdr + row("0", "k", "1"), `p.csv:2:19: no units row under the header (line 1): this row names a kernel, "k"`},
		{"duplicated header", hdr + units + row("0", "k", "1") + hdr + units + row("0", "k", "1"),
			"p.csv:4:1: the header again (first on line 1): two profiles in one file?"},
		{"duplicated column", strings.Replace(hdr, "gpu__time_duration.sum", "dram__sectors_read.sum", 1) + units,
			`p.csv:1:9: column 9, "dram__sectors_read.sum", is named again (column 8)`},
		{"rows in another order", hdr + units + row("0", "a", "1") + row("2", "b", "1") + row("1", "c", "1"),
			"p.csv:5:1: ID 1 after 2 (line 4): rows are not in launch order (sorted by another column?)"},
		{"decimal comma", hdr + units + row("0", "k", "65,77"),
			`p.csv:3:31: dram__sectors_read.sum: "65,77": a comma that is not a thousands separator (a decimal comma?)`},
		{"dots as thousands", hdr + units + row("0", "k", "27.595.520"),
			`p.csv:3:31: dram__sectors_read.sum: "27.595.520": dots as thousands separators (another locale's)`},
		{"too few fields", hdr + units + `"0","1","app","h","k","1","7","5"` + "\n", "p.csv:3:34: 8 fields, and the header (line 1) names 9 columns"},
		{"too many fields", hdr + units + `"0","1","app","h","k","1","7","5","6","7"` + "\n", "p.csv:3:39: 10 fields, and the header (line 1) names 9 columns"},
		{"open quote", hdr + units + `"0","1","app","h","k","1","7","5","6` + "\n", "p.csv:3:35: a quoted field is not closed on its line"},
		{"text after a quote", hdr + units + `"0","1","app","h","k"x,"1","7","5","6"` + "\n", `p.csv:3:22: 'x' after a closing quote: want a comma`},
		{"ID not a number", hdr + units + row("zero", "k", "1"), `p.csv:3:1: ID "zero" is not a whole number`},
		{"no kernel name", hdr + units + row("0", "k", "1") + `"1","1","app","h","","1","7","5","6"` + "\n", "p.csv:4:19: no kernel name"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := readAll(c.text)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v\nwant %s", err, c.want)
			}
		})
	}
}

func readAll(text string) error {
	r, err := hwprofile.NewReader(strings.NewReader(text), "p.csv")
	if err != nil {
		return err
	}
	var l hwprofile.Launch
	for {
		if err := r.Next(&l); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return err
		}
	}
}

// TestValues: how printed values are read.
func TestValues(t *testing.T) {
	const hdr = `"ID","Kernel Name","m","pct","t","rate"` + "\n" + `"","","","%","msecond","Gbyte/second"` + "\n"
	for _, c := range []struct {
		field string
		col   string
		want  float64
	}{
		{"1,234,567.5", "m", 1234567.5},
		{"-1,024", "m", -1024},
		{"1e3", "m", 1000},
		{"12.5%", "pct", 12.5},
		{"2.5", "t", 2.5e6},
		{"3", "rate", 3e9},
		{"126.5MB/s", "rate", 126.5e6}, // a unit of its own wins over the column's
		{"n/a", "m", math.NaN()},
		{"", "m", math.NaN()},
		{"(256, 1, 1)", "m", math.NaN()},
	} {
		row := map[string]string{"m": "0", "pct": "0", "t": "0", "rate": "0"}
		row[c.col] = c.field
		text := hdr + `"0","k","` + row["m"] + `","` + row["pct"] + `","` + row["t"] + `","` + row["rate"] + `"` + "\n"
		r, err := hwprofile.NewReader(strings.NewReader(text), "v.csv")
		if err != nil {
			t.Fatal(err)
		}
		var l hwprofile.Launch
		if err := r.Next(&l); err != nil {
			t.Fatalf("%q: %v", c.field, err)
		}
		got := l.Values[r.Header().Column(c.col)]
		if math.IsNaN(c.want) != math.IsNaN(got) || !math.IsNaN(got) && !near(got, c.want) {
			t.Errorf("%q in %s: %v, want %v", c.field, c.col, got, c.want)
		}
	}
}

// TestProcessesCountApart: a profile of several processes
// (--target-processes all) numbers each one's launches from 0.
func TestProcessesCountApart(t *testing.T) {
	text := `"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","m"` + "\n" +
		`"","","","","","","",""` + "\n" +
		`"0","11","a","h","k","1","7","1"` + "\n" + `"1","11","a","h","k","1","7","2"` + "\n" +
		`"0","12","b","h","k","1","7","3"` + "\n" + `"1","12","b","h","k","1","7","4"` + "\n"
	if err := readAll(text); err != nil {
		t.Fatal(err)
	}
	if err := readAll(strings.Replace(text, `"1","12"`, `"0","12"`, 1)); err == nil || !strings.Contains(err.Error(), "p.csv:6:1: ID 0 after 0 (line 5)") {
		t.Fatalf("a repeated ID in one process: %v", err)
	}
}
