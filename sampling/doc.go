// Package sampling plans sampled simulations: which few launches of a
// trace to simulate, and how to project the rest from them. A traced LLM
// step holds 10^4 to 10^6 kernel launches and simulating them all takes
// days; a plan simulates representatives, each standing for the launches
// of its stratum, and projects the total with a confidence interval.
//
// It is pure: it reads nothing but its Input (the launches in order, with
// their measured durations when the trace has real timing) and writes
// nothing. Each planning method is one type behind one interface, Method:
//
//   - STEM (stem.go; after STEM+ROOT, MICRO 2025) makes a stratum of
//     each kernel name, grid and block, splits one by measured duration
//     where that lowers the plan's cost, and allocates representatives
//     across strata so that the projected total meets the bound at the
//     least cost (allocate.go: Neyman's allocation with costs). It is the
//     default when the trace has real timing.
//   - Sieve (sieve.go; Sieve, ISPASS 2023) stratifies launches by kernel
//     name, then by warp instruction count, one representative a stratum.
//     It is the default without timing.
//
// Both share the rest (plan.go): choosing representatives, with the
// launches that warm the caches before each (shared between neighbours
// where they can be), and the plan's figures. project.go projects
// simulated results onto every launch, with the interval a sampled run
// states; evaluate.go evaluates a plan against a full run's cycles
// without simulating (calibrate_test.go does so on the real simulator's
// stored full runs); export.go turns a plan into the kernel ranges to
// trace next time.
//
// Sampled simulation lives under this folder, from the plan to the
// projection: this package is the pure method; sampling/plans makes a
// ready trace's plans and stores them; sampling/sampled launches a
// sampled run's segments as runs, follows them and projects every launch
// from them. The vocabulary they share (SamplingPlan, SampledRun,
// SamplingCheck) is the root package's sampling.go; what a sampled run is
// checked against is read by package results (samplingcheck.go).
//
// Planning is deterministic: the same input and parameters give the same
// plan. It allocates a few slices the size of the input and sorts
// launch indices, never launches, so a million launches plan in well
// under a second (BenchmarkPlan1M).
package sampling
