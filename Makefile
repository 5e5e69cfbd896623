# Shortcuts; scripts/ holds the real commands so a machine without make
# needs nothing more than Go.

# servertests/ is a module of its own; its go.work puts it beside the root
# module's packages (scripts/test.sh).
SERVERTESTS := GOWORK=$(CURDIR)/servertests/go.work

.PHONY: serve test ui bench bench-large bench-sampling bench-split bench-traceless bench-wall bench-variants generate crash fuzz

serve:
	scripts/serve.sh

test:
	scripts/test.sh

ui:
	cd frontend && npm ci && npm run build

generate:
	go generate ./graph

# Benchmarks reported in the closing notes: the scanner's latency and
# steady-state cost, the post-processor's MB/s and peak RSS on ~200 MB
# raw kernels (bench-large adds 2 GB ones), and a 2 GiB upload to the S3
# endpoint with the AWS CLI and cascade upload beside cp, with the
# server's peak RSS. The graph benchmarks give, with the load average
# beside them, the latency of a kernels page 900,000 rows deep in a
# 1,000,000-kernel trace (-v adds that trace's database ingest time) and
# fan-out to 1,000 websocket subscribers at 100 and at 10 updates/s, the
# subscribers in a process of their own (latency, server and client CPU per
# delivery; add -cpuprofile to see where it goes). The Slurm executor's
# polling with 3,600 queued runs: squeue calls a minute, ms per poll round
# (it starts a one-node cluster with scripts/slurm.sh). A 3,600-run sweep
# (300 traces × 12 configs): the time the transaction holds the database
# writer (BenchmarkCreateSweep), and launchSweep's time, with Slurm the
# time until every job is submitted, and the slowest concurrent query
# (BenchmarkLaunchSweep); both on PostgreSQL too with
# CASCADE_TEST_POSTGRES_DSN set. Ingest1M: a 1,000,000-kernel trace from
# complete to READY (s-ingest, s-cpu) and the longest another trace's
# upload (ms-other-max) or row write (ms-write-max) took meanwhile; Start:
# the first start over 1,000 finished traces of 200 files to all READY
# (s-first) and a restart (s-restart); both on PostgreSQL too with
# CASCADE_TEST_POSTGRES_DSN set. Plan1M: a sampling plan of a
# 1,000,000-launch LLM trace by each method (time, and a bound on the
# heap's peak: MB-peak, to stay under 256); ProjectSampled1M: a sampled
# run's projection of a Sieve plan's representatives onto 1,000,000
# launches and its kernels built, the database's writes aside. Issue 23's 1,000,000-kernel
# run: Stats1M, the parse of a log generated in the real log's format
# (ns/kernel, MB-heap, sim-days: the simulator's time to print it), and
# RunKernels1M, storing its results with statistics in progress updates of
# 10,000 (s-store, rows/s, MB-heap-peak, MB-db) and the p50/p99 of a page
# of 100 of them 900,000 deep (goal p99 <= 10 ms), and ParseStore1M, the
# two end to end: parse and store as a run's progress updates do
# (s-total, s-store, s-list: the parser's Kernels, MB-heap); both
# databases with CASCADE_TEST_POSTGRES_DSN set. Issue 33's Read1M: a
# 1,000,000-launch Nsight Compute raw page read and the counter table
# evaluated on every launch (ns/launch, MB/s, peak-heap-MiB: bounded, not
# growing with the file).
bench:
	go test ./scanner -run '^$$' -bench . -benchtime 200x
	$(SERVERTESTS) go test ./servertests -run '^$$' -bench LastFileToSubscriber -benchtime 200x
	uptime; $(SERVERTESTS) go test ./servertests -run '^$$' -bench KernelsPage -benchtime 300x -v -timeout 30m
	uptime; go test ./graph/transport -run '^$$' -bench Fanout -benchtime 500x -timeout 10m
	uptime; $(SERVERTESTS) go test ./servertests/app -run '^$$' -bench 'Ingest1M|Start' -benchtime 1x -timeout 60m
	go test ./accelsim/posttraces -run '^$$' -bench Postprocess -benchtime 3x -timeout 60m
	$(SERVERTESTS) go test ./servertests -run '^$$' -bench PutObject -benchtime 8x
	scripts/bench-s3.sh
	$(SERVERTESTS) go test ./servertests/runs -run '^$$' -bench SlurmPoll3600 -benchtime 1x -timeout 60m -v
	uptime; go test ./db -run '^$$' -bench CreateSweep -benchtime 10x
	uptime; $(SERVERTESTS) go test ./servertests/runs -run '^$$' -bench LaunchSweep -benchtime 1x -timeout 60m -v
	uptime; go test ./sampling -run '^$$' -bench Plan1M -benchtime 5x
	uptime; go test ./sampling/sampled -run '^$$' -bench ProjectSampled1M -benchtime 3x -benchmem
	uptime; go test ./accelsim/simlog -run '^$$' -bench Stats1M -benchtime 1x -timeout 30m
	uptime; go test ./accelsim/hwprofile -run '^$$' -bench Read1M -benchtime 1x -benchmem
	uptime; go test ./results -run '^$$' -bench Correlation100k -benchtime 3x -benchmem
	uptime; go test ./db -run '^$$' -bench RunKernels1M -benchtime 300x -timeout 60m -v
	uptime; go test ./db -run '^$$' -bench ParseStore1M -benchtime 1x -timeout 60m

# Sampled simulation against full simulation with the real Accel-Sim
# (docs/sampling-benchmarks.md, "Sampled simulation"): a 300-launch LLM-like trace
# built from ../shared/traces/vecadd-sm61, simulated whole on SM6_TITANX
# and SM7_QV100, then planned with STEM at each warm-up choice, its
# segments simulated 2 at a time and projected; and the work a
# 20,000-launch trace of the same shape saves. Took 1.5 to 2 hours of two
# busy cores (the full simulations 21 and 39 min); BENCH_DIR keeps every
# simulation's log, and a rerun reuses the finished ones. Not in make bench.
ACCELSIM_DIR ?= $(or $(CASCADE_TEST_ACCELSIM_DIR),$(CURDIR)/../shared/accelsim)
TRACES_DIR ?= $(or $(CASCADE_TEST_TRACES_DIR),$(CURDIR)/../shared/traces)
BENCH_DIR ?= /tmp/cascade-bench-sampling
bench-sampling:
	mkdir -p $(BENCH_DIR)
	CASCADE_TEST_ACCELSIM_DIR=$(ACCELSIM_DIR) CASCADE_TEST_TRACES_DIR=$(TRACES_DIR) CASCADE_BENCH_DIR=$(BENCH_DIR) \
		go test ./sampling/plans -run '^$$' -bench SampledSim -benchtime 1x -timeout 300m

# A full run split into segments against the full run in one piece with
# the real Accel-Sim (docs/sampling-benchmarks.md, "Split runs"): the same trace as
# bench-sampling (its full simulations are reused from BENCH_DIR), cut in
# CASCADE_BENCH_SEGMENTS (default 2) segments each after a step of
# warm-up, simulated 2 at a time. Not in make bench.
bench-split:
	mkdir -p $(BENCH_DIR)
	CASCADE_TEST_ACCELSIM_DIR=$(ACCELSIM_DIR) CASCADE_TEST_TRACES_DIR=$(TRACES_DIR) CASCADE_TEST_SPLIT=1 \
		go test ./cmd/cascade -run '^TestRealAccelSimSplitRun$$' -count=1 -v -timeout 60m
	CASCADE_TEST_ACCELSIM_DIR=$(ACCELSIM_DIR) CASCADE_TEST_TRACES_DIR=$(TRACES_DIR) CASCADE_BENCH_DIR=$(BENCH_DIR) \
		go test ./sampling/plans -run '^$$' -bench SplitSim -benchtime 1x -timeout 300m

# What a user waits for, through Cascade on the real Accel-Sim
# (docs/sampling-benchmarks.md, "Wall time"): for each shape of CASCADE_BENCH_SHAPES
# (default decode48), a full run, a sampled run of the default plan and a
# split run in two, one after the other, each timed from its launch to its
# success. Needs a quiet machine. Not in make bench.
bench-wall:
	CASCADE_TEST_ACCELSIM_DIR=$(ACCELSIM_DIR) CASCADE_TEST_TRACES_DIR=$(TRACES_DIR) \
		go test ./cmd/cascade -run '^$$' -bench RealWall -benchtime 1x -timeout 300m

# A sampled run of a trace taken with only its plan's traceRanges against
# the same sampled run of the trace taken whole, on the real Accel-Sim
# (docs/sampling-benchmarks.md, "Trace less next time"): CASCADE_BENCH_SHAPES
# (default decode48), CASCADE_BENCH_CONFIGS (default SM6_TITANX). Not in
# make bench.
bench-traceless:
	CASCADE_TEST_ACCELSIM_DIR=$(ACCELSIM_DIR) CASCADE_TEST_TRACES_DIR=$(TRACES_DIR) \
		go test ./cmd/cascade -run '^$$' -bench RealTraceLess -benchtime 1x -timeout 120m

bench-large:
	CASCADE_BENCH_LARGE=1 go test ./accelsim/posttraces -run '^$$' -bench Postprocess/2048MB -benchtime 1x -timeout 60m

# A longer crash-recovery campaign than CI's: SIGKILLs at random moments
# during uploads (disk and S3), post-processing and runs (local, and on a
# one-node Slurm cluster started by scripts/slurm.sh), on SQLite and, with
# CASCADE_TEST_POSTGRES_DSN set, PostgreSQL. CASCADE_CRASH_SEED replays one.
CRASH_TRIALS ?= 60
CRASH_SLURM_TRIALS ?= 30
crash:
	CASCADE_CRASH_TRIALS=$(CRASH_TRIALS) CASCADE_CRASH_SLURM_TRIALS=$(CRASH_SLURM_TRIALS) go test ./cmd/cascade -run '^TestCrashRecovery(Slurm)?$$' -count=1 -v -timeout 90m

# A longer fuzzing campaign than CI's 5 s per target: every fuzz target for
# FUZZTIME each (FUZZ_MATCH=regexp picks some). New failing inputs land in
# the package's testdata/fuzz/<Target>/: commit them with the fix.
FUZZTIME ?= 10m
fuzz:
	FUZZTIME=$(FUZZTIME) scripts/fuzz.sh

# Issue 30's goals on the real simulator (../shared/accelsim): a launch's
# check of a new variant (ns/op, goal < 200 ms) and a 1,000-cell design
# sweep resolved, checked, stored and queued (s/sweep, goal < 5 s); a
# sampled design sweep of six SM7_QV100 variants on a 120-launch LLM-like
# trace against full runs (speedup errors, intervals), and the work of 8
# sampled variants on 20,000 launches against one full run.
bench-variants:
	CASCADE_TEST_ACCELSIM_DIR=$(ACCELSIM_DIR) CASCADE_TEST_TRACES_DIR=$(TRACES_DIR) CASCADE_BENCH_DIR=$(BENCH_DIR)-sweep \
		go test ./sampling/plans -run '^$$' -bench SampledSweep -benchtime 1x -timeout 300m
	uptime; CASCADE_TEST_ACCELSIM_DIR=$${CASCADE_TEST_ACCELSIM_DIR:-../shared/accelsim} go test ./runs -run '^$$' -bench 'RealVariantCheck|RealDesignSweep1000' -benchtime 10x
