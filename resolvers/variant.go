package resolvers

import (
	"sort"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/simconfig"
	"github.com/cascade-sim/cascade/graph/model"
)

// configModifiers is what mods defines, each base with the tested config
// of cfgs it is, sorted by name.
func configModifiers(mods simconfig.Modifiers, cfgs []cascade.SimConfig) *model.ConfigModifiers {
	out := &model.ConfigModifiers{File: nonEmpty(mods.File), Bases: []model.ConfigBase{}, Modifiers: []model.ConfigModifier{}}
	for name, tested := range mods.Bases {
		b := model.ConfigBase{Name: name}
		if _, ok := simconfig.Find(cfgs, tested); ok {
			b.SimConfig = &tested
		} else {
			b.Missing = &tested
		}
		out.Bases = append(out.Bases, b)
	}
	sort.Slice(out.Bases, func(i, j int) bool { return out.Bases[i].Name < out.Bases[j].Name })
	for _, name := range mods.Names() {
		m := model.ConfigModifier{Name: name, Params: mods.Params[name]}
		if m.Params == nil {
			m.Params = []cascade.SimParam{}
		}
		if why, bad := mods.Bad[name]; bad {
			m.Error = &why
		}
		out.Modifiers = append(out.Modifiers, m)
	}
	return out
}
