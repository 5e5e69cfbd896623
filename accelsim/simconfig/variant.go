package simconfig

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/cascade-sim/cascade"
)

// A variant is a tested config with overrides, named as Accel-Sim's
// launcher names them: a base and modifiers joined by hyphens
// ("QV100-64SM", "SM7_QV100-1455MHZ-PWR_ENABLE"), where the base is a
// tested config's name or a base of define-standard-cfgs.yml, then any
// overrides given directly, as the simulator is given them
// ("SM7_QV100 -gpgpu_n_clusters 40"). Its canonical name ([VariantName])
// starts with the tested config's name, so "QV100-64SM" and
// "SM7_QV100-64SM" are one variant.

// VariantName is the canonical name of base with modifiers mods and the
// directly given overrides direct: "SM7_QV100-64SM -gpgpu_clock_domains
// 1455.0:1455.0:1455.0:850.0".
func VariantName(base string, mods []string, direct []cascade.SimParam) string {
	var b strings.Builder
	b.WriteString(base)
	for _, m := range mods {
		b.WriteString("-" + m)
	}
	for _, p := range direct {
		v, _ := nameValue(p)
		b.WriteString(" " + p.Option + " " + v)
	}
	return b.String()
}

// nameValue is how a variant's name writes p's value so that [SplitName]
// reads it back: bare where that reads as the value, else in double
// quotes ("lrr gto"). False when neither does: the name's options are read
// as a config file's, where '#' starts a comment, quotes have no escapes
// and white space between words is one space.
func nameValue(p cascade.SimParam) (string, bool) {
	for _, w := range []string{p.Value, `"` + p.Value + `"`} {
		// Read between two options, as a name has it (whatever p's
		// option, which is checked on its own).
		ps, err := ParseParams("-a 1 -v " + w + " -b 2")
		if err == nil && len(ps) == 3 && ps[1] == (cascade.SimParam{Option: "-v", Value: p.Value}) &&
			ps[2] == (cascade.SimParam{Option: "-b", Value: "2"}) {
			return w, true
		}
	}
	return `"` + p.Value + `"`, false
}

// CheckDirect refuses a value given directly that the simulator or the
// variant's name could not take: one holding a line break (Accel-Sim's
// options reach the simulator in config files and command lines, where a
// line break starts another option), or one a name cannot write so that
// it reads back ([nameValue]). It is what [Variant] refuses of a value
// given directly whatever the config.
func CheckDirect(p cascade.SimParam) error {
	if strings.ContainsAny(p.Value, "\r\n") {
		return fmt.Errorf("%s %q: the value holds a line break, which would start another option", p.Option, p.Value)
	}
	if _, ok := nameValue(p); !ok {
		return fmt.Errorf("%s %q: a variant's name could not write this value so that it reads back: there '#' starts a comment, and a value is one word, or words one space apart in double quotes, with no '\"' at its ends", p.Option, p.Value)
	}
	return nil
}

// SplitName splits a variant's name into its hyphenated head ("QV100-64SM")
// and the overrides written after it (" -gpgpu_n_clusters 40").
func SplitName(name string) (head string, direct []cascade.SimParam, err error) {
	head, rest, _ := strings.Cut(strings.TrimSpace(name), " ")
	if rest = strings.TrimSpace(rest); rest == "" {
		return head, nil, nil
	}
	direct, err = ParseParams(rest)
	return head, direct, err
}

// Variant resolves name, with the overrides params given beside it, into
// the config to run: a tested config of cfgs itself when there is
// nothing to override, else a variant of it ([cascade.SimConfig.Base]
// set) whose Params are its modifiers' overrides, in the order named,
// then name's own, then params, and whose clock, compute capability and
// launch latency are those the overrides give. The error, for a user,
// names what is wrong: an unknown base or modifier (with the names most
// likely meant), a modifier named twice or an option given twice
// directly, a value the base's own value shows cannot be right (a word
// where it has a number, a clock that is not four positive numbers).
func Variant(cfgs []cascade.SimConfig, mods Modifiers, name string, params []cascade.SimParam) (cascade.SimConfig, error) {
	head, direct, err := SplitName(name)
	if err != nil {
		return cascade.SimConfig{}, fmt.Errorf("%q: %w", name, err)
	}
	base, modNames, err := splitHead(cfgs, mods, head)
	if err != nil {
		return cascade.SimConfig{}, err
	}
	direct = append(direct, params...)
	seen := map[string]bool{}
	for _, p := range direct {
		if err := checkOption(p.Option); err != nil {
			return cascade.SimConfig{}, err
		}
		if err := CheckDirect(p); err != nil {
			return cascade.SimConfig{}, err
		}
		if seen[p.Option] {
			return cascade.SimConfig{}, fmt.Errorf("%s is given twice", p.Option)
		}
		seen[p.Option] = true
	}
	if len(modNames) == 0 && len(direct) == 0 {
		return base, nil
	}
	var all []cascade.SimParam
	for _, m := range modNames {
		all = append(all, mods.Params[m]...)
	}
	for _, p := range direct {
		all = append(all, cascade.SimParam{Option: p.Option, Value: p.Value})
	}
	v := base
	v.Base = base.Name
	v.Name = VariantName(base.Name, modNames, direct)
	return Apply(v, all)
}

// Apply gives v the overrides ps and reads what they change (core clock,
// compute capability, launch latency, L2 capacity) as the simulator would: after the
// config files, a later value winning. An override whose value cannot be
// the option's, judged by the value the files give it, is an error naming
// the option and the modifier it came from.
func Apply(v cascade.SimConfig, ps []cascade.SimParam) (cascade.SimConfig, error) {
	v.Params = slices.Clone(ps)
	if !v.Usable() {
		return v, nil
	}
	opts := options{}
	if err := opts.read(v); err != nil {
		return v, err
	}
	for _, p := range ps {
		if err := checkValue(opts, v.Base, p); err != nil {
			return v, err
		}
		if err := checkFile(v, p); err != nil {
			return v, err
		}
		opts[p.Option] = option{value: p.Value, file: paramSource(p)}
	}
	cc, err := opts.computeCapability()
	if err != nil {
		return v, err
	}
	clock, err := opts.coreClock()
	if err != nil {
		return v, err
	}
	v.ComputeCapability, v.CoreClockMHz, v.LaunchLatencyCycles, v.L2Bytes = cc, clock, opts.launchLatency(), opts.l2Bytes()
	return v, nil
}

// paramSource names where an override came from, as an error says it.
func paramSource(p cascade.SimParam) string {
	if p.From != "" {
		return "modifier " + p.From
	}
	return "override " + p.Option
}

// checkValue refuses an override whose value the option cannot take,
// as far as the base's own value tells: a number for a number, and for
// -gpgpu_clock_domains four positive numbers joined by ':' (the
// simulator takes any text for it and simulates at a clock of 0).
func checkValue(base options, baseName string, p cascade.SimParam) error {
	if p.Value == "" {
		return fmt.Errorf("%s: %s has no value", paramSource(p), p.Option)
	}
	if p.Option == "-gpgpu_clock_domains" {
		parts := strings.Split(p.Value, ":")
		for _, s := range parts {
			f, err := strconv.ParseFloat(s, 64)
			if err != nil || !(f > 0) || math.IsInf(f, 0) || len(parts) != 4 {
				return fmt.Errorf("%s: -gpgpu_clock_domains %q: want <core>:<interconnect>:<L2>:<DRAM> clocks in MHz, four positive numbers (%s has %s)",
					paramSource(p), p.Value, baseName, base[p.Option].value)
			}
		}
		return nil
	}
	have, ok := base[p.Option]
	if !ok {
		return nil // the simulator knows whether the option exists
	}
	baseN, err := strconv.ParseInt(have.value, 10, 64)
	if err != nil {
		return nil
	}
	n, err := strconv.ParseInt(p.Value, 0, 64)
	switch {
	case errors.Is(err, strconv.ErrRange):
		low := int64(math.MinInt64)
		if baseN >= 0 && !signedOptions[p.Option] {
			low = 0
			if sizeOptions[p.Option] {
				low = 1
			}
		}
		return fmt.Errorf("%s: %s %s: out of range; it takes a whole number from %d to %d (%s has %s)",
			paramSource(p), p.Option, p.Value, low, int64(math.MaxInt64), baseName, have.value)
	case err != nil:
		return fmt.Errorf("%s: %s %q: not a whole number (%s has %s)", paramSource(p), p.Option, p.Value, baseName, have.value)
	case n < 0 && baseN >= 0 && !signedOptions[p.Option]:
		return fmt.Errorf("%s: %s %s: a count cannot be negative (%s has %s; the simulator reads it unsigned, as a number past 4 billion)",
			paramSource(p), p.Option, p.Value, baseName, have.value)
	case n == 0 && sizeOptions[p.Option]:
		return fmt.Errorf("%s: %s 0: a GPU needs at least one (%s has %s)", paramSource(p), p.Option, baseName, have.value)
	}
	return nil
}

// fileOptions name a file the simulator reads at start, by a name in the
// run's directory, where a run finds its config folders' files.
var fileOptions = map[string]bool{"-inter_config_file": true, "-accelwattch_xml_file": true}

// checkFile refuses an override of a fileOptions option whose file the
// config's folders do not hold (by a bare name) or that does not exist
// (by an absolute path): TITANX-BOOKSIM names config_volta_islip.icnt,
// which SM6_TITANX's folder lacks, and its runs failed at start.
func checkFile(v cascade.SimConfig, p cascade.SimParam) error {
	if !fileOptions[p.Option] || p.Value == "" {
		return nil
	}
	if filepath.IsAbs(p.Value) {
		if _, err := os.Stat(p.Value); err != nil {
			return fmt.Errorf("%s: %s %s: %v", paramSource(p), p.Option, p.Value, err)
		}
		return nil
	}
	if strings.ContainsAny(p.Value, `/\`) {
		return nil // relative to the run's directory: not the folders'
	}
	var folders []string
	for _, f := range []string{GPGPUSimPath(v), TracePath(v)} {
		real, err := filepath.EvalSymlinks(f)
		if err != nil {
			continue
		}
		dir := filepath.Dir(real)
		if _, err := os.Stat(filepath.Join(dir, p.Value)); err == nil {
			return nil
		}
		if !slices.Contains(folders, dir) {
			folders = append(folders, dir)
		}
	}
	return fmt.Errorf("%s: %s %s: no such file in %s's config folder %s", paramSource(p), p.Option, p.Value, v.Base, strings.Join(folders, " or "))
}

// signedOptions are the whole-number options GPGPU-Sim gives a meaning
// below 0 (-1: none), which a negative override may set.
var signedOptions = map[string]bool{"-gpgpu_warpdistro_shader": true}

// sizeOptions are the counts of the simulated GPU's parts, of which none
// builds no GPU: with 0 clusters the simulator deadlocks at once, with 0
// memory channels or bus width it divides by 0. A negative count is
// refused for every option whose base value is not negative: GPGPU-Sim
// reads counts as unsigned, and -3 clusters ended in std::bad_alloc
// (class OUT_OF_MEMORY), as if the machine were short of memory.
var sizeOptions = map[string]bool{
	"-gpgpu_n_clusters": true, "-gpgpu_n_cores_per_cluster": true, "-gpgpu_n_mem": true,
	"-gpgpu_n_sub_partition_per_mchannel": true, "-gpgpu_n_mem_per_ctrlr": true, "-gpgpu_num_sched_per_core": true,
	"-gpgpu_shader_cta": true, "-gpgpu_shader_registers": true, "-gpgpu_dram_buswidth": true, "-gpgpu_dram_burst_length": true,
}

// read reads c's two files into o, as [load] does.
func (o options) read(c cascade.SimConfig) error {
	for _, path := range []string{GPGPUSimPath(c), TracePath(c)} {
		data, err := readFile(path)
		if err != nil {
			return err
		}
		o.parse(path, data)
	}
	return nil
}

// splitHead finds the base of a variant's head and its modifiers: the
// longest hyphen-joined prefix that is a tested config's name or a base
// of mods, the rest modifiers, each of which must be one of mods' and
// named once.
func splitHead(cfgs []cascade.SimConfig, mods Modifiers, head string) (cascade.SimConfig, []string, error) {
	parts := strings.Split(head, "-")
	for n := len(parts); n >= 1; n-- {
		name := strings.Join(parts[:n], "-")
		base, ok := Find(cfgs, name)
		if !ok {
			tested, isBase := mods.Bases[name]
			if !isBase {
				continue
			}
			if base, ok = Find(cfgs, tested); !ok {
				return base, nil, fmt.Errorf("%s is %s in %s, which is not among the tested configs", name, tested, mods.File)
			}
		}
		if !base.Usable() {
			return base, nil, fmt.Errorf("%s cannot be used: %s", base.Name, base.Err)
		}
		rest := parts[n:]
		for i, m := range rest {
			if why, bad := mods.Bad[m]; bad {
				return base, nil, fmt.Errorf("modifier %s of %s cannot be used: %s", m, mods.File, why)
			}
			if _, ok := mods.Params[m]; !ok {
				return base, nil, unknownModifier(mods, m)
			}
			if slices.Contains(rest[:i], m) {
				return base, nil, fmt.Errorf("modifier %s is given twice; give it once", m)
			}
		}
		return base, rest, nil
	}
	return cascade.SimConfig{}, nil, unknownBase(cfgs, mods, head)
}

// unknownBase says that head starts with no base, and which were meant.
func unknownBase(cfgs []cascade.SimConfig, mods Modifiers, head string) error {
	first, _, _ := strings.Cut(head, "-")
	all := slices.Clone(cfgs)
	for b, tested := range mods.Bases {
		if _, ok := Find(cfgs, tested); ok {
			all = append(all, cascade.SimConfig{Name: b})
		}
	}
	slices.SortFunc(all, func(a, b cascade.SimConfig) int { return strings.Compare(a.Name, b.Name) })
	return errors.New(Unknown(all, first))
}

// unknownModifier says that m is no modifier, and which were meant.
func unknownModifier(mods Modifiers, m string) error {
	if mods.File == "" {
		return fmt.Errorf("no modifier %q: no define-standard-cfgs.yml is read (CASCADE_CONFIG_MODIFIERS)", m)
	}
	names := mods.Names()
	cands := make([]cascade.SimConfig, len(names))
	for i, n := range names {
		cands[i] = cascade.SimConfig{Name: n}
	}
	if near := Closest(cands, m); len(near) > 0 {
		return fmt.Errorf("no modifier %q in %s; did you mean %s?", m, mods.File, quoteAll(near))
	}
	return fmt.Errorf("no modifier %q in %s (it has %d: %s)", m, mods.File, len(names), strings.Join(names, ", "))
}

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, " or ")
}

func readFile(path string) (string, error) {
	data, err := os.ReadFile(path)
	return string(data), err
}
