// Package gcfloor keeps Go's garbage collector from running on a small
// heap more often than a floor allows.
//
// With GOGC=100 the collector runs whenever the heap has grown by as much
// as is live, and at 4 MB at the least. A server with 3 MB live that
// answers a page of 100 kernels with about 1.1 MB of short-lived garbage
// (gqlgen allocates per field) collects every third page: a cycle's mark
// phase, write barriers and stop-the-world pauses then fall on a third of
// the pages and took about a third of the server's CPU time in
// BenchmarkKernelsPage. A floor lets the heap grow to that size before a
// collection while it is small, and changes nothing once the live heap
// is big enough that GOGC's own goal is above the floor: the memory it
// costs is bounded by the floor, not proportional to the live heap as a
// higher GOGC would be.
//
// After each collection, a cleanup sets the GC percentage so that the next
// goal is the larger of the floor and what GOGC asks for. GOMEMLIMIT, when
// set, still bounds the heap as the runtime documents; GOGC=off turns the
// floor off too.
package gcfloor
