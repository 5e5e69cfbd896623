package simconfig

import (
	"fmt"
	"strings"

	"github.com/cascade-sim/cascade"
)

// Closest returns the names of cfgs a user who typed name most likely
// meant: those equal to it but for case, else those that are it after an
// "SM<n>_" prefix it left out (TITANX: SM6_TITANX), else those fewest edits away
// (ignoring case), when that is few enough to be a slip: at most a third
// of name's length, and at least 1 and at most 3 edits. It returns nil
// when none is that close.
func Closest(cfgs []cascade.SimConfig, name string) []string {
	var same []string
	for _, c := range cfgs {
		if strings.EqualFold(c.Name, name) {
			same = append(same, c.Name)
		}
	}
	if same != nil {
		return same
	}
	if !strings.Contains(name, "_") && name != "" {
		for _, c := range cfgs {
			if _, rest, ok := strings.Cut(c.Name, "_"); ok && strings.EqualFold(rest, name) {
				same = append(same, c.Name)
			}
		}
		if same != nil {
			return same
		}
	}
	limit := min(max(len([]rune(name))/3, 1), 3)
	var best []string
	bestD := limit + 1
	for _, c := range cfgs {
		d := editDistance(strings.ToLower(c.Name), strings.ToLower(name))
		switch {
		case d < bestD:
			best, bestD = []string{c.Name}, d
		case d == bestD:
			best = append(best, c.Name)
		}
	}
	return best
}

// Unknown says that no config of cfgs is called name, and which the user
// may have meant (see [Closest]), or else which there are:
// `no config "sm6_titanx"; did you mean "SM6_TITANX"?`.
func Unknown(cfgs []cascade.SimConfig, name string) string {
	if len(cfgs) == 0 {
		return fmt.Sprintf("no config %q: no configs are set up (CASCADE_SIM_CONFIGS_DIR)", name)
	}
	if near := Closest(cfgs, name); len(near) > 0 {
		return fmt.Sprintf("no config %q; did you mean %s?", name, quoteAll(near))
	}
	names := make([]string, len(cfgs))
	for i, c := range cfgs {
		names[i] = c.Name
	}
	return fmt.Sprintf("no config %q (have %s)", name, strings.Join(names, ", "))
}

// editDistance is the Levenshtein distance between a and b, by rune.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
