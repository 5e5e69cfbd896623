package simconfig

import "github.com/cascade-sim/cascade"

// Value is the value config c gives option name (with its dash), as the
// simulator reads its files, then c's overrides (a later value winning);
// false when neither names it.
func Value(c cascade.SimConfig, name string) (string, bool, error) {
	opts := options{}
	if err := opts.read(c); err != nil {
		return "", false, err
	}
	v, ok := opts[name]
	for _, p := range c.Params {
		if p.Option == name {
			v, ok = option{value: p.Value}, true
		}
	}
	return v.value, ok, nil
}
