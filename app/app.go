package app

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql/playground"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/simprobe"
	"github.com/cascade-sim/cascade/db"
	"github.com/cascade-sim/cascade/disk"
	"github.com/cascade-sim/cascade/events"
	"github.com/cascade-sim/cascade/graph"
	"github.com/cascade-sim/cascade/graph/transport"
	"github.com/cascade-sim/cascade/internal/gcfloor"
	"github.com/cascade-sim/cascade/metrics"
	"github.com/cascade-sim/cascade/postproc"
	"github.com/cascade-sim/cascade/resolvers"
	"github.com/cascade-sim/cascade/results"
	"github.com/cascade-sim/cascade/runs"
	"github.com/cascade-sim/cascade/runs/local"
	"github.com/cascade-sim/cascade/runs/slurmexec"
	"github.com/cascade-sim/cascade/samples"
	"github.com/cascade-sim/cascade/sampling/plans"
	"github.com/cascade-sim/cascade/sampling/sampled"
	"github.com/cascade-sim/cascade/scanner"
	"github.com/cascade-sim/cascade/tracestate"
)

// Main is a running server.
type Main struct {
	Config Config
	DB     *db.DB
	// URL is the server's base URL, "http://127.0.0.1:8080".
	URL string
	// S3 is the S3 endpoint, nil when Config.S3Addr is empty.
	// S3KeysCreated says its keys were made at this start.
	S3            *cascade.S3Endpoint
	S3KeysCreated bool

	log     *slog.Logger
	tls     *tls.Config // nil without TLS
	metrics *metrics.Registry
	events  *events.Broker
	front   *front
	http    *http.Server
	graph   *transport.Server
	s3      S3Gateway
	// s3Closing is closed when Close stops the gateway, which is then no error.
	s3Closing chan struct{}
	cancel    context.CancelFunc
	wg        sync.WaitGroup
	errc      chan error

	lock *dataLock // the data directory's (datalock.go)

	closeOnce sync.Once
	closeErr  error
}

// Run listens, opens (and migrates) the database, seeds the sample trace,
// starts the scanner, the post-processor and the run manager, and serves
// HTTP. It listens first, so that /healthz can say the server is migrating
// (503) while a long migration runs; everything else answers 503 until
// Run returns. It returns once the server is ready; Close stops it. If a
// phase fails, what the earlier ones started is stopped.
//
// The phases, in order: listen, open the store, build the services, build
// the handler, start.
func Run(ctx context.Context, cfg Config) (*Main, error) {
	m, err := newMain(cfg)
	if err != nil {
		return nil, err
	}
	if err := m.listenAndServe(); err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok { // stop what started; the caller gets no Main to Close
			m.stopStarted()
		}
	}()
	if err := m.openStore(ctx); err != nil {
		return nil, err
	}
	svc, err := m.buildServices(ctx)
	if err != nil {
		return nil, err
	}
	if err := m.startS3(ctx); err != nil {
		return nil, err
	}
	mux := m.buildHandler(svc)
	m.start(ctx, svc, mux)
	ok = true
	return m, nil
}

// newMain checks the configuration and makes the data directory's
// folders. It starts nothing.
func newMain(cfg Config) (*Main, error) {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cfg, err := cfg.absolute()
	if err != nil {
		return nil, err
	}
	if cfg.GCHeapFloor > 0 {
		gcfloor.Set(cfg.GCHeapFloor)
	}
	if err := cfg.Tokens.Check(); err != nil {
		return nil, err
	}
	m := &Main{Config: cfg, log: log, errc: make(chan error, 5), s3Closing: make(chan struct{})}
	if m.tls, err = cfg.tlsConfig(); err != nil {
		return nil, err
	}
	for _, d := range []string{cfg.DataDir, cfg.BucketDir(), filepath.Join(cfg.DataDir, "work")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("create %s: %w", d, err)
		}
	}
	m.metrics = metrics.New(log)
	m.front = newFront(cfg.BucketDir(), m.metrics.Handler())
	return m, nil
}

// listenAndServe is the first phase: it listens and serves the front
// handler, which answers /healthz and /metrics at once and 503 elsewhere
// until start opens it, and calls Config.Listening.
func (m *Main) listenAndServe() error {
	ln, err := m.listen()
	if err != nil {
		return err
	}
	m.http = &http.Server{Handler: m.front, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute, TLSConfig: m.tls,
		// TLS handshake errors (a scanner, plain HTTP to the HTTPS port).
		ErrorLog: slog.NewLogLogger(m.log.With("component", "http").Handler(), slog.LevelDebug)}
	if m.tls != nil {
		ln = tls.NewListener(ln, m.tls)
	}
	m.goRun("http", func() error {
		if err := m.http.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	})
	if m.Config.Listening != nil {
		m.Config.Listening(m.URL)
	}
	return nil
}

// stopStarted stops what the phases started when a later one failed.
func (m *Main) stopStarted() {
	m.closeS3()
	m.http.Close()
	m.wg.Wait()
	if m.DB != nil {
		m.DB.Close()
	}
	m.lock.release()
}

// openStore opens (and migrates) the database, seeds the sample trace,
// and makes the event broker.
func (m *Main) openStore(ctx context.Context) error {
	cfg := m.Config
	var err error
	if m.lock, err = lockDataDir(cfg.DataDir, m.URL); err != nil {
		return err
	}
	if m.DB, err = db.Open(ctx, db.Config{URL: cfg.DatabaseURL, DataDir: cfg.DataDir, Logger: m.log, Exclusive: true}); err != nil {
		return err
	}
	m.front.phase.Store(phaseStarting)
	sample, err := samples.Seed(ctx, m.DB, filepath.Join(cfg.DataDir, "samples"))
	if err != nil {
		return fmt.Errorf("seed sample trace: %w", err)
	}
	if sample.ID != samples.SampleID {
		m.log.Warn("an uploaded trace takes the sample's id; the seeded sample moves", "component", "samples", "trace", samples.SampleID, "sample", sample.ID)
	}
	m.events = &events.Broker{}
	if cfg.SubscriberQueue != nil {
		m.events = events.NewBroker(*cfg.SubscriberQueue)
	}
	return nil
}

// services are the server's parts that work in the background or answer
// the API, as buildServices makes them and start runs them.
type services struct {
	postproc *postproc.Processor
	// states is where a trace's state is decided: the scanner reports to
	// it, and it drives the post-processor, which reports to it.
	states  *tracestate.Machine
	scanner *scanner.Scanner
	runs    *runs.Manager
	sweeps  *runs.Sweeps // sets of runs launched together, through runs
	plans   *plans.Service
	// sampled coordinates sampled runs apart from the run lifecycle,
	// which tells it of every run it publishes; results reads what runs
	// gave back, apart from both.
	sampled *sampled.Coordinator
	results *results.Reader
	correl  *results.Correlator // runs' statistics against hardware counters
}

// buildServices builds the services on the store, none started: the
// post-processor, a trace's state machine on it, the run manager with its
// executor, and the scanner reporting to the state machine.
func (m *Main) buildServices(ctx context.Context) (*services, error) {
	cfg, log, reg := m.Config, m.log, m.metrics
	var s services
	s.postproc = postproc.New(postproc.Config{
		Finished:    reg.Postprocessed,
		Command:     cfg.PostprocessCmd,
		Root:        cfg.BucketDir(),
		Objects:     "s3://" + cfg.Bucket + "/" + cfg.Prefix,
		WorkDir:     filepath.Join(cfg.DataDir, "work"),
		Concurrency: cfg.PostprocessConcurrency,
		Jobs:        cfg.PostprocessJobs,
		Format:      cfg.TraceFormat,
		CounterMap:  cfg.CounterMap,
		Store:       m.DB,
		Events:      m.events,
		Writing:     m.writing,
		Logger:      log,
	})
	s.states = tracestate.New(s.postproc)
	s.plans = &plans.Service{Store: m.DB, BucketDir: cfg.BucketDir(), Runs: m.DB, Concurrency: s.simulatorsAtOnce}
	var err error
	if s.runs, err = m.buildRuns(ctx); err != nil {
		return nil, err
	}
	s.plans.Windows, s.plans.Configs = s.runs, s.runs.Configs()
	s.sweeps = runs.NewSweeps(s.runs)
	s.sampled = sampled.New(sampled.Config{Runs: s.runs, Executor: s.runs.Executor(), Sweeps: s.sweeps, Variants: s.runs.Configs(), Store: m.DB, Plans: s.plans, Events: m.events, Logger: log,
		AtOnce: func() int { n, _ := s.simulatorsAtOnce(); return n }})
	s.runs.Coordinate(s.sampled)
	s.results = results.New(results.Config{Store: m.DB, Configs: s.runs.Configs(), Live: s.runs, Plans: s.plans, BucketDir: cfg.BucketDir()})
	s.correl = results.NewCorrelator(s.results)
	s.scanner = scanner.New(scanner.Config{
		Root:     cfg.BucketDir(),
		Interval: cfg.ScanInterval,
		Store:    m.DB,
		Events:   m.events,
		States:   s.states,
		Removing: s.postproc.Forget,
		Removed:  s.runs.RemoveTrace,
		Scanned:  reg.Scanned,
		Writing:  m.writing, // m.s3 is started after this, before the scanner runs
		Arriving: m.arriving,
		Logger:   log,
	})
	return &s, nil
}

// buildRuns builds the run manager with the executor Config.Executor
// names, and checks the executor.
func (m *Main) buildRuns(ctx context.Context) (*runs.Manager, error) {
	cfg, log := m.Config, m.log
	simCmd := cfg.SimCmd
	if len(simCmd) == 0 {
		simCmd = []string{"accel-sim.out"}
	}
	var newExecutor func(runs.Host) runs.Executor
	switch cfg.Executor {
	case "", "local":
		newExecutor = func(h runs.Host) runs.Executor {
			return local.New(h, local.Config{Command: simCmd, Env: cfg.SimEnv, Concurrency: cfg.RunConcurrency, DataDir: cfg.DataDir, Logger: log})
		}
	case "slurm":
		newExecutor = func(h runs.Host) runs.Executor {
			return slurmexec.New(h, slurmexec.Config{Command: simCmd, Env: cfg.SimEnv, Slurm: cfg.Slurm, PollFailed: m.metrics.SlurmPollFailed, Logger: log})
		}
	default:
		return nil, fmt.Errorf("executor: want local or slurm, got %q", cfg.Executor)
	}
	rm := runs.New(runs.Config{
		BucketDir:   cfg.BucketDir(),
		WorkDir:     filepath.Join(cfg.DataDir, "work"),
		ConfigsDir:  cfg.SimConfigsDir,
		NewExecutor: newExecutor,
		Store:       m.DB,
		Events:      m.events,
		Logger:      log,
		Ended:       m.metrics.RunEnded,
		StatsTable:  cfg.SimStats,
		Simulator:   simCmd,
		Probe:       simprobe.Simulator{Command: simCmd, Env: cfg.SimEnv},
		ProbeCache:  filepath.Join(cfg.DataDir, "simprobe.json"),

		TraceConfigsDir: cfg.SimTraceConfigsDir,
		ModifiersFile:   cfg.ConfigModifiersFile,
	})
	found, err := rm.Executor().Check(ctx)
	for _, l := range found {
		log.Info(l, "component", "runs")
	}
	m.Config.Report = append(slices.Clip(m.Config.Report), found...)
	return rm, err
}

// buildHandler builds the GraphQL server on the services, has /metrics
// watch them, and returns the handler of everything but /healthz and
// /metrics.
//
// Only those with a token, when there are tokens, may use the GraphQL
// endpoint (which answers in GraphQL's terms), and only the read-write
// token pprof: a CPU profile or an execution trace slows the server while
// it runs, and a goroutine dump shows its insides, which is for whoever
// runs it, not for readers. /healthz and /metrics stay open to probes and
// scrapers.
func (m *Main) buildHandler(s *services) http.Handler {
	cfg := m.Config
	m.graph = graph.NewServer(&resolvers.Resolver{DB: m.DB, Events: m.events, Traces: s.scanner, Postproc: s.postproc, S3: m.S3,
		Runs: s.runs, Sweeps: s.sweeps, RunLogs: s.runs.Logs(), Configs: s.runs.Configs(), Exec: s.runs.Executor(), Results: s.results, Comparisons: s.results, Correlations: s.correl, SampledRuns: s.sampled,
		Disk:     disk.Meter{Store: m.DB, DataDir: cfg.DataDir, BudgetGiB: cfg.DiskGiB},
		Sampling: s.plans},
		transport.Options{AllowedOrigins: cfg.AllowedOrigins, Logger: m.log, PingInterval: cfg.WebsocketPing, WriteWait: cfg.WebsocketWriteWait,
			Tokens: cfg.Tokens, Limits: cfg.Limits})
	src := metrics.Sources{
		TraceStates:        m.DB.TraceCounts,
		RunStates:          m.DB.RunCounts,
		PostprocessQueued:  s.postproc.Queued,
		PostprocessRunning: s.postproc.Running,
		Subscribers:        m.events.Subscribers,
		SubscribersDropped: m.events.Dropped,
		ClientsDropped:     m.graph.DroppedClients,
	}
	if m.s3 != nil {
		src.UploadsInFlight = m.s3.UploadsInFlight
	}
	m.metrics.Watch(src)

	mux := http.NewServeMux()
	mux.Handle("/graphql", m.graph)
	csvRoutes(mux, cfg.Tokens, m.DB, s.results, s.correl, m.log)
	if cfg.Pprof {
		mux.Handle("/debug/pprof/", cfg.Tokens.Require(cascade.RoleReadWrite, pprofHandler()))
	}
	if cfg.UI != nil {
		mux.Handle("/", cfg.UI)
	} else {
		mux.Handle("/playground", playground.Handler("Cascade", "/graphql"))
	}
	return mux
}

// start runs the services in the background until Close, and opens the
// front handler onto mux: the server is ready.
func (m *Main) start(ctx context.Context, s *services, mux http.Handler) {
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	m.cancel = cancel
	m.goRun("post-processor", func() error { return s.postproc.Run(runCtx, s.states) })
	m.goRun("scanner", func() error { return s.scanner.Run(runCtx) })
	m.goRun("runs", func() error { return s.runs.Run(runCtx) })
	// The simulator is asked which configs it accepts in the background:
	// the server is ready before it answers (see SimConfig.checked).
	m.goRun("simulator probe", func() error { s.runs.Configs().Probe(runCtx); return nil })
	if m.s3 != nil {
		m.goRun("s3", func() error {
			<-m.s3.Exited()
			select {
			case <-m.s3Closing:
				return nil
			default:
				return m.s3.Err()
			}
		})
	}
	m.front.open(mux, m.DB)
}

func (m *Main) goRun(name string, fn func() error) {
	m.wg.Go(func() {
		if err := fn(); err != nil {
			m.log.Error(name+" stopped", "err", err)
			m.errc <- fmt.Errorf("%s: %w", name, err)
		}
	})
}

// Subscribers is how many event subscriptions are open, counting each of
// identical GraphQL subscriptions that share one (see transport.Server): tests
// wait on it to know a subscription they started is live.
func (m *Main) Subscribers() int { return m.events.Subscribers() + m.graph.SharedSubscriptions() }

// DroppedClients is how many websocket clients were dropped for not
// reading what the server sent them.
func (m *Main) DroppedClients() int64 { return m.graph.DroppedClients() }

// Err delivers the error of a part that stopped on its own.
func (m *Main) Err() <-chan error { return m.errc }

// Close stops the server: the S3 endpoint first, then no new connections, in-flight requests finish,
// websockets get a close frame, the scanner and post-processors stop
// (their child processes with them), and the database is closed last.
// Calling it again returns the first call's result.
func (m *Main) Close() error {
	m.closeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s3err := m.closeS3()
		err := m.http.Shutdown(ctx)
		m.graph.Shutdown(ctx)
		m.cancel()
		m.wg.Wait()
		m.closeErr = errors.Join(s3err, err, m.DB.Close())
		m.lock.release()
	})
	return m.closeErr
}

// simulatorsAtOnce is how many simulators run at once and how that is
// decided, for a sampled run's wall-time estimate: the local executor's
// slots and sizing; 0 (all at once) on Slurm, whose cluster decides.
func (s *services) simulatorsAtOnce() (int, string) {
	st := s.runs.Executor().Status()
	if st.Kind == "slurm" {
		return 0, "Slurm: the segments taken to run all at once, as the cluster may run them (a lower bound)"
	}
	note := "local executor"
	if st.Message != nil {
		note = *st.Message
	}
	return s.runs.Executor().Slots(), note
}
