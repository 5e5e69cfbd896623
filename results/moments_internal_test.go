package results

import (
	"math"
	"strconv"
	"testing"
)

// TestPearsonExtremes: the correlation of points whose values are huge
// (a duration of 1e300, whose square overflows) or tiny (whose square
// underflows) is what the same points scaled to ordinary sizes give,
// never a 0 from an infinite or vanished sum; a point that is not finite
// gives none.
func TestPearsonExtremes(t *testing.T) {
	xs := []float64{1, 2, 3, 4}
	ys := []float64{2, 1, 4, 3}
	var plain moments
	for i := range xs {
		plain.add(xs[i], ys[i])
	}
	want := *plain.pearson() // 0.6
	for _, c := range []struct {
		name   string
		sx, sy float64
	}{
		{"huge measured", 1, 1e300}, {"huge both", 1e300, 1e300}, {"tiny measured", 1, 1e-300}, {"huge and tiny", 1e-300, 1e300},
	} {
		var m moments
		for i := range xs {
			m.add(xs[i]*c.sx, ys[i]*c.sy)
		}
		if r := m.pearson(); r == nil || math.Abs(*r-want) > 1e-12 {
			t.Errorf("%s: pearson %s, want %v", c.name, show(r), want)
		}
	}

	// One duration of 1e300 among ordinary ones: nearly perfectly
	// correlated with a simulated time as outlying.
	var m moments
	for i, y := range []float64{10, 20, 30, 1e300} {
		m.add([]float64{1, 2, 3, 1e299}[i], y)
	}
	if r := m.pearson(); r == nil || *r < 0.99 {
		t.Errorf("an outlier of 1e300: pearson %s, want about 1", show(r))
	}

	var inf moments
	inf.add(1, 2)
	inf.add(2, math.Inf(1))
	inf.add(3, 5)
	if r := inf.pearson(); r != nil {
		t.Errorf("an infinite point: pearson %v, want none", *r)
	}
}

func show(r *float64) string {
	if r == nil {
		return "none"
	}
	return strconv.FormatFloat(*r, 'g', -1, 64)
}
