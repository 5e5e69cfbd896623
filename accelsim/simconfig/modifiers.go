package simconfig

import (
	"errors"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/cascade-sim/cascade"
)

// Modifiers is what a define-standard-cfgs.yml defines, as Accel-Sim's
// run_simulations.py reads it: base configs (a name and the tested-config
// folder its base_file is in: QV100 is SM7_QV100) and composable
// modifiers (a name and the options its extra_params append). The zero
// value defines nothing.
type Modifiers struct {
	File string // where it was read from; "" for none
	// Bases maps a base name to its tested config's name.
	Bases map[string]string
	// Params maps a modifier's name to its overrides, each From it.
	Params map[string][]cascade.SimParam
	// Bad maps a modifier whose extra_params cannot be read to why.
	Bad map[string]string
}

// Names are the modifiers' names, sorted.
func (m Modifiers) Names() []string {
	names := make([]string, 0, len(m.Params)+len(m.Bad))
	for n := range m.Params {
		names = append(names, n)
	}
	for n := range m.Bad {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// LoadModifiers reads a define-standard-cfgs.yml. A file that is not
// there defines nothing (the error wraps os.ErrNotExist); one that is
// not YAML of name: {base_file | extra_params} entries is an error that
// names it and, where the YAML parser says, its line.
func LoadModifiers(file string) (Modifiers, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return Modifiers{}, fmt.Errorf("config modifiers: %w", err)
	}
	m, err := ParseModifiers(data)
	if err != nil {
		return Modifiers{}, fmt.Errorf("config modifiers %s: %w", file, err)
	}
	m.File = file
	return m, nil
}

// ParseModifiers reads a define-standard-cfgs.yml's text (see
// [LoadModifiers]). A modifier whose extra_params are not "-option value"
// pairs is kept in Bad, so that naming it says why it cannot be used and
// every other modifier still works.
func ParseModifiers(data []byte) (Modifiers, error) {
	var entries yaml.MapSlice
	if err := yaml.Unmarshal(data, &entries); err != nil {
		return Modifiers{}, errors.New(strings.TrimSpace(yaml.FormatError(err, false, true)))
	}
	m := Modifiers{Bases: map[string]string{}, Params: map[string][]cascade.SimParam{}, Bad: map[string]string{}}
	for _, e := range entries {
		name := fmt.Sprint(e.Key)
		fields, ok := e.Value.(map[string]any)
		if !ok {
			m.Bad[name] = "neither base_file nor extra_params"
			continue
		}
		if base, ok := fields["base_file"].(string); ok {
			// "$GPGPUSIM_ROOT/configs/tested-cfgs/SM7_QV100/gpgpusim.config"
			m.Bases[name] = path.Base(path.Dir(base))
			continue
		}
		extra, ok := fields["extra_params"].(string)
		if !ok {
			m.Bad[name] = "neither base_file nor extra_params"
			continue
		}
		ps, err := ParseParams(extra)
		if err != nil {
			m.Bad[name] = "extra_params: " + err.Error()
			continue
		}
		for i := range ps {
			ps[i].From = name
		}
		m.Params[name] = ps
	}
	return m, nil
}

// ParseParams reads options as a config file or a modifier's
// extra_params holds them: "-option value" pairs separated by white space
// or new lines, '#' starting a comment ("#SASS-Driven Accel-Sim" is
// none). Every option needs a value.
func ParseParams(text string) ([]cascade.SimParam, error) {
	tokens := tokenize(text)
	var ps []cascade.SimParam
	for i := 0; i < len(tokens); i += 2 {
		opt := tokens[i]
		if err := checkOption(opt); err != nil {
			return nil, err
		}
		if i+1 >= len(tokens) {
			return nil, fmt.Errorf("%s has no value", opt)
		}
		ps = append(ps, cascade.SimParam{Option: opt, Value: tokens[i+1]})
	}
	return ps, nil
}

// CheckOption says what is wrong with an option's name, as [Variant]
// refuses it; nil when nothing is.
func CheckOption(opt string) error { return checkOption(opt) }

// checkOption says what is wrong with an option's name: GPGPU-Sim's are
// a dash and letters, digits and underscores.
func checkOption(opt string) error {
	if strings.ContainsAny(opt, "\r\n") {
		return fmt.Errorf("option %q: the name holds a line break, which would start another option", opt)
	}
	name, ok := strings.CutPrefix(opt, "-")
	switch {
	case opt == "":
		return errors.New("the option name is empty")
	case opt == "-":
		return errors.New(`"-" is not an option: the name after '-' is empty`)
	}
	if !ok {
		return fmt.Errorf("%q is not an option: options start with '-' (\"-gpgpu_n_clusters\")", opt)
	}
	for _, r := range name {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return fmt.Errorf("%q is not an option: a name holds letters, digits and '_'", opt)
		}
	}
	return nil
}
