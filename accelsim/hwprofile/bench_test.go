package hwprofile_test

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/cascade-sim/cascade/accelsim/hwprofile"
)

// rawProfile is an Nsight Compute raw page of n launches written as it is
// read, so a million rows take no disk and no memory: the header and units
// of testdata/ncu-raw.csv (21 columns: the identity ones and ten metrics,
// values with thousands separators, an n/a in every tenth row), a long
// templated kernel name every third launch.
type rawProfile struct {
	n, row int
	buf    []byte
	bytes  int64
}

const rawHeader = `"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","dram__bytes_read.sum","dram__sectors_read.sum","dram__sectors_write.sum","gpc__cycles_elapsed.max","gpu__time_duration.sum","lts__t_sector_op_read_hit_rate.pct","lts__t_sectors_srcunit_tex_op_read.sum","lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum","sm__warps_active.avg.pct_of_peak_sustained_active","smsp__inst_executed.sum"
"","","","","","","","","","","","Kbyte","sector","sector","cycle","usecond","%","sector","sector","%","inst"
`

var kernels = []string{
	"vecAdd(float*, float*, float*, int)",
	"scale(float*, float, int)",
	"void cutlass::Kernel<cutlass::gemm::kernel::GemmUniversal<cutlass::gemm::threadblock::MmaMultistage<cutlass::gemm::GemmShape<128, 128, 32>, float, cutlass::layout::RowMajor>>>(cutlass::gemm::kernel::Params)",
}

func (p *rawProfile) Read(b []byte) (int, error) {
	for len(p.buf) < len(b) && p.row < p.n {
		if p.row == 0 && len(p.buf) == 0 && p.bytes == 0 {
			p.buf = append(p.buf, rawHeader...)
		}
		i := p.row
		write := "1,250"
		if i%10 == 9 {
			write = "n/a"
		}
		p.buf = fmt.Appendf(p.buf, `"%d","4242","app","127.0.0.1","%s","1","7","(256, 1, 1)","(40, 1, 1)","0","7.0","80.38","%s","%s","%s","6.14","50.02","2,500","1,250","22.17","%s"`+"\n",
			i, kernels[i%3], thousands(2512+i%1000), write, thousands(8823+i%5000), thousands(3840+i%100000))
		p.row++
	}
	n := copy(b, p.buf)
	p.buf = p.buf[:copy(p.buf, p.buf[n:])]
	p.bytes += int64(n)
	if n == 0 {
		return 0, io.EOF
	}
	return n, nil
}

func thousands(v int) string {
	s := strconv.Itoa(v)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// BenchmarkRead1M reads a 1,000,000-launch Nsight Compute raw page (about
// 330 MB, generated as it is read) and evaluates the built-in table on
// every launch, reporting the time a launch, and the peak heap in use
// (sampled every 50,000 launches and at the end), which must not grow with
// the file.
func BenchmarkRead1M(b *testing.B) {
	const n = 1_000_000
	var peak uint64
	var size int64
	sample := func() {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		peak = max(peak, ms.HeapInuse)
	}
	start := time.Now()
	for range b.N {
		src := &rawProfile{n: n}
		r, err := hwprofile.NewReader(src, "big.csv")
		if err != nil {
			b.Fatal(err)
		}
		var l hwprofile.Launch
		var bound *hwprofile.Bound
		var out []float64
		var sum float64
		for i := 0; ; i++ {
			err := r.Next(&l)
			if errors.Is(err, io.EOF) {
				if i != n {
					b.Fatalf("%d launches", i)
				}
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			if bound == nil {
				bound = hwprofile.Builtin().Bind(r.Header(), hwprofile.GPU{Name: l.Device, CC: l.CC})
			}
			out = bound.Eval(l.Values, out)
			sum += out[0]
			if i%50_000 == 0 {
				sample()
			}
		}
		sample()
		size = src.bytes
	}
	el := time.Since(start)
	b.ReportMetric(float64(el.Nanoseconds())/float64(b.N*n), "ns/launch")
	b.ReportMetric(float64(size)*float64(b.N)/el.Seconds()/1e6, "MB/s")
	b.ReportMetric(float64(size)/1e6, "file-MB")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
}
