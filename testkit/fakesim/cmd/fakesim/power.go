package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/cascade-sim/cascade/accelsim/accelwattch"
	"github.com/cascade-sim/cascade/testkit/fakesim"
)

// powerReport writes accelwattch_power_report.log in the working
// directory, as the real simulator does with -power_simulation_enabled 1:
// a block per kernel in the real report's shape (see package accelwattch),
// with the figures of fakesim.Power.
type powerReport struct {
	f       *os.File
	sum     float64
	kernels int
}

func openPowerReport() (*powerReport, error) {
	f, err := os.Create(accelwattch.ReportName)
	if err != nil {
		return nil, err
	}
	return &powerReport{f: f}, nil
}

// kernel writes the i-th kernel's block.
func (p *powerReport) kernel(i int, name string) {
	if p == nil {
		return
	}
	avg, breakdown := fakesim.Power(i)
	p.sum += avg
	p.kernels++
	var b strings.Builder
	fmt.Fprintf(&b, "kernel_name = %s \nkernel_launch_uid = %d \n\n", name, i)
	section := func(title, which string, total float64, parts []float64) {
		fmt.Fprintf(&b, "%s\nkernel_%s_power = %g\n", title, which, total)
		for j, c := range accelwattch.Components {
			comma := ","
			if c == "CONSTP" || c == "STATICP" {
				comma = "" // as the real report prints them
			}
			fmt.Fprintf(&b, "gpu_%s_%s%s = %g\n", which, c, comma, parts[j])
		}
		for _, c := range []string{"TOT_INST", "FP_INT", "DC_RM", "MEM_RD", "NOC_A"} {
			fmt.Fprintf(&b, "gpu_%s_%s, = %d\n", which, c, 1000*i)
		}
		fmt.Fprintf(&b, "gpu_%s_constant_power = 0\n", which)
		if which == "avg" {
			fmt.Fprintf(&b, "gpu_avg_threads_per_warp = 32\ngpu_tot_TOT_INST, = %d\n", 1000*i)
		}
		b.WriteString("\n")
	}
	section("Kernel Average Power Data:", "avg", avg, breakdown)
	section("Kernel Maximum Power Data:", "max", 2*avg, scale(breakdown, 2))
	section("Kernel Minimum Power Data:", "min", avg/2, scale(breakdown, 0.5))
	fmt.Fprintf(&b, "Accumulative Power Statistics Over Previous Kernels:\ngpu_tot_avg_power = %g\ngpu_tot_max_power = %g\ngpu_tot_min_power = %g\n\n\n",
		p.sum/float64(p.kernels), 2*avg, avg/2)
	io.WriteString(p.f, b.String())
}

func scale(v []float64, f float64) []float64 {
	out := make([]float64, len(v))
	for i := range v {
		out[i] = v[i] * f
	}
	return out
}

func (p *powerReport) close() {
	if p != nil {
		p.f.Close()
	}
}
