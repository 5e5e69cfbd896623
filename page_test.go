package cascade_test

import (
	"strings"
	"testing"

	"github.com/cascade-sim/cascade"
)

// TestPageLimit: a page is as large as First asks, 0 included (a count
// alone), at most MaxPageSize; a negative First is refused.
func TestPageLimit(t *testing.T) {
	for _, c := range []struct{ first, want int }{
		{0, 0}, {1, 1}, {cascade.DefaultPageSize, cascade.DefaultPageSize},
		{cascade.MaxPageSize, cascade.MaxPageSize}, {cascade.MaxPageSize + 1, cascade.MaxPageSize},
	} {
		if n, err := (cascade.Page{First: c.first}).Limit(); n != c.want || err != nil {
			t.Errorf("first %d: limit %d, %v; want %d", c.first, n, err, c.want)
		}
	}
	_, err := cascade.Page{First: -1}.Limit()
	if cascade.ErrorCode(err) != cascade.EINVALID || !strings.Contains(err.Error(), "first: must not be negative, got -1") {
		t.Errorf("first -1: %v, want a %s error", err, cascade.EINVALID)
	}
}
