// Package testkit holds the leaf helpers Cascade's tests share: waiting on
// a condition without sleeping blindly ([Eventually]), building the
// module's programs (cascade, the stand-in simulator and post-processor)
// once per test binary ([Program], [FakePostprocessor]), running `cascade
// serve` as a process of its own ([ServeProcess]), writing a file
// through a dotfile temporary name as an uploader does, small disks,
// metric scrapes and CPU probes for benchmarks. It imports no package of Cascade.
//
// Its subpackages are the heavier harnesses, each imported only by the
// tests that need it (and by one another, or a sibling harness such as
// accelsim/accelsimtest): dbtest (fresh databases on SQLite and
// PostgreSQL), servertest (a real server in the test process on a free
// port, its websocket clients), slurmtest (a one-node Slurm cluster), and
// the stand-ins fakesim (a simulator speaking Accel-Sim's command line and
// log) and fakepp (a post-processor). Nothing the cascade binary links
// imports them.
//
// memstore is an in-memory trace store for the fast tests of the scanner
// and the post-processor, kept in step with *db.DB by a contract test.
//
// The tests come in two tiers. go test -short ./... is the fast one: it
// runs no server, cluster, browser, child process or external service.
// The harnesses that start one skip the test under -short themselves
// (servertest.Server, Program, ServeProcess, fakesim.Build, slurmtest,
// dbtest's PostgreSQL), and a test that starts one by other means calls
// [SkipShort] first, saying what it starts. Without -short every test
// runs.
package testkit
