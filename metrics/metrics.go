package metrics

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/cascade-sim/cascade"
)

// countTimeout bounds the database counts of one scrape.
const countTimeout = 5 * time.Second

// Registry holds Cascade's metrics and serves them. Its methods are safe
// for concurrent use.
type Registry struct {
	reg *prometheus.Registry
	log *slog.Logger

	scan            prometheus.Histogram
	postprocess     *prometheus.HistogramVec
	run             *prometheus.HistogramVec
	slurmPollErrors prometheus.Counter
}

// New returns a registry holding the event metrics and the Go runtime's
// and process's standard ones; [Registry.Watch] adds the levels. log gets
// scrape errors (a database count that failed); nil discards them.
func New(log *slog.Logger) *Registry {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	r := &Registry{
		reg: prometheus.NewRegistry(),
		log: log.With("component", "metrics"),
		scan: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "cascade_scan_duration_seconds",
			Help:    "Time of one periodic scan of the bucket (the first, full one included).",
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 10), // 1 ms to 4 min
		}),
		postprocess: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "cascade_postprocess_duration_seconds",
			Help:    "Wall time of one post-processor, by outcome (ok: it wrote kernelslist.g; failed: anything else).",
			Buckets: prometheus.ExponentialBuckets(1, 4, 9), // 1 s to 18 h
		}, []string{"outcome"}),
		run: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "cascade_run_duration_seconds",
			Help:    "Time from a run's start to its end, by the state it ended in.",
			Buckets: prometheus.ExponentialBuckets(1, 4, 10), // 1 s to 3 days
		}, []string{"state"}),
		slurmPollErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "cascade_slurm_poll_errors_total",
			Help: "Polls of the Slurm cluster (squeue, sacct) that failed.",
		}),
	}
	r.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		r.scan, r.postprocess, r.run, r.slurmPollErrors,
	)
	// Outcomes and end states are known: show them at zero from the start.
	for _, o := range []string{"ok", "failed"} {
		r.postprocess.WithLabelValues(o)
	}
	for _, s := range []cascade.RunState{cascade.RunSucceeded, cascade.RunFailed, cascade.RunCancelled} {
		r.run.WithLabelValues(label(string(s)))
	}
	return r
}

// Sources are the levels read at each scrape. A nil field leaves its
// metric out.
type Sources struct {
	// TraceStates and RunStates count traces and runs by state: the run
	// queue is RunStates' QUEUED.
	TraceStates func(ctx context.Context) (map[cascade.TraceState]int64, error)
	RunStates   func(ctx context.Context) (map[cascade.RunState]int64, error)
	// PostprocessQueued counts traces waiting for a post-processor;
	// PostprocessRunning the post-processors at work.
	PostprocessQueued  func() int
	PostprocessRunning func() int
	// Subscribers counts open subscriptions; SubscribersDropped those the
	// server closed for falling too far behind; ClientsDropped the
	// websocket clients dropped for not reading.
	Subscribers        func() int
	SubscribersDropped func() int64
	ClientsDropped     func() int64
	// UploadsInFlight counts S3 requests writing an object (PUT, a
	// multipart part, a completion, a copy) under way.
	UploadsInFlight func() int64
}

// Watch registers the levels src provides. Call it once.
func (r *Registry) Watch(src Sources) {
	gauge := func(name, help string, f func() float64) {
		r.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, f))
	}
	counter := func(name, help string, f func() float64) {
		r.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, f))
	}
	if src.TraceStates != nil {
		states := []cascade.TraceState{cascade.TraceUploading, cascade.TraceProcessing, cascade.TraceReady, cascade.TraceFailed}
		r.reg.MustRegister(&stateCounts[cascade.TraceState]{
			desc:   prometheus.NewDesc("cascade_traces", "Traces by state.", []string{"state"}, nil),
			states: states, count: src.TraceStates, log: r.log,
		})
	}
	if src.RunStates != nil {
		states := []cascade.RunState{cascade.RunQueued, cascade.RunRunning, cascade.RunSucceeded, cascade.RunFailed, cascade.RunCancelled}
		r.reg.MustRegister(&stateCounts[cascade.RunState]{
			desc:   prometheus.NewDesc("cascade_runs", `Runs by state; state="queued" is the run queue's length.`, []string{"state"}, nil),
			states: states, count: src.RunStates, log: r.log,
		})
	}
	if f := src.PostprocessQueued; f != nil {
		gauge("cascade_postprocess_queue_length", "Traces waiting for a post-processor.", func() float64 { return float64(f()) })
	}
	if f := src.PostprocessRunning; f != nil {
		gauge("cascade_postprocess_running", "Post-processors at work.", func() float64 { return float64(f()) })
	}
	if f := src.Subscribers; f != nil {
		gauge("cascade_subscribers", "Subscriptions to the server's events: GraphQL subscriptions and log streams, identical websocket subscriptions counted once (they share one).", func() float64 { return float64(f()) })
	}
	if f := src.SubscribersDropped; f != nil {
		counter("cascade_subscribers_dropped_total", "Subscriptions the server completed for falling more than CASCADE_SUBSCRIBER_QUEUE changes behind.", func() float64 { return float64(f()) })
	}
	if f := src.ClientsDropped; f != nil {
		counter("cascade_websocket_clients_dropped_total", "Websocket clients dropped for not reading what the server sent.", func() float64 { return float64(f()) })
	}
	if f := src.UploadsInFlight; f != nil {
		gauge("cascade_s3_uploads_in_flight", "S3 requests writing an object (PUT, UploadPart, CompleteMultipartUpload, CopyObject) under way.", func() float64 { return float64(f()) })
	}
}

// Handler serves the metrics in Prometheus's text format. A level that
// cannot be read (the database is down) is left out of that scrape and
// logged; the others are served.
func (r *Registry) Handler() http.Handler {
	return promhttp.HandlerFor(r.reg, promhttp.HandlerOpts{ErrorLog: errorLog{r.log}, ErrorHandling: promhttp.ContinueOnError})
}

// Scanned records a periodic scan's duration; it is scanner.Config.Scanned.
func (r *Registry) Scanned(d time.Duration) { r.scan.Observe(d.Seconds()) }

// Postprocessed records a post-processor's wall time and whether it
// succeeded; it is postproc.Config.Finished.
func (r *Registry) Postprocessed(d time.Duration, ok bool) {
	o := "failed"
	if ok {
		o = "ok"
	}
	r.postprocess.WithLabelValues(o).Observe(d.Seconds())
}

// RunEnded records the time a run took, from its committed row; a run that
// never started (cancelled while queued) is not counted. It is
// runs.Config.Ended.
func (r *Registry) RunEnded(run cascade.Run) {
	if run.StartedAt == nil || run.FinishedAt == nil {
		return
	}
	r.run.WithLabelValues(label(string(run.State))).Observe(run.FinishedAt.Sub(*run.StartedAt).Seconds())
}

// SlurmPollFailed counts a failed poll of the Slurm cluster; it is
// slurm.Client.PollFailed.
func (r *Registry) SlurmPollFailed(error) { r.slurmPollErrors.Inc() }

// label is a state as a label value: "queued", "ready".
func label(state string) string { return strings.ToLower(state) }

// stateCounts is a gauge per state, counted by one query per scrape.
type stateCounts[S ~string] struct {
	desc   *prometheus.Desc
	states []S
	count  func(ctx context.Context) (map[S]int64, error)
	log    *slog.Logger
}

func (c *stateCounts[S]) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *stateCounts[S]) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), countTimeout)
	defer cancel()
	n, err := c.count(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.desc, err)
		return
	}
	for _, s := range c.states {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(n[s]), label(string(s)))
	}
}

// errorLog hands promhttp's errors to slog.
type errorLog struct{ log *slog.Logger }

func (l errorLog) Println(v ...any) {
	l.log.Warn("metrics scrape", "err", strings.TrimSpace(fmt.Sprintln(v...)))
}
