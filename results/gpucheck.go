package results

import (
	"fmt"
	"strings"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/hwprofile"
	"github.com/cascade-sim/cascade/accelsim/simconfig"
)

// gpuWarnings says, for each profile of t that gave counters, where its
// GPU is not the one config cfg models or the one t was taken on, as far
// as either can be told: by compute capability (the profile's own, or
// that of a card known by name), by the card a tested config models, and
// by the trace's metadata.json gpu. A config that is gone (ok false) is
// checked by name only; names are compared only where the profile names
// a card known here (by config) or by a name at all (by the trace's gpu:
// a profile may name its GPU by index only).
func gpuWarnings(t cascade.Trace, cfg cascade.SimConfig, ok bool) []string {
	out := []string{}
	for _, p := range t.Profiles {
		if p.Error != "" || p.Matched == 0 || p.GPU == "" {
			continue
		}
		cc, _, card := hwprofile.KnownGPU(p.GPU)
		known := card
		if p.CC != "" {
			cc, known = p.CC, true
		}
		on := fmt.Sprintf("profile %s was measured on %s", p.File, p.GPU)
		switch {
		case !hwprofile.Named(p.GPU) && known:
			// An index names no card: the GPU is told by its architecture.
			on = fmt.Sprintf("profile %s was measured on an sm_%s GPU (device %s)", p.File, nodot(cc), p.GPU)
		case !hwprofile.Named(p.GPU):
			on = fmt.Sprintf("profile %s was measured on device %s", p.File, p.GPU)
		case known:
			on += " (sm_" + nodot(cc) + ")"
		}
		base := cfg.Name
		if cfg.Base != "" {
			base = cfg.Base
		}
		modelled, models := hwprofile.ModelledGPU(base)
		switch {
		case ok && known && cfg.ComputeCapability != "" && cc != cfg.ComputeCapability:
			out = append(out, fmt.Sprintf("%s; config %s models sm_%s: its figures set two GPUs side by side", on, cfg.Name, nodot(cfg.ComputeCapability)))
		case models && card && !hwprofile.SameGPU(modelled, p.GPU):
			out = append(out, fmt.Sprintf("%s; config %s models a %s", on, cfg.Name, modelled))
		}
		want, archKnown := simconfig.ArchCapability(t.TraceGPUArch)
		archKnown = archKnown && t.TraceGPUArchFrom != cascade.ArchAssumed
		switch {
		case t.SourceGPU != nil && hwprofile.Named(p.GPU) && hwprofile.Named(*t.SourceGPU) && !hwprofile.SameGPU(*t.SourceGPU, p.GPU):
			out = append(out, fmt.Sprintf("%s; the trace was taken on %s", on, *t.SourceGPU))
		case archKnown && known && cc != want:
			out = append(out, fmt.Sprintf("%s; the trace was taken on an %s GPU", on, t.TraceGPUArch))
		}
	}
	return out
}

// nodot is a compute capability as an architecture's number: "6.1" is 61.
func nodot(cc string) string { return strings.ReplaceAll(cc, ".", "") }
