package runs

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/simconfig"
)

// gridCell is one cell of a design sweep's grid: the name it is asked
// for by and where it came from, for a refusal to say.
type gridCell struct {
	Name   string
	Params []cascade.SimParam // overrides given beside Name
	Field  string             // "simConfigs[0]" or "simConfigs[0] × axes[1].values[2]"
}

// expandGrid makes the cells of a sweep: each base config × each
// combination of the axes' values (the last axis varying fastest). An
// axis with an option gives each cell that override; one without
// appends its modifier to the cell's name. Without axes each base is a
// cell; the bases at skip make none (they are refused already). The
// problems it returns name the axis and value.
func expandGrid(bases []string, axes []cascade.SweepAxis, skip map[int]bool) ([]gridCell, []string) {
	var problems []string
	seenOpt := map[string]int{}
	for i, a := range axes {
		switch {
		case len(a.Values) == 0:
			problems = append(problems, fmt.Sprintf("axes[%d].values: empty; an axis needs at least one value", i))
		case a.Option != "":
			if err := simconfig.CheckOption(a.Option); err != nil {
				problems = append(problems, fmt.Sprintf("axes[%d].option: %v", i, err))
			}
			if j, ok := seenOpt[a.Option]; ok {
				problems = append(problems, fmt.Sprintf("axes[%d].option: %s is given twice (also axes[%d])", i, a.Option, j))
			}
			seenOpt[a.Option] = i
		}
		seen := map[string]int{}
		for k, v := range a.Values {
			if j, ok := seen[v]; ok {
				problems = append(problems, fmt.Sprintf("axes[%d].values[%d]: %q is given twice (also values[%d])", i, k, v, j))
			}
			seen[v] = k
			if a.Option != "" && strings.TrimSpace(v) == "" {
				problems = append(problems, fmt.Sprintf("axes[%d].values[%d]: empty; %s needs a value", i, k, a.Option))
			} else if a.Option != "" {
				if err := simconfig.CheckDirect(cascade.SimParam{Option: a.Option, Value: v}); err != nil {
					problems = append(problems, fmt.Sprintf("axes[%d].values[%d]: %v", i, k, err))
				}
			}
			if a.Option == "" && strings.ContainsAny(v, " -") {
				problems = append(problems, fmt.Sprintf("axes[%d].values[%d]: %q is not a modifier's name (an axis without an option lists modifiers, \"\" for none)", i, k, v))
			}
		}
	}
	if len(problems) > 0 {
		return nil, problems
	}
	n := len(bases)
	for _, a := range axes {
		n *= len(a.Values)
		if n > MaxSweepRuns {
			return nil, []string{fmt.Sprintf("the grid has more than %d cells", MaxSweepRuns)}
		}
	}
	cells := make([]gridCell, 0, n)
	idx := make([]int, len(axes))
	for b, base := range bases {
		if skip[b] {
			continue
		}
		for {
			c := gridCell{Name: base, Field: fmt.Sprintf("simConfigs[%d]", b)}
			for i, a := range axes {
				v := a.Values[idx[i]]
				c.Field += fmt.Sprintf(cellSeparator+"axes[%d].values[%d]", i, idx[i])
				switch {
				case a.Option != "":
					c.Params = append(c.Params, cascade.SimParam{Option: a.Option, Value: v})
				case v != "":
					c.Name = insertModifier(c.Name, v)
				}
			}
			cells = append(cells, c)
			if !next(idx, axes) {
				break
			}
		}
	}
	return cells, nil
}

// insertModifier appends modifier m to a variant's hyphenated head,
// before any overrides written in the name.
func insertModifier(name, m string) string {
	head, rest, ok := strings.Cut(name, " ")
	if !ok {
		return name + "-" + m
	}
	return head + "-" + m + " " + rest
}

// next advances idx to the next combination of the axes' values; false
// after the last.
func next(idx []int, axes []cascade.SweepAxis) bool {
	for i := len(idx) - 1; i >= 0; i-- {
		idx[i]++
		if idx[i] < len(axes[i].Values) {
			return true
		}
		idx[i] = 0
	}
	return false
}

// cellSeparator joins the parts of a grid cell's field.
const cellSeparator = " × "

// A problem is why a sweep cannot be launched: of the grid's cell (or
// part, "axes[1].values[0]") field, and of the config subject the cell
// names, when the why does not say it ("SM90_H100-L1OFF").
type problem struct{ field, subject, why string }

// String is the problem as a refusal says it: "<field>: <subject>: <why>".
func (p problem) String() string {
	var parts []string
	for _, s := range []string{p.field, p.subject, p.why} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, ": ")
}

// mergeProblems reports once what several cells of a grid share: the
// problems with the same why are given once, on the parts of the field
// they all have ("simConfigs[1]: no config ..." for the nine cells of a
// base that does not exist; the cells' subjects, which differ, left out),
// and each on its own field when they share no part. The order is that
// of each why's first problem.
func mergeProblems(problems []problem) []string {
	type group struct {
		common []string // the field parts every problem of the group has
		probs  []problem
	}
	groups := map[string]*group{}
	var order []string
	for _, p := range problems {
		parts := strings.Split(p.field, cellSeparator)
		g := groups[p.why]
		if g == nil {
			g = &group{common: parts}
			groups[p.why] = g
			order = append(order, p.why)
		} else {
			g.common = slices.DeleteFunc(g.common, func(c string) bool { return !slices.Contains(parts, c) })
		}
		g.probs = append(g.probs, p)
	}
	out := make([]string, 0, len(order))
	for _, why := range order {
		g := groups[why]
		switch {
		case len(g.probs) > 1 && len(g.common) > 0 && g.common[0] != "":
			out = append(out, problem{field: strings.Join(g.common, cellSeparator), why: why}.String())
		default:
			for _, p := range g.probs {
				out = append(out, p.String())
			}
		}
	}
	return out
}

// optionRefusals are the simulator's refusals of an axis's option itself:
// when it refuses every cell of the grid for the option an axis gives it,
// with one line whatever the value ("Unknown Option: '-x'"), that is said
// once, on the axis, rather than once per cell.
func optionRefusals(axes []cascade.SweepAxis, cells []cascade.SimConfig, refusals []string) []string {
	var out []string
	for a, axis := range axes {
		if axis.Option == "" || len(cells) == 0 {
			continue
		}
		line := ""
		for i, why := range refusals {
			raw, ok := refusalOf(why, axis.Option, cells[i])
			if !ok || i > 0 && raw != line {
				line = ""
				break
			}
			line = raw
		}
		if line != "" {
			out = append(out, fmt.Sprintf("axes[%d].option: %s: the simulator refuses it, whatever its value: %s", a, axis.Option, line))
		}
	}
	return out
}

// refusalOf is the simulator's line of refusal why, without the override
// [explainRefusal] adds, when the line names opt and that override is c's
// own value for opt (not a modifier's).
func refusalOf(why, opt string, c cascade.SimConfig) (string, bool) {
	m := quotedOption.FindStringSubmatch(why)
	if m == nil || m[1]+m[2] != opt {
		return "", false
	}
	i := slices.IndexFunc(c.Params, func(p cascade.SimParam) bool { return p.Option == opt })
	if i < 0 || c.Params[i].From != "" {
		return "", false
	}
	said := " (" + c.Params[i].String() + ")"
	return strings.Replace(why, said, "", 1), strings.Contains(why, said)
}
