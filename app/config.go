package app

import (
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/hwprofile"
	"github.com/cascade-sim/cascade/accelsim/simstats"
	"github.com/cascade-sim/cascade/graph/transport"
	"github.com/cascade-sim/cascade/slurm"
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
	SimStats *simstats.Table
	// CounterMap pairs profilers' hardware counters with simulator
	// statistics: hwprofile.Builtin() with CASCADE_COUNTER_MAP_FILE's pairs
	// before its own; nil for the built-in ones alone.
	CounterMap     *hwprofile.Mapping
	SimConfigsDir  string  // CASCADE_SIM_CONFIGS_DIR
	RunConcurrency int     // CASCADE_RUN_CONCURRENCY; 0 sizes it by the machine (see local.Config.Concurrency)
	DiskGiB        float64 // CASCADE_DISK_GIB: the data directory's disk budget
	// GCHeapFloor, above 0, is the least heap goal of the process's
	// garbage collector, in bytes (internal/gcfloor; process-wide);
	// CASCADE_GC_HEAP_FLOOR_MIB.
	GCHeapFloor int64

	// SimTraceConfigsDir, when set, holds the trace.config halves of the
	// tested configs and SimConfigsDir the gpgpusim.config ones, paired by
	// name, as an Accel-Sim checkout keeps them (CASCADE_ACCELSIM_DIR).
	SimTraceConfigsDir string
	// ConfigModifiersFile is the define-standard-cfgs.yml whose bases and
	// modifiers name config variants ("QV100-64SM"):
	// CASCADE_CONFIG_MODIFIERS, or the Accel-Sim checkout's.
	ConfigModifiersFile string
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
	S3Keys    cascade.S3Keys
	S3KeyFile string
	// S3Server serves the S3 endpoint when S3Addr is set: s3serve.Server
	// (s3gw), which the cascade command sets. app itself names no S3
	// server, the largest part of the server's dependencies, so that the
	// tests that start a server without S3 do not link one.
	S3Server S3Server

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
	S3ReadOnlyKeys cascade.S3Keys
	// S3MultipartExpiry: a multipart upload nothing was written to for
	// longer is aborted and its parts freed (CASCADE_S3_MULTIPART_EXPIRY);
	// 0 is a week, below 0 never.
	S3MultipartExpiry time.Duration

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
	abs("config modifiers file", &c.ConfigModifiersFile)
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
