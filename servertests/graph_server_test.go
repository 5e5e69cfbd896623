package servertests_test

import (
	"testing"
	"time"

	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/servertest"
)

func TestErrorCodes(t *testing.T) {
	t.Parallel()
	s := servertest.Server(t)
	cases := []struct {
		name, query, code string
	}{
		{"BadCursor", `{ traces(after: "nonsense") { totalCount } }`, "BAD_USER_INPUT"},
		{"NegativeFirst", `{ traces(first: -1) { totalCount } }`, "BAD_USER_INPUT"},
		{"NotFound", `mutation { retryTrace(id: "missing") { id } }`, "NOT_FOUND"},
		{"Conflict", `mutation { retryTrace(id: "sample") { id } }`, "CONFLICT"},
		{"Validation", `{ traces { nosuchfield } }`, "GRAPHQL_VALIDATION_FAILED"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			errs := s.Do(t, c.query, nil, nil)
			if len(errs) != 1 || errs[0].Code() != c.code {
				t.Fatalf("errors %+v, want one with code %s", errs, c.code)
			}
		})
	}
}

func TestTracesPageWithCursors(t *testing.T) {
	t.Parallel()
	s := servertest.Server(t)
	for _, id := range []string{"a", "b", "c"} {
		s.WriteFile(t, id, "traces/kernel-1.trace", []byte("x"))
	}
	type page struct {
		Traces struct {
			TotalCount int
			Edges      []struct {
				Cursor string
				Node   struct{ ID string }
			}
			PageInfo struct {
				HasNextPage bool
				EndCursor   *string
			}
		}
	}
	testkit.Eventually(t, 5*time.Second, "three traces", func() bool {
		var p page
		s.MustDo(t, `{ traces(state: UPLOADING) { totalCount } }`, nil, &p)
		return p.Traces.TotalCount == 3
	})
	var seen []string
	var after any
	for {
		var p page
		s.MustDo(t, `query($after: String) { traces(state: UPLOADING, first: 2, after: $after) { totalCount edges { cursor node { id } } pageInfo { hasNextPage endCursor } } }`, map[string]any{"after": after}, &p)
		for _, e := range p.Traces.Edges {
			seen = append(seen, e.Node.ID)
		}
		if !p.Traces.PageInfo.HasNextPage {
			break
		}
		after = *p.Traces.PageInfo.EndCursor
	}
	if len(seen) != 3 {
		t.Fatalf("paged %v", seen)
	}
}
