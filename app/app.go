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
	"strings"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql/playground"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/simprobe"
	"github.com/cascade-sim/cascade/accelsim/simstats"
	"github.com/cascade-sim/cascade/db"
	"github.com/cascade-sim/cascade/disk"
	"github.com/cascade-sim/cascade/events"
	"github.com/cascade-sim/cascade/graph"
	"github.com/cascade-sim/cascade/graph/transport"
	"github.com/cascade-sim/cascade/internal/gcfloor"
	"github.com/cascade-sim/cascade/metrics"
	"github.com/cascade-sim/cascade/plans"
	"github.com/cascade-sim/cascade/postproc"
	"github.com/cascade-sim/cascade/resolvers"
	"github.com/cascade-sim/cascade/runs"
	"github.com/cascade-sim/cascade/runs/local"
	"github.com/cascade-sim/cascade/runs/slurmexec"
	"github.com/cascade-sim/cascade/s3gw"
	"github.com/cascade-sim/cascade/samples"
	"github.com/cascade-sim/cascade/scanner"
	"github.com/cascade-sim/cascade/slurm"
	"github.com/cascade-sim/cascade/tracestate"
)

// Config is everything the server needs to know.
type Config struct {
	DataDir     string // CASCADE_DATA_DIR
	Bucket      string // CASCADE_BUCKET
	Prefix      string // CASCADE_PREFIX
	Addr        string // CASCADE_ADDR; port 0 picks a free one
	DatabaseURL string // CASCADE_DATABASE_URL; empty for SQLite in DataDir

	PostprocessCmd         []string // CASCADE_POSTPROCESS_CMD, or postproc.BuiltinCommand
	PostprocessConcurrency int      // CASCADE_POSTPROCESS_CONCURRENCY
	PostprocessJobs        int      // CASCADE_POSTPROCESS_JOBS; 0 shares this process's CPUs
	ScanInterval           time.Duration
	AllowedOrigins         []string

	// Executor is where runs execute: "local" (the default, "" too) or
	// "slurm" (CASCADE_EXECUTOR); Slurm configures the latter
	// (CASCADE_SLURM_*), and goes to it as it is.
	Executor string
	Slurm    slurm.Config

	SimCmd []string // CASCADE_SIM_CMD
	// SimStats is the simulator statistics runs read from their logs:
	// simstats.Builtin() with CASCADE_SIM_STATS_FILE's counters; nil for
	// the built-in ones alone.
	SimStats       *simstats.Table
	SimConfigsDir  string  // CASCADE_SIM_CONFIGS_DIR
	RunConcurrency int     // CASCADE_RUN_CONCURRENCY
	DiskGiB        float64 // CASCADE_DISK_GIB: the data directory's disk budget
	// GCHeapFloor, above 0, is the least heap goal of the process's
	// garbage collector, in bytes (internal/gcfloor; process-wide);
	// CASCADE_GC_HEAP_FLOOR_MIB.
	GCHeapFloor int64

	// SimTraceConfigsDir, when set, holds the trace.config halves of the
	// tested configs and SimConfigsDir the gpgpusim.config ones, paired by
	// name, as an Accel-Sim checkout keeps them (CASCADE_ACCELSIM_DIR).
	SimTraceConfigsDir string
	// SimEnv is added to the simulator's environment (LD_LIBRARY_PATH).
	SimEnv []string
	// TraceFormat is what PostprocessCmd writes, "tracez" or "traceg"
	// (postproc.ChooseFormat), when it is the built-in post-processor; ""
	// for another command.
	TraceFormat string
	// Report says what the configuration found (an Accel-Sim checkout, the
	// trace format picked); the command prints it at start.
	Report []string
	// S3Addr is the S3 endpoint's listen address (CASCADE_S3_ADDR); empty
	// runs none. S3URL is its URL as clients reach it (CASCADE_S3_URL);
	// empty derives it from the address. S3Keys sign requests; when empty
	// they are read from S3KeyFile (default <data dir>/s3-keys.env), which
	// is created with a new pair if missing.
	S3Addr    string
	S3URL     string
	S3Keys    s3gw.Keys
	S3KeyFile string

	// SubscriberQueue is how many changes of distinct traces, runs or logs
	// a subscriber may have waiting before the server closes it (its client
	// resubscribes and refetches); nil means events.MaxPending. 0 closes
	// every subscriber at its first change (tests of clients' recovery).
	SubscriberQueue *int // CASCADE_SUBSCRIBER_QUEUE

	// WebsocketPing is the keep-alive interval; a client silent for two is
	// dropped. The default when 0 is 15 s.
	WebsocketPing time.Duration
	// WebsocketWriteWait is how long a client may take nothing the server
	// sends before it is dropped. The default when 0 is 10 s.
	WebsocketWriteWait time.Duration

	// UI serves everything that is not the API (the web UI and the
	// playground); nil serves gqlgen's playground at /playground only.
	UI http.Handler

	// Pprof serves Go's profiles at /debug/pprof/, behind the same access
	// control as /graphql (cmd/cascade refuses it on a non-loopback address
	// without a token).
	Pprof bool
	// Listening, if set, is called with the server's URL once it listens,
	// before the database is opened and migrated: /healthz answers from
	// then on.
	Listening func(url string)
	// Tokens guard the API (CASCADE_TOKEN, CASCADE_READONLY_TOKEN). Without
	// them the server listens on loopback only, unless AllowRemote
	// (CASCADE_ALLOW_REMOTE) says to serve other machines anyway.
	Tokens      cascade.Tokens
	AllowRemote bool
	// TLSCert and TLSKey, PEM files, serve HTTPS and WSS (CASCADE_TLS_CERT,
	// CASCADE_TLS_KEY).
	TLSCert, TLSKey string
	// Limits bound what one client may ask of the API.
	Limits transport.Limits
	// S3ReadOnlyKeys, when set, is a second S3 key pair that may read and
	// list but not write (CASCADE_S3_READONLY_ACCESS_KEY/SECRET_KEY).
	S3ReadOnlyKeys s3gw.Keys

	Logger *slog.Logger
}

// BucketDir is where the scanner looks for traces.
func (c Config) BucketDir() string { return filepath.Join(c.DataDir, "s3", c.Bucket, c.Prefix) }

// absolute resolves the configuration's relative paths against the
// working directory, once, before anything uses them: the server's
// children start elsewhere (the post-processor in the trace's directory,
// the simulator in its run's), and SQLite is opened by URI. A command
// without a slash ("accel-sim.out") is looked up on PATH and stays as is.
func (c Config) absolute() (Config, error) {
	var err error
	abs := func(what string, p *string) {
		if err != nil || *p == "" || filepath.IsAbs(*p) {
			return
		}
		a, e := filepath.Abs(*p)
		if e != nil {
			err = fmt.Errorf("%s %s: %w", what, *p, e)
			return
		}
		*p = a
	}
	abs("data directory", &c.DataDir)
	abs("sim configs directory", &c.SimConfigsDir)
	abs("S3 key file", &c.S3KeyFile)
	abs("TLS certificate", &c.TLSCert)
	abs("TLS key", &c.TLSKey)
	for _, cmd := range []*[]string{&c.PostprocessCmd, &c.SimCmd} {
		if len(*cmd) > 0 && strings.ContainsRune((*cmd)[0], filepath.Separator) {
			*cmd = slices.Clone(*cmd)
			abs("command", &(*cmd)[0])
		}
	}
	return c, err
}

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

	log    *slog.Logger
	events *events.Broker
	front  *front
	http   *http.Server
	graph  *transport.Server
	s3     *s3gw.Gateway
	// s3Closing is closed when Close stops the gateway, which is then no error.
	s3Closing chan struct{}
	cancel    context.CancelFunc
	wg        sync.WaitGroup
	errc      chan error

	closeOnce sync.Once
	closeErr  error
}

// Run listens, opens (and migrates) the database, seeds the sample trace,
// starts the scanner, the post-processor and the run manager, and serves
// HTTP. It listens first, so that /healthz can say the server is migrating
// (503) while a long migration runs; everything else answers 503 until
// Run returns. It returns once the server is ready; Close stops it.
func Run(ctx context.Context, cfg Config) (*Main, error) {
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
	tlsConfig, err := cfg.tlsConfig()
	if err != nil {
		return nil, err
	}
	m := &Main{Config: cfg, log: log, errc: make(chan error, 5), s3Closing: make(chan struct{})}
	for _, d := range []string{cfg.DataDir, cfg.BucketDir(), filepath.Join(cfg.DataDir, "work")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("create %s: %w", d, err)
		}
	}
	reg := metrics.New(log)
	m.front = newFront(cfg.BucketDir(), reg.Handler())
	ln, err := m.listen()
	if err != nil {
		return nil, err
	}
	m.http = &http.Server{Handler: m.front, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute, TLSConfig: tlsConfig,
		// TLS handshake errors (a scanner, plain HTTP to the HTTPS port).
		ErrorLog: slog.NewLogLogger(log.With("component", "http").Handler(), slog.LevelDebug)}
	if tlsConfig != nil {
		ln = tls.NewListener(ln, tlsConfig)
	}
	m.goRun("http", func() error {
		if err := m.http.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	})
	if cfg.Listening != nil {
		cfg.Listening(m.URL)
	}
	ok := false
	defer func() {
		if !ok { // stop what started; the caller gets no Main to Close
			m.closeS3()
			m.http.Close()
			m.wg.Wait()
			if m.DB != nil {
				m.DB.Close()
			}
		}
	}()
	if m.DB, err = db.Open(ctx, db.Config{URL: cfg.DatabaseURL, DataDir: cfg.DataDir, Logger: log}); err != nil {
		return nil, err
	}
	m.front.phase.Store(phaseStarting)
	sample, err := samples.Seed(ctx, m.DB, filepath.Join(cfg.DataDir, "samples"))
	if err != nil {
		return nil, fmt.Errorf("seed sample trace: %w", err)
	}
	if sample.ID != samples.SampleID {
		log.Warn("an uploaded trace takes the sample's id; the seeded sample moves", "component", "samples", "trace", samples.SampleID, "sample", sample.ID)
	}
	broker := &events.Broker{}
	if cfg.SubscriberQueue != nil {
		broker = events.NewBroker(*cfg.SubscriberQueue)
	}
	m.events = broker
	pp := postproc.New(postproc.Config{
		Finished:    reg.Postprocessed,
		Command:     cfg.PostprocessCmd,
		Root:        cfg.BucketDir(),
		Objects:     "s3://" + cfg.Bucket + "/" + cfg.Prefix,
		WorkDir:     filepath.Join(cfg.DataDir, "work"),
		Concurrency: cfg.PostprocessConcurrency,
		Jobs:        cfg.PostprocessJobs,
		Format:      cfg.TraceFormat,
		Store:       m.DB,
		Events:      broker,
		Logger:      log,
	})
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
			return slurmexec.New(h, slurmexec.Config{Command: simCmd, Env: cfg.SimEnv, Slurm: cfg.Slurm, PollFailed: reg.SlurmPollFailed, Logger: log})
		}
	default:
		return nil, fmt.Errorf("executor: want local or slurm, got %q", cfg.Executor)
	}
	planner := &plans.Service{Store: m.DB, BucketDir: cfg.BucketDir()}
	rm := runs.New(runs.Config{
		Plans:       planner,
		BucketDir:   cfg.BucketDir(),
		WorkDir:     filepath.Join(cfg.DataDir, "work"),
		ConfigsDir:  cfg.SimConfigsDir,
		NewExecutor: newExecutor,
		Store:       m.DB,
		Events:      broker,
		Logger:      log,
		Ended:       reg.RunEnded,
		StatsTable:  cfg.SimStats,
		Simulator:   simCmd,
		Probe:       simprobe.Simulator{Command: simCmd, Env: cfg.SimEnv},
		ProbeCache:  filepath.Join(cfg.DataDir, "simprobe.json"),

		TraceConfigsDir: cfg.SimTraceConfigsDir,
	})
	found, err := rm.CheckExecutor(ctx)
	for _, l := range found {
		log.Info(l, "component", "runs")
	}
	m.Config.Report = append(slices.Clip(m.Config.Report), found...)
	if err != nil {
		return nil, err
	}
	// A trace's states: the scanner reports what it sees to states, which
	// drives the post-processor, which reports its outcomes to states.
	states := tracestate.New(pp)
	sc := scanner.New(scanner.Config{
		Root:     cfg.BucketDir(),
		Interval: cfg.ScanInterval,
		Store:    m.DB,
		Events:   broker,
		States:   states,
		Removed: func(ctx context.Context, id string) error {
			if err := pp.Forget(ctx, id); err != nil {
				return err
			}
			return rm.RemoveTrace(ctx, id)
		},
		Scanned: reg.Scanned,
		Logger:  log,
	})
	if err := m.startS3(ctx); err != nil {
		return nil, err
	}
	m.graph = graph.NewServer(&resolvers.Resolver{DB: m.DB, Events: broker, Traces: sc, Postproc: pp, RunManager: rm, S3: m.S3,
		Disk:     disk.Meter{Store: m.DB, DataDir: cfg.DataDir, BudgetGiB: cfg.DiskGiB},
		Sampling: planner},
		transport.Options{AllowedOrigins: cfg.AllowedOrigins, Logger: log, PingInterval: cfg.WebsocketPing, WriteWait: cfg.WebsocketWriteWait,
			Tokens: cfg.Tokens, Limits: cfg.Limits})
	src := metrics.Sources{
		TraceStates:        m.DB.TraceCounts,
		RunStates:          m.DB.RunCounts,
		PostprocessQueued:  pp.Queued,
		PostprocessRunning: pp.Running,
		Subscribers:        broker.Subscribers,
		SubscribersDropped: broker.Dropped,
		ClientsDropped:     m.graph.DroppedClients,
	}
	if m.s3 != nil {
		src.UploadsInFlight = m.s3.UploadsInFlight
	}
	reg.Watch(src)

	// Only those with a token, when there are tokens, may use the GraphQL
	// endpoint (which answers in GraphQL's terms), and only the read-write
	// token pprof: a CPU profile or an execution trace slows the server
	// while it runs, and a goroutine dump shows its insides, which is for
	// whoever runs it, not for readers. /healthz and /metrics stay open to
	// probes and scrapers.
	mux := http.NewServeMux()
	mux.Handle("/graphql", m.graph)
	mux.Handle("GET /runs/{id}/kernels.csv", requireRole(cfg.Tokens, cascade.RoleReadOnly, kernelsCSV(m.DB, rm, log)))
	if cfg.Pprof {
		mux.Handle("/debug/pprof/", requireRole(cfg.Tokens, cascade.RoleReadWrite, pprofHandler()))
	}
	if cfg.UI != nil {
		mux.Handle("/", cfg.UI)
	} else {
		mux.Handle("/playground", playground.Handler("Cascade", "/graphql"))
	}

	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	m.cancel = cancel
	m.goRun("post-processor", func() error { return pp.Run(runCtx, states) })
	m.goRun("scanner", func() error { return sc.Run(runCtx) })
	m.goRun("runs", func() error { return rm.Run(runCtx) })
	// The simulator is asked which configs it accepts in the background:
	// the server is ready before it answers (see SimConfig.checked).
	m.goRun("simulator probe", func() error { rm.Probe(runCtx); return nil })
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
	ok = true
	return m, nil
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
	})
	return m.closeErr
}
