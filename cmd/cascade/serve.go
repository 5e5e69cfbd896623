package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/cascade-sim/cascade/accelsim/hwprofile"
	"github.com/cascade-sim/cascade/accelsim/simstats"
	"github.com/cascade-sim/cascade/app"
	"github.com/cascade-sim/cascade/app/s3serve"
	"github.com/cascade-sim/cascade/events"
	"github.com/cascade-sim/cascade/graph/transport"
	"github.com/cascade-sim/cascade/internal/gcfloor"
)

// parseServe reads serve's configuration: defaults, then CASCADE_*
// variables, then flags.
func parseServe(args []string, stderr io.Writer) (app.Config, slog.Level, string, error) {
	fs := flag.NewFlagSet("cascade serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg app.Config

	var sim simSetup
	var ppCmd, simCmd, origins, level, format, s3Addr, statsFile, counterMapFile string
	var conc, queue, floorMiB int
	var fills []func() // the secrets' values from the environment, after Parse
	fs.StringVar(&cfg.DataDir, "data-dir", env("CASCADE_DATA_DIR", "./cascade-data"), "data directory: database, bucket, work files (CASCADE_DATA_DIR)")
	fs.StringVar(&cfg.Bucket, "bucket", env("CASCADE_BUCKET", "cascade"), "bucket name under <data dir>/s3 (CASCADE_BUCKET)")
	fs.StringVar(&cfg.Prefix, "prefix", env("CASCADE_PREFIX", "traces"), "prefix inside the bucket that holds trace directories (CASCADE_PREFIX)")
	fs.StringVar(&cfg.Addr, "addr", env("CASCADE_ADDR", "127.0.0.1:8080"), "listen address (CASCADE_ADDR)")
	fs.StringVar(&s3Addr, "s3-addr", env("CASCADE_S3_ADDR", "127.0.0.1:7070"), "S3 endpoint's listen address; off for none (CASCADE_S3_ADDR)")
	fs.StringVar(&cfg.S3URL, "s3-url", env("CASCADE_S3_URL", ""), "S3 endpoint's URL as clients reach it; derived from --s3-addr when empty (CASCADE_S3_URL)")
	fs.StringVar(&cfg.S3Keys.AccessKey, "s3-access-key", env("CASCADE_S3_ACCESS_KEY", ""), "S3 access key; with --s3-secret-key, instead of the key file (CASCADE_S3_ACCESS_KEY)")
	fills = append(fills, secretVar(fs, &cfg.S3Keys.SecretKey, "s3-secret-key", []string{"CASCADE_S3_SECRET_KEY"}, "S3 secret key (CASCADE_S3_SECRET_KEY)"))
	fs.StringVar(&cfg.S3KeyFile, "s3-key-file", env("CASCADE_S3_KEY_FILE", ""), "file holding the S3 key pair, made with a new pair if missing; <data dir>/s3-keys.env when empty (CASCADE_S3_KEY_FILE)")
	fills = append(fills, secretVar(fs, &cfg.DatabaseURL, "database-url", []string{"CASCADE_DATABASE_URL"}, "PostgreSQL: a postgres:// URL or a libpq keyword/value string (host=... dbname=...); SQLite in the data directory when empty (CASCADE_DATABASE_URL)"))
	fs.StringVar(&ppCmd, "postprocess-cmd", env("CASCADE_POSTPROCESS_CMD", ""), "post-processor command; the built-in `cascade postprocess` when empty (CASCADE_POSTPROCESS_CMD)")
	fs.IntVar(&conc, "postprocess-concurrency", envInt("CASCADE_POSTPROCESS_CONCURRENCY", 1), "post-processors at once (CASCADE_POSTPROCESS_CONCURRENCY)")
	fs.IntVar(&cfg.PostprocessJobs, "postprocess-jobs", envInt("CASCADE_POSTPROCESS_JOBS", 0), "the -j of each post-processor; 0 shares the CPUs this process may use among the concurrent ones (CASCADE_POSTPROCESS_JOBS)")
	fs.StringVar(&simCmd, "sim-cmd", env("CASCADE_SIM_CMD", "accel-sim.out"), "the simulator, Accel-Sim's accel-sim.out (CASCADE_SIM_CMD)")
	fs.StringVar(&cfg.SimConfigsDir, "sim-configs-dir", env("CASCADE_SIM_CONFIGS_DIR", ""), "directory of Accel-Sim tested-config directories (CASCADE_SIM_CONFIGS_DIR)")
	fs.StringVar(&statsFile, "sim-stats-file", env("CASCADE_SIM_STATS_FILE", ""), "file of simulator statistics to read from every run's log besides the built-in ones, one a line: name, kind (aggregate, kernel or rate), unit, regular expression (CASCADE_SIM_STATS_FILE)")
	fs.StringVar(&counterMapFile, "counter-map-file", env("CASCADE_COUNTER_MAP_FILE", ""), "file of hardware-counter pairs tried before the built-in ones, one a line: simulator statistic, profiler (ncu or nvprof), GPU (all, sm_70, or a name with _ for blanks), expression over the profile's columns (CASCADE_COUNTER_MAP_FILE)")
	fs.StringVar(&cfg.ConfigModifiersFile, "config-modifiers", env("CASCADE_CONFIG_MODIFIERS", ""), "a define-standard-cfgs.yml whose bases and modifiers name config variants (QV100-64SM); the Accel-Sim checkout's when empty (CASCADE_CONFIG_MODIFIERS)")
	fs.StringVar(&sim.accelSimDir, "accelsim-dir", env("CASCADE_ACCELSIM_DIR", ""), "an Accel-Sim checkout: its accel-sim.out, tested configs and library path (CASCADE_ACCELSIM_DIR)")
	fs.StringVar(&sim.traceFormat, "trace-format", env("CASCADE_TRACE_FORMAT", ""), "tracez or traceg: what the built-in post-processor writes; picked from CASCADE_ACCELSIM_DIR when empty, else tracez (CASCADE_TRACE_FORMAT)")
	fs.IntVar(&cfg.RunConcurrency, "run-concurrency", envInt("CASCADE_RUN_CONCURRENCY", 0), "simulations at once; 0 sizes it by the machine: up to its CPUs, as many as fit in the memory available by the peak memory recent runs of each config took (CASCADE_RUN_CONCURRENCY)")
	applyExecutorFlags := defineExecutorFlags(fs, &cfg)
	fs.Float64Var(&cfg.DiskGiB, "disk-gib", envFloat("CASCADE_DISK_GIB", 0), "disk budget of the data directory in GiB; plan 2.2 times the uploaded size (CASCADE_DISK_GIB)")
	fs.DurationVar(&cfg.ScanInterval, "scan-interval", envDuration("CASCADE_SCAN_INTERVAL", 2*time.Second), "periodic bucket scan (CASCADE_SCAN_INTERVAL)")
	fs.IntVar(&queue, "subscriber-queue", envInt("CASCADE_SUBSCRIBER_QUEUE", events.MaxPending), "changes a websocket subscriber may have waiting before it is closed and its client resubscribes (CASCADE_SUBSCRIBER_QUEUE)")
	fs.StringVar(&origins, "allowed-origins", env("CASCADE_ALLOWED_ORIGINS", ""), "comma-separated extra origins allowed to call the API (CASCADE_ALLOWED_ORIGINS)")
	fills = append(fills, secretVar(fs, &cfg.Tokens.ReadWrite, "token", []string{"CASCADE_TOKEN"}, "token every API request needs, as Authorization: Bearer <token>; prefer the variable, flags show in ps (CASCADE_TOKEN)"))
	fills = append(fills, secretVar(fs, &cfg.Tokens.ReadOnly, "readonly-token", []string{"CASCADE_READONLY_TOKEN"}, "token that may query and subscribe but not launch, cancel or retry (CASCADE_READONLY_TOKEN)"))
	fs.BoolVar(&cfg.AllowRemote, "allow-remote", envBool("CASCADE_ALLOW_REMOTE"), "listen on a non-loopback address without a token: anyone who reaches it may do anything (CASCADE_ALLOW_REMOTE=1)")
	fs.StringVar(&cfg.TLSCert, "tls-cert", env("CASCADE_TLS_CERT", ""), "PEM certificate (chain): serve HTTPS and WSS; with --tls-key (CASCADE_TLS_CERT)")
	fs.StringVar(&cfg.TLSKey, "tls-key", env("CASCADE_TLS_KEY", ""), "PEM private key of --tls-cert (CASCADE_TLS_KEY)")
	fs.StringVar(&cfg.S3ReadOnlyKeys.AccessKey, "s3-readonly-access-key", env("CASCADE_S3_READONLY_ACCESS_KEY", ""), "a second S3 key pair that may get and list but not write (CASCADE_S3_READONLY_ACCESS_KEY)")
	fills = append(fills, secretVar(fs, &cfg.S3ReadOnlyKeys.SecretKey, "s3-readonly-secret-key", []string{"CASCADE_S3_READONLY_SECRET_KEY"}, "secret of the read-only S3 key pair (CASCADE_S3_READONLY_SECRET_KEY)"))
	fs.DurationVar(&cfg.S3MultipartExpiry, "s3-multipart-expiry", envDuration("CASCADE_S3_MULTIPART_EXPIRY", 7*24*time.Hour), "abort a multipart upload nothing was written to for this long, freeing its parts; -1s never (CASCADE_S3_MULTIPART_EXPIRY)")
	fs.IntVar(&cfg.Limits.MaxDepth, "max-query-depth", envInt("CASCADE_MAX_QUERY_DEPTH", transport.DefaultMaxDepth), "deepest nesting of fields an operation may have; -1 for no limit (CASCADE_MAX_QUERY_DEPTH)")
	fs.IntVar(&cfg.Limits.MaxComplexity, "max-query-complexity", envInt("CASCADE_MAX_QUERY_COMPLEXITY", transport.DefaultMaxComplexity), "highest cost of an operation, pages counted by their size; -1 for no limit (CASCADE_MAX_QUERY_COMPLEXITY)")
	fs.IntVar(&cfg.Limits.MaxSubscriptionsPerConn, "max-subscriptions-per-conn", envInt("CASCADE_MAX_SUBSCRIPTIONS_PER_CONN", transport.DefaultMaxSubscriptionsPerConn), "subscriptions one websocket may hold at once; -1 for no limit (CASCADE_MAX_SUBSCRIPTIONS_PER_CONN)")
	fs.IntVar(&cfg.Limits.MaxConnsPerClient, "max-conns-per-client", envInt("CASCADE_MAX_CONNS_PER_CLIENT", transport.DefaultMaxConnsPerClient), "websockets one client address may hold open; behind a proxy all share its address; -1 for no limit (CASCADE_MAX_CONNS_PER_CLIENT)")
	fs.StringVar(&level, "log-level", env("CASCADE_LOG_LEVEL", "info"), "debug, info, warn or error (CASCADE_LOG_LEVEL)")
	fs.StringVar(&format, "log-format", env("CASCADE_LOG_FORMAT", "auto"), "text, json, or auto: text when stderr is a terminal, else json (CASCADE_LOG_FORMAT)")
	fs.IntVar(&floorMiB, "gc-heap-floor-mib", envInt("CASCADE_GC_HEAP_FLOOR_MIB", gcfloor.Default>>20), "least heap the garbage collector lets grow before it runs, in MiB; GOGC's goal above it; 0 for GOGC's alone (CASCADE_GC_HEAP_FLOOR_MIB)")
	fs.BoolVar(&cfg.Pprof, "pprof", envBool("CASCADE_PPROF"), "serve Go's profiles at /debug/pprof/; on a non-loopback address only with an access token (CASCADE_PPROF)")
	if err := fs.Parse(args); err != nil {
		return cfg, 0, "", err
	}
	for _, fill := range fills {
		fill()
	}
	if fs.NArg() > 0 {
		return cfg, 0, "", fmt.Errorf("serve takes no arguments, got %q", fs.Args())
	}
	cfg.PostprocessConcurrency = conc
	if floorMiB < 0 {
		return cfg, 0, "", fmt.Errorf("--gc-heap-floor-mib: want 0 or more, got %d", floorMiB)
	}
	cfg.GCHeapFloor = int64(floorMiB) << 20
	if err := applyExecutorFlags(); err != nil {
		return cfg, 0, "", err
	}
	if cfg.RunConcurrency < 0 {
		return cfg, 0, "", fmt.Errorf("--run-concurrency (CASCADE_RUN_CONCURRENCY): want 0 (sized by the machine) or more, got %d", cfg.RunConcurrency)
	}
	if cfg.PostprocessJobs < 0 {
		return cfg, 0, "", fmt.Errorf("--postprocess-jobs (CASCADE_POSTPROCESS_JOBS): want 0 (share this process's CPUs) or more, got %d", cfg.PostprocessJobs)
	}
	var err error
	if cfg.SimCmd, err = splitCommand("--sim-cmd (CASCADE_SIM_CMD)", simCmd); err != nil {
		return cfg, 0, "", err
	}
	if statsFile != "" {
		if cfg.SimStats, err = simstats.LoadFile(statsFile); err != nil {
			return cfg, 0, "", fmt.Errorf("--sim-stats-file (CASCADE_SIM_STATS_FILE): %w", err)
		}
	}
	if counterMapFile != "" {
		if cfg.CounterMap, err = hwprofile.LoadFile(counterMapFile); err != nil {
			return cfg, 0, "", fmt.Errorf("--counter-map-file (CASCADE_COUNTER_MAP_FILE): %w", err)
		}
		stats := cfg.SimStats
		if stats == nil {
			stats = simstats.Builtin()
		}
		if err := cfg.CounterMap.Check(stats.Known); err != nil {
			return cfg, 0, "", fmt.Errorf("--counter-map-file (CASCADE_COUNTER_MAP_FILE): %w", err)
		}
	}
	if s3Addr != "off" {
		cfg.S3Addr = s3Addr
	}
	if (cfg.S3Keys.AccessKey == "") != (cfg.S3Keys.SecretKey == "") {
		return cfg, 0, "", fmt.Errorf("S3 keys: give both CASCADE_S3_ACCESS_KEY and CASCADE_S3_SECRET_KEY, or neither to use the key file")
	}
	if (cfg.S3ReadOnlyKeys.AccessKey == "") != (cfg.S3ReadOnlyKeys.SecretKey == "") {
		return cfg, 0, "", fmt.Errorf("S3 read-only keys: give both CASCADE_S3_READONLY_ACCESS_KEY and CASCADE_S3_READONLY_SECRET_KEY, or neither")
	}
	if queue < 0 {
		return cfg, 0, "", fmt.Errorf("--subscriber-queue (CASCADE_SUBSCRIBER_QUEUE): want 0 or more, got %d", queue)
	}
	cfg.SubscriberQueue = &queue
	if ppCmd != "" {
		if cfg.PostprocessCmd, err = splitCommand("--postprocess-cmd (CASCADE_POSTPROCESS_CMD)", ppCmd); err != nil {
			return cfg, 0, "", err
		}
	} else {
		self, err := os.Executable()
		if err != nil {
			return cfg, 0, "", fmt.Errorf("find the cascade binary for the built-in post-processor: %w", err)
		}
		cfg.PostprocessCmd = []string{self, "postprocess"}
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	sim.simCmdSet = given["sim-cmd"] || os.Getenv("CASCADE_SIM_CMD") != ""
	sim.configsSet = given["sim-configs-dir"] || os.Getenv("CASCADE_SIM_CONFIGS_DIR") != ""
	sim.modifiersSet = given["config-modifiers"] || os.Getenv("CASCADE_CONFIG_MODIFIERS") != ""
	sim.builtInPP, sim.postprocessor = ppCmd == "", cfg.PostprocessCmd
	if err := applySimSetup(&cfg, sim); err != nil {
		return cfg, 0, "", err
	}
	for _, o := range strings.Split(origins, ",") {
		if o = strings.TrimSpace(o); o != "" {
			cfg.AllowedOrigins = append(cfg.AllowedOrigins, o)
		}
	}
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(level)); err != nil {
		return cfg, 0, "", fmt.Errorf("log level: %w", err)
	}
	if format != "text" && format != "json" && format != "auto" {
		return cfg, 0, "", fmt.Errorf("log format: want text, json or auto, got %q", format)
	}
	if cfg.Pprof && !loopback(cfg.Addr) && !cfg.Tokens.Enabled() {
		return cfg, 0, "", fmt.Errorf("--pprof (CASCADE_PPROF) on %s, which is not a loopback address, needs an access token (CASCADE_TOKEN): profiles show the server's insides", cfg.Addr)
	}
	return cfg, lvl, format, nil
}

// loopback reports whether a listen address takes connections from this
// machine only.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// logHandler is the handler of the server's log on w: format "auto" is
// text on a terminal, where a person reads it, and JSON elsewhere, where a
// log shipper does.
func logHandler(w io.Writer, format string, level slog.Level) slog.Handler {
	if format == "auto" {
		format = "json"
		if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
			format = "text"
		}
	}
	opts := &slog.HandlerOptions{Level: level}
	if format == "json" {
		return slog.NewJSONHandler(w, opts)
	}
	return slog.NewTextHandler(w, opts)
}

func serve(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg, level, format, err := parseServe(args, stderr)
	if err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		fmt.Fprintf(stderr, "cascade serve: %v\n", err)
		return 2
	}
	log := slog.New(logHandler(stderr, format, level))
	cfg.Logger = log
	cfg.UI = uiHandler()
	cfg.S3Server = s3serve.Server{}
	m, err := app.Run(ctx, cfg)
	if err != nil {
		log.Error("cannot start", "err", err)
		// The log line is for machines; say it to the person too.
		fmt.Fprintf(stderr, "cascade serve: cannot start: %v\n", err)
		return 1
	}
	// m.Config has the paths made absolute: say where things really are.
	db := "SQLite in " + m.Config.DataDir
	if cfg.DatabaseURL != "" {
		db = m.DB.Dialect()
	}
	// The report on stdout is for people; the log says the same for
	// machines.
	fmt.Fprintf(stdout, "cascade: serving %s (GraphQL %s/graphql, playground %s/playground)\n", m.URL, m.URL, m.URL)
	fmt.Fprintf(stdout, "cascade: %s\n", m.Exposure())
	fmt.Fprintf(stdout, "cascade: watching %s, database %s\n", m.Config.BucketDir(), db)
	if cfg.Pprof {
		fmt.Fprintf(stdout, "cascade: Go profiles at %s/debug/pprof/ (--pprof)\n", m.URL)
	}
	attrs := []any{"url", m.URL, "bucket", m.Config.BucketDir(), "database", db, "pprof", cfg.Pprof}
	if m.S3 != nil {
		attrs = append(attrs, "s3", m.S3.URL)
	}
	log.Info("serving", attrs...)
	for _, l := range m.Config.Report {
		fmt.Fprintf(stdout, "cascade: %s\n", l)
	}
	printS3(stdout, m)
	code := 0
	select {
	case <-ctx.Done():
		log.Info("shutting down")
	case err := <-m.Err():
		log.Error("stopping after an error", "err", err)
		code = 1
	}
	if err := m.Close(); err != nil {
		log.Error("shutdown", "err", err)
		code = 1
	}
	return code
}

// printS3 says where the S3 endpoint is and how to upload a trace to it.
func printS3(w io.Writer, m *app.Main) {
	e := m.S3
	if e == nil {
		fmt.Fprintln(w, "cascade: no S3 endpoint (CASCADE_S3_ADDR=off)")
		return
	}
	keys := "keys from CASCADE_S3_ACCESS_KEY/CASCADE_S3_SECRET_KEY"
	if m.Config.S3Keys.AccessKey == "" {
		file := m.Config.S3KeyFile
		if file == "" {
			file = filepath.Join(m.Config.DataDir, "s3-keys.env")
		}
		keys = "keys in " + file
		if m.S3KeysCreated {
			keys = "new keys written to " + file
		}
	}
	fmt.Fprintf(w, "cascade: S3 endpoint %s, bucket %s, traces under %s/ (%s)\n", e.URL, e.Bucket, e.Prefix, keys)
	if ro := m.Config.S3ReadOnlyKeys.AccessKey; ro != "" {
		fmt.Fprintf(w, "cascade: S3 read-only access key %s may get and list, not write (CASCADE_S3_READONLY_ACCESS_KEY)\n", ro)
	}
	fmt.Fprintf(w, "cascade: upload ./my-trace from another machine with one of:\n  %s\n  %s\n  %s\n  %s\n",
		e.Env(), e.AWSCommand(), e.RcloneCommand(), e.CascadeCommand())
}
