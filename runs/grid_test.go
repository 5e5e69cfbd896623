package runs

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade"
)

func TestExpandGrid(t *testing.T) {
	cells, problems := expandGrid([]string{"QV100", "SM6_TITANX -gpgpu_scheduler gto"}, []cascade.SweepAxis{
		{Values: []string{"", "1455MHZ"}}, {Option: "-gpgpu_n_clusters", Values: []string{"20", "40"}},
	}, nil)
	if problems != nil {
		t.Fatal(problems)
	}
	var got []string
	for _, c := range cells {
		s := c.Name
		for _, p := range c.Params {
			s += " +" + p.String()
		}
		got = append(got, s+" @ "+c.Field)
	}
	want := []string{
		"QV100 +-gpgpu_n_clusters 20 @ simConfigs[0] × axes[0].values[0] × axes[1].values[0]",
		"QV100 +-gpgpu_n_clusters 40 @ simConfigs[0] × axes[0].values[0] × axes[1].values[1]",
		"QV100-1455MHZ +-gpgpu_n_clusters 20 @ simConfigs[0] × axes[0].values[1] × axes[1].values[0]",
		"QV100-1455MHZ +-gpgpu_n_clusters 40 @ simConfigs[0] × axes[0].values[1] × axes[1].values[1]",
		"SM6_TITANX -gpgpu_scheduler gto +-gpgpu_n_clusters 20 @ simConfigs[1] × axes[0].values[0] × axes[1].values[0]",
		"SM6_TITANX -gpgpu_scheduler gto +-gpgpu_n_clusters 40 @ simConfigs[1] × axes[0].values[0] × axes[1].values[1]",
		"SM6_TITANX-1455MHZ -gpgpu_scheduler gto +-gpgpu_n_clusters 20 @ simConfigs[1] × axes[0].values[1] × axes[1].values[0]",
		"SM6_TITANX-1455MHZ -gpgpu_scheduler gto +-gpgpu_n_clusters 40 @ simConfigs[1] × axes[0].values[1] × axes[1].values[1]",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("cells:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestExpandGridRefusesBadAxes(t *testing.T) {
	_, problems := expandGrid([]string{"QV100"}, []cascade.SweepAxis{
		{Option: "-gpgpu_n_clusters", Values: []string{"20", "20", ""}},
		{Option: "-gpgpu_n_clusters", Values: []string{"1"}},
		{Values: nil},
		{Values: []string{"64SM-1455MHZ"}},
	}, nil)
	got := strings.Join(problems, "\n")
	for _, w := range []string{
		`axes[0].values[1]: "20" is given twice (also values[0])`,
		"axes[0].values[2]: empty; -gpgpu_n_clusters needs a value",
		"axes[1].option: -gpgpu_n_clusters is given twice (also axes[0])",
		"axes[2].values: empty",
		`axes[3].values[0]: "64SM-1455MHZ" is not a modifier's name`,
	} {
		if !strings.Contains(got, w) {
			t.Errorf("problems:\n%s\nwant %q", got, w)
		}
	}
}

// TestMergeProblems: a problem of several cells is said once, on the
// parts of the field they share; others stay as they are.
func TestMergeProblems(t *testing.T) {
	var in []string
	for i := range 3 {
		for j := range 3 {
			in = append(in, fmt.Sprintf(`simConfigs[1] × axes[0].values[%d] × axes[1].values[%d]: no config "SM99"`, i, j))
		}
	}
	for _, b := range []int{0, 1} {
		for j := range 3 {
			in = append(in, fmt.Sprintf(`simConfigs[%d] × axes[0].values[1] × axes[1].values[%d]: -gpgpu_n_clusters: "x" is not a number`, b, j))
		}
	}
	in = append(in, `simConfigs[0] × axes[0].values[2] × axes[1].values[0]: -gpgpu_n_clusters: 0 clusters`, "too many runs")
	want := []string{
		`simConfigs[1]: no config "SM99"`,
		`axes[0].values[1]: -gpgpu_n_clusters: "x" is not a number`,
		`simConfigs[0] × axes[0].values[2] × axes[1].values[0]: -gpgpu_n_clusters: 0 clusters`,
		"too many runs",
	}
	var probs []problem
	for _, p := range in {
		field, why, ok := strings.Cut(p, ": ")
		if !ok {
			field, why = "", p
		}
		probs = append(probs, problem{field: field, why: why})
	}
	// The simulator's refusal of two cells, said once without their names.
	for j := range 2 {
		probs = append(probs, problem{field: fmt.Sprintf("simConfigs[0] × axes[0].values[0] × axes[1].values[%d]", j),
			subject: fmt.Sprintf("QV100 -x %d", j), why: "the simulator refuses it: no"})
	}
	probs = append(probs, problem{field: "simConfigs[1]", subject: "SM99", why: "alone"})
	want = append(want, "simConfigs[0] × axes[0].values[0]: the simulator refuses it: no", "simConfigs[1]: SM99: alone")
	if got := mergeProblems(probs); !slices.Equal(got, want) {
		t.Errorf("merged:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
