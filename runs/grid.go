package runs

import (
	"fmt"
	"strings"

	"github.com/cascade-sim/cascade"
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
				c.Field += fmt.Sprintf(" × axes[%d].values[%d]", i, idx[i])
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
