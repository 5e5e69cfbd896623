// Package cascade is Cascade's vocabulary: the domain types every other
// package shares. Traces and their kernels (trace.go), runs and their
// kernel results, a run's comparison with measured timing and its step
// projections (run.go, results.go), sweeps (sweep.go), sampling plans, the
// kernel ranges they trace and sampled runs (sampling.go), the ids of
// runs, sweeps and plans (id.go), tested sim configs
// (simconfig.go), disk usage (disk.go), pages and filters of lists
// (page.go), the events the server publishes and the one Publisher
// interface (event.go), the S3 endpoint and its key pair (s3.go), the
// API's tokens and the roles they grant (auth.go), and the typed errors
// the API reports (error.go). Each is one type, from the
// package that produces it to the GraphQL API that binds it. It imports
// only the standard library.
//
// Where the rest lives, each package speaking in these types:
//
//   - cmd/cascade: the cascade command; every subcommand's command line
//     is parsed there into the options of a library call.
//   - app: the wiring; it starts a server from a finished app.Config.
//   - db: storage (SQLite or PostgreSQL through GORM).
//   - tracestate: where a trace's state is decided: the table of which
//     event moves a trace from which state to which, and the Machine the
//     scanner and the post-processor report their moves to.
//   - scanner: the bucket watcher; tracedir reads a trace directory's
//     files; upload puts a trace directory into a bucket or an S3
//     endpoint; s3gw is the server's S3 endpoint over the bucket.
//   - postproc: post-processing, with the built-in post-processor or an
//     external one; Accel-Sim's formats are under accelsim/ (posttraces,
//     tracez, kernellist, simconfig, simlog, l2warm).
//   - runs: the run lifecycle: simulation runs and sweeps launched,
//     queued and handed to an executor, on this machine (runs/local) or
//     as Slurm jobs (runs/slurmexec, over the slurm client), followed and
//     recorded.
//   - results: the read side of runs: a run's kernels joined with
//     measured timing, statistics, comparisons, configs compared, sweep
//     grids, the kernels CSV, a sampled run's check.
//   - sampling: sampled simulation, all under one folder: which few
//     launches of a trace to simulate and how to project the rest (pure);
//     sampling/plans: a trace's plans, made and stored; sampling/sampled:
//     sampled runs launched as segments, followed and projected.
//   - graph and resolvers: the GraphQL API; events: the broker of its
//     subscriptions; frontend: the embedded web UI.
//   - metrics, disk, samples, tracegen: the Prometheus registry, the disk
//     meter, the sample traces and configs, synthetic raw traces.
//   - internal/: leaf utilities with no domain of their own: proc (child
//     processes), workqueue (the one work queue), versioned (the cache of
//     values by row version), gcfloor (the garbage collector's floor),
//     buildinfo (the build's version), kernelname (demangling).
//   - testkit/: the test harnesses (testkit itself for leaf helpers,
//     dbtest, servertest, s3test, slurmtest, quickstart) and the stand-ins of the
//     post-processor (fakepp) and the simulator (fakesim).
//   - servertests/: the full tier's tests that start a server (runs' in
//     servertests/runs), a module of its own beside this one (its go.work)
//     so that go test -short ./... does not link them.
package cascade
