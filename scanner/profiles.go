package scanner

import (
	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/tracedir"
)

// profilesLook is what a walk saw of the hardware profiles metadata.json
// names: the core sum of metadata.json (without its profiles), and each
// profile's name and file fingerprint, in metadata.json's order.
type profilesLook struct {
	metaCoreSum string
	names       []string
	sigs        []string
}

// lookProfiles reads what a walk of tree saw of the profiles of
// metadata.json, whose bytes are b and which parsed as m.
func lookProfiles(tree *tracedir.Tree, b []byte, m tracedir.Metadata) profilesLook {
	pl := profilesLook{metaCoreSum: tracedir.MetadataCoreSum(b, m), names: m.Profiles}
	for _, name := range m.Profiles {
		pl.sigs = append(pl.sigs, tree.FileSig(name))
	}
	return pl
}

// changed reports whether the profiles differ from those a ready trace's
// profiles were last read from (Trace.Profiles, each with the fingerprint
// of the file read): another list of names, or a file added, changed or
// gone.
func (pl profilesLook) changed(read []cascade.ProfileRead) bool {
	if len(pl.names) != len(read) {
		return true
	}
	for i, r := range read {
		if r.File != pl.names[i] || r.Sum != pl.sigs[i] {
			return true
		}
	}
	return false
}
