// Package metrics owns Cascade's Prometheus registry: every metric /metrics
// serves is defined here, and no other package of the server imports
// Prometheus's client (the test harness testkit parses what /metrics
// serves with Prometheus's parser).
//
// Two kinds of numbers come in. Levels — traces and runs by state, queue
// lengths, open subscriptions, uploads in flight, counters another package
// already keeps — are read when Prometheus scrapes, through the plain
// functions of [Sources] (a database count, a Len method), so they are
// never out of step with their owner and cost nothing between scrapes.
// Events — a scan's duration, a finished post-processor or run, a failed
// Slurm poll — are pushed by the package where they happen through a
// plain func hook in its Config, which the wiring (app) points at
// a method of [Registry]. A package that is not wired keeps working; its
// metric stays at zero.
package metrics
