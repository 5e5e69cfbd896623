package graph

import (
	"math"

	"github.com/cascade-sim/cascade"
)

// complexity prices the fields that return a page by its size; every
// other field costs 1 plus what it selects (gqlgen's default).
func complexity() ComplexityRoot {
	var c ComplexityRoot
	c.Query.Traces = func(child int, _ *cascade.TraceState, _ *string, first *int, _ *string) int {
		return pageCost(child, first)
	}
	c.Query.Runs = func(child int, _ *string, _ *cascade.RunState, _ *cascade.FailureClass, _ *bool, first *int, _ *string) int {
		return pageCost(child, first)
	}
	c.Trace.Kernels = func(child int, _ *string, first *int, _ *string) int { return pageCost(child, first) }
	c.Run.KernelPage = func(child int, first *int, _ *string) int { return pageCost(child, first) }
	c.Trace.Runs = func(child int, first *int, _ *string) int { return pageCost(child, first) }
	c.Trace.ConfigComparisonKernels = func(child int, first *int, _ *string) int { return pageCost(child, first) }
	c.Query.Sweeps = func(child int, first *int, _ *string) int { return pageCost(child, first) }
	c.Sweep.Runs = func(child int, _ *cascade.RunState, first *int, _ *string) int { return pageCost(child, first) }
	return c
}

// pageCost is a page's cost: what one item selects times the items asked
// for, saturating rather than overflowing.
func pageCost(child int, first *int) int {
	n := cascade.DefaultPageSize
	if first != nil {
		n = min(max(*first, 1), cascade.MaxPageSize)
	}
	if child > 0 && n > (math.MaxInt-1)/child {
		return math.MaxInt
	}
	return 1 + n*child
}
