package runs

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/simconfig"
	"github.com/cascade-sim/cascade/accelsim/simlog"
	"github.com/cascade-sim/cascade/slurm"
)

// Slurm runs each run as a batch job on a Slurm cluster: the job script,
// written into the run's directory, runs the simulator there with its log
// beside it, so the directory must be on a filesystem the compute nodes
// share with the server (at the same path). The Manager submits queued
// runs, polls every unfinished job with one squeue call per interval (and
// sacct for jobs squeue has forgotten, where the cluster keeps
// accounting), follows each running job's log as the local executor does,
// and cancels with scancel. Slurm's commands failing or timing out change
// no run: the executor turns unhealthy until Slurm answers again.
type Slurm struct {
	// Command is the simulator and any leading arguments, as the compute
	// nodes find it.
	Command []string
	// Env is exported to the job (LD_LIBRARY_PATH); the job also inherits
	// the server's environment, sbatch's default.
	Env []string
	// Client runs Slurm's commands.
	Client *slurm.Client
	// Options are every run's job options; a config's SlurmOptionsFile
	// overrides them.
	Options SlurmOptions
	// PollInterval is how often every unfinished job is polled, with one
	// squeue call; DefaultSlurmPollInterval when 0.
	PollInterval time.Duration
	// Submitters is how many sbatch calls run at once; 4 when 0.
	Submitters int
}

// DefaultSlurmPollInterval is how often the Slurm executor polls when
// Slurm.PollInterval is 0: 6 squeue calls a minute, however many runs.
const DefaultSlurmPollInterval = 10 * time.Second

var _ Executor = (*Slurm)(nil)

// Name implements [Executor].
func (*Slurm) Name() string { return "slurm" }

func (*Slurm) executor() {}

// JobName is the Slurm job name of a run, how squeue shows it.
func JobName(runID string) string { return "cascade-" + runID }

// cancelRequested starts the history line of a run whose job Cascade asked
// Slurm to cancel: after a restart its CANCELLED end is Cascade's own.
const cancelRequested = "cancel requested: scancel of Slurm job"

// slurmExec is the Manager's side of the Slurm executor.
type slurmExec struct {
	m        *Manager
	cfg      *Slurm
	c        *slurm.Client
	interval time.Duration

	mu   sync.Mutex
	jobs map[string]*slurmJob // by run id: submitted and not over
	// cancels are jobs whose scancel Slurm did not take (it was down):
	// every poll tries again until it does.
	cancels map[slurm.JobID]bool
	// held are queued runs not submitted because Slurm was down; maybe
	// are those whose sbatch may have queued a job Cascade did not hear
	// of (it failed or the server stopped while it ran). The next poll
	// that reaches Slurm adopts the jobs found by name and queues the rest
	// for submission again.
	held, maybe map[string]bool
	status      cascade.ExecutorStatus
	since       time.Time // when Slurm stopped answering
	info        string    // what the start found: the healthy status's message
}

// slurmJob is a run's submitted job as the poller last saw it.
type slurmJob struct {
	runID     string
	id        slurm.JobID
	last      slurm.Status // last applied; zero before the first poll
	total     int          // kernels to simulate
	f         *follower    // from when the job started; under slurmExec.mu
	cancelled bool         // Cascade asked Slurm to cancel it; under slurmExec.mu
}

func newSlurmExec(m *Manager, cfg *Slurm) *slurmExec {
	c := cfg.Client
	if c == nil {
		c = &slurm.Client{}
	}
	interval := cfg.PollInterval
	if interval <= 0 {
		interval = DefaultSlurmPollInterval
	}
	return &slurmExec{
		m: m, cfg: cfg, c: c, interval: interval,
		jobs: map[string]*slurmJob{}, cancels: map[slurm.JobID]bool{},
		held: map[string]bool{}, maybe: map[string]bool{},
		status: cascade.ExecutorStatus{Kind: "slurm", Healthy: true},
	}
}

func (s *slurmExec) submitters() int {
	if s.cfg.Submitters > 0 {
		return s.cfg.Submitters
	}
	return 4
}

// run reattaches to the jobs of runs a previous server submitted, queues
// the waiting runs for submission (after looking for jobs a crash left
// unrecorded), and polls until ctx is done.
func (s *slurmExec) run(ctx context.Context, jobs []cascade.Run, waiting []string) error {
	s.mu.Lock()
	for _, r := range jobs {
		s.trackLocked(r)
		s.m.log.Info("reattached to Slurm job", "run", r.ID, "job", *r.Slurm.JobID, "state", r.State)
	}
	// A run without a job may have been submitted just before the server
	// stopped: the first poll looks for its job by name.
	for _, id := range waiting {
		s.maybe[id] = true
	}
	s.mu.Unlock()

	var wg sync.WaitGroup
	wg.Go(func() { s.m.queue.Run(ctx) })
	wg.Go(func() { s.tailLoop(ctx) })
	s.poll(ctx)
	t := time.NewTicker(s.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			wg.Wait()
			return nil
		case <-t.C:
			s.poll(ctx)
		}
	}
}

func (s *slurmExec) trackLocked(r cascade.Run) *slurmJob {
	j := &slurmJob{runID: r.ID, id: slurm.JobID(*r.Slurm.JobID), total: r.KernelsTotal}
	j.last = slurm.Status{ID: j.id, State: slurm.Pending, SlurmState: r.Slurm.State, Reason: r.Slurm.Reason, Node: r.Slurm.Node, Partition: r.Slurm.Partition}
	if r.State == cascade.RunRunning {
		j.last.State = slurm.Running
	}
	for _, h := range r.History {
		if strings.Contains(h, cancelRequested) {
			// Cascade asked for it; after a restart the scancel may not
			// have got through yet: the next poll sends it again.
			j.cancelled = true
			s.cancels[j.id] = true
		}
	}
	s.jobs[r.ID] = j
	return j
}

// submit is the queue's work under the Slurm executor: it prepares a
// queued run's directory, writes its job script there and submits it. The
// run stays queued, now with its job id; the poller takes it from there.
func (s *slurmExec) submit(_ context.Context, id string) {
	m := s.m
	// sbatch runs under the server's context, not the run's: a cancel that
	// lands meanwhile finds the job id stored, or the job is cancelled here.
	ctx := m.ctx
	a, untrack := m.track(id)
	defer untrack()

	r, err := m.cfg.Store.Run(ctx, id)
	if err != nil {
		if ctx.Err() == nil && cascade.ErrorCode(err) != cascade.ENOTFOUND {
			m.log.Error("load run to submit", "run", id, "err", err)
		}
		return
	}
	if r.State != cascade.RunQueued || r.Slurm.JobID != nil {
		return
	}
	s.mu.Lock()
	down := !s.status.Healthy
	if down {
		s.held[id] = true // queued again once Slurm answers
	}
	s.mu.Unlock()
	if down {
		return
	}

	job, total, err := m.prepare(r)
	if err != nil {
		if !a.removed.Load() {
			m.finish(ctx, id, nil, cascade.RunFailed, err.Error())
		}
		return
	}
	opts, err := ConfigSlurmOptions(job.Config)
	if err != nil {
		m.finish(ctx, id, nil, cascade.RunFailed, "Slurm job options: "+err.Error())
		return
	}
	opts = s.cfg.Options.Merge(opts)
	args := append(append(slices.Clone(s.cfg.Command), "-trace", job.KernelList), simconfig.SimulatorArgs(job.Config)...)
	sj := slurm.Job{
		Name: JobName(id), Dir: job.Dir, Log: job.Log, Command: args, Env: s.cfg.Env,
		Partition: opts.Partition, Account: opts.Account, QOS: opts.QOS,
		TimeLimit: opts.TimeLimit, MemoryMB: opts.MemoryMB, CPUs: opts.CPUs,
	}
	jid, err := s.c.Submit(ctx, sj)
	switch {
	case ctx.Err() != nil:
		return // shutdown: the next start looks for the job by name
	case errors.Is(err, slurm.ErrRejected):
		m.finish(ctx, id, nil, cascade.RunFailed, "Slurm refused the job: "+err.Error())
		return
	case errors.Is(err, slurm.ErrUnavailable):
		s.unavailable(err)
		s.mu.Lock()
		s.maybe[id] = true
		s.mu.Unlock()
		m.log.Warn("run not submitted: Slurm is unavailable; it stays queued", "run", id, "err", err)
		return
	case err != nil:
		m.finish(ctx, id, nil, cascade.RunFailed, "submit to Slurm: "+err.Error())
		return
	}
	s.record(ctx, id, jid, opts.Partition, total, "submitted to Slurm as job %d")
}

// record stores the job a run was submitted as, or adopted, and follows
// it. A run that is no longer queued (cancelled, or removed with its
// trace, while sbatch ran) gets its job cancelled instead.
func (s *slurmExec) record(ctx context.Context, id string, jid slurm.JobID, partition string, total int, history string) {
	m := s.m
	n := int64(jid)
	already := false // the run has this job already: adopted while its sbatch answered
	r, saved, err := m.cfg.Store.UpdateRun(ctx, id, func(r *cascade.Run) error {
		if r.Slurm.JobID != nil && *r.Slurm.JobID == n {
			already = true
			return cascade.ErrUnchanged
		}
		if r.State != cascade.RunQueued || r.Slurm.JobID != nil {
			return cascade.ErrUnchanged
		}
		r.Slurm = cascade.SlurmJob{JobID: &n, Partition: partition, State: string(slurm.Pending)}
		if total > 0 {
			r.KernelsTotal = total
		}
		r.History = append(r.History, stamp(fmt.Sprintf(history, jid)))
		return nil
	})
	switch {
	case err != nil && cascade.ErrorCode(err) != cascade.ENOTFOUND:
		// Not stored: look for the job by name at the next poll.
		m.log.Error("record Slurm job", "run", id, "job", jid, "err", err)
		s.mu.Lock()
		s.maybe[id] = true
		s.mu.Unlock()
		return
	case already:
		// Both ways of learning a run's job found this one: the first poll
		// after a start adopted it by name while the sbatch that queued it
		// was answering (a run launched as the server started is both
		// queued for submission and looked for). It is followed already.
		return
	case err != nil || !saved:
		m.log.Info("run ended while it was submitted; cancelling its job", "run", id, "job", jid)
		s.scancel(ctx, jid)
		return
	}
	s.mu.Lock()
	s.trackLocked(r)
	s.mu.Unlock()
	m.log.Info("run submitted", "run", id, "job", jid, "partition", partition)
	m.publish(r)
}

// scancel cancels jobs, or leaves them for the next poll to cancel when
// Slurm does not answer.
func (s *slurmExec) scancel(ctx context.Context, ids ...slurm.JobID) error {
	if len(ids) == 0 {
		return nil
	}
	err := s.c.Cancel(ctx, ids...)
	again := errors.Is(err, slurm.ErrUnavailable) || ctx.Err() != nil
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		if again {
			s.cancels[id] = true
		} else {
			delete(s.cancels, id)
		}
	}
	switch {
	case err == nil:
	case ctx.Err() != nil:
	case again:
		s.m.log.Warn("scancel failed: Slurm is unavailable; trying again at the next poll", "jobs", ids, "err", err)
		s.unavailableLocked(err)
	default:
		s.m.log.Error("scancel refused", "jobs", ids, "err", err)
	}
	return err
}

// cancel is Manager.Cancel under the Slurm executor: a run not submitted
// yet is cancelled at once; a submitted one's job is cancelled with
// scancel, and a pending job's run is then cancelled at once, a running
// one's when the poller sees its job end.
func (s *slurmExec) cancel(ctx context.Context, id string) (cascade.Run, error) {
	m := s.m
	r, saved, err := m.cfg.Store.UpdateRun(ctx, id, func(r *cascade.Run) error {
		switch {
		case r.State.Final():
			return cascade.Errorf(cascade.ECONFLICT, "run %q is %s already", id, strings.ToLower(string(r.State)))
		case r.State == cascade.RunQueued && r.Slurm.JobID == nil:
			now := time.Now().UTC()
			r.State, r.FinishedAt = cascade.RunCancelled, &now
			r.History = append(r.History, stamp("cancelled before it started"))
			return nil
		case r.Slurm.JobID == nil: // running without a job: not possible
			return cascade.ErrUnchanged
		}
		if !slices.ContainsFunc(r.History, func(h string) bool { return strings.Contains(h, cancelRequested) }) {
			r.History = append(r.History, stamp(fmt.Sprintf("%s %d", cancelRequested, *r.Slurm.JobID)))
			return nil
		}
		return cascade.ErrUnchanged
	})
	if err != nil {
		return r, err
	}
	if r.State == cascade.RunCancelled {
		m.queue.Cancel(id)
		s.mu.Lock()
		delete(s.held, id)
		delete(s.maybe, id)
		s.mu.Unlock()
		m.log.Info("run cancelled", "run", id)
		m.publish(r)
		return r, nil
	}
	if r.Slurm.JobID == nil {
		return r, nil
	}
	jid := slurm.JobID(*r.Slurm.JobID)
	s.mu.Lock()
	if j := s.jobs[id]; j != nil {
		j.cancelled = true
	}
	s.mu.Unlock()
	if saved {
		m.publish(r)
	}
	if err := s.scancel(ctx, jid); errors.Is(err, slurm.ErrUnavailable) {
		return r, nil // the poller delivers it once Slurm answers
	} else if err != nil {
		return r, fmt.Errorf("cancel Slurm job %d: %w", jid, err)
	}
	if r.State != cascade.RunQueued {
		return r, nil // the poller sees the job end
	}
	// A pending job that was cancelled never starts.
	r2, saved, err := m.cfg.Store.UpdateRun(ctx, id, cancelBeforeStart)
	if err != nil || !saved {
		return r, err
	}
	s.mu.Lock()
	delete(s.jobs, id)
	s.mu.Unlock()
	m.log.Info("run cancelled", "run", id, "job", jid)
	m.publish(r2)
	return r2, nil
}

// scancelBatch bounds the job ids given to one scancel call.
const scancelBatch = 1000

// cancelMany is cancel for many runs, a sweep's: their "cancel requested"
// lines in one transaction, their jobs with one scancel call per
// scancelBatch jobs, and the runs whose jobs were pending cancelled in
// one more transaction; running ones end when the poller sees their jobs
// end. Runs not submitted yet are cancelled at once; runs over are left.
func (s *slurmExec) cancelMany(ctx context.Context, ids []string) error {
	m := s.m
	jobOf := map[string]slurm.JobID{}
	saved, _, err := m.cfg.Store.UpdateRuns(ctx, ids, func(r *cascade.Run) error {
		switch {
		case r.State.Final():
			return cascade.ErrUnchanged
		case r.State == cascade.RunQueued && r.Slurm.JobID == nil:
			now := time.Now().UTC()
			r.State, r.FinishedAt = cascade.RunCancelled, &now
			r.History = append(r.History, stamp("cancelled before it started"))
			return nil
		case r.Slurm.JobID == nil: // running without a job: not possible
			return cascade.ErrUnchanged
		}
		jobOf[r.ID] = slurm.JobID(*r.Slurm.JobID)
		if slices.ContainsFunc(r.History, func(h string) bool { return strings.Contains(h, cancelRequested) }) {
			return cascade.ErrUnchanged
		}
		r.History = append(r.History, stamp(fmt.Sprintf("%s %d", cancelRequested, *r.Slurm.JobID)))
		return nil
	})
	if err != nil {
		return err
	}
	for _, r := range saved {
		if r.State == cascade.RunCancelled {
			m.queue.Cancel(r.ID)
			s.mu.Lock()
			delete(s.held, r.ID)
			delete(s.maybe, r.ID)
			s.mu.Unlock()
		}
		m.publish(r)
	}
	if len(jobOf) == 0 {
		return nil
	}
	var withJob []string // runs with a job, in ids' order
	jids := make([]slurm.JobID, 0, len(jobOf))
	s.mu.Lock()
	for _, id := range ids {
		jid, ok := jobOf[id]
		if !ok {
			continue
		}
		delete(jobOf, id) // an id given twice
		jids = append(jids, jid)
		if j := s.jobs[id]; j != nil {
			j.cancelled = true
		}
		withJob = append(withJob, id)
	}
	s.mu.Unlock()
	var errs []error
	for batch := range slices.Chunk(jids, scancelBatch) {
		if err := s.scancel(ctx, batch...); errors.Is(err, slurm.ErrUnavailable) {
			return nil // the poller delivers them once Slurm answers
		} else if err != nil {
			errs = append(errs, fmt.Errorf("cancel %d Slurm jobs: %w", len(batch), err))
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	// Pending jobs that were cancelled never start.
	cancelled, _, err := m.cfg.Store.UpdateRuns(ctx, withJob, cancelBeforeStart)
	if err != nil {
		return err
	}
	s.mu.Lock()
	for _, r := range cancelled {
		delete(s.jobs, r.ID)
	}
	s.mu.Unlock()
	for _, r := range cancelled {
		m.publish(r)
	}
	return nil
}

// forget stops following a run whose trace was removed, and cancels its
// job when it has one.
func (s *slurmExec) forget(ctx context.Context, id string, jid *int64) {
	s.mu.Lock()
	j := s.jobs[id]
	delete(s.jobs, id)
	delete(s.held, id)
	delete(s.maybe, id)
	s.mu.Unlock()
	switch {
	case j != nil:
		s.scancel(ctx, j.id)
	case jid != nil:
		s.scancel(ctx, slurm.JobID(*jid))
	}
}

// poll is one round: cancels Slurm did not take, submissions it did not
// answer, then every unfinished job's status with one Poll.
func (s *slurmExec) poll(ctx context.Context) {
	s.mu.Lock()
	cancels := slices.Sorted(maps.Keys(s.cancels))
	pending := len(s.held) + len(s.maybe)
	jobs := slices.Collect(maps.Values(s.jobs))
	s.mu.Unlock()
	if len(cancels) > 0 {
		s.scancel(ctx, cancels...)
	}
	if pending > 0 {
		s.resubmit(ctx)
	}
	if len(jobs) == 0 {
		if pending == 0 && !s.Status().Healthy {
			s.probe(ctx) // nothing else asks Slurm whether it is back
		}
		return
	}
	ids := make([]slurm.JobID, len(jobs))
	for i, j := range jobs {
		ids[i] = j.id
	}
	sts, err := s.c.Poll(ctx, ids)
	if ctx.Err() != nil {
		return
	}
	if err != nil {
		s.unavailable(err)
	} else {
		s.available()
	}
	var changed []statusChange
	for _, j := range jobs {
		if st, ok := sts[j.id]; ok {
			if c, ok := s.apply(ctx, j, st); ok {
				changed = append(changed, c)
			}
		}
	}
	s.saveStatuses(ctx, changed)
}

// probe asks Slurm whether it answers, with one squeue call.
func (s *slurmExec) probe(ctx context.Context) {
	if _, err := s.c.Queue(ctx); err != nil {
		if ctx.Err() == nil {
			s.unavailable(err)
		}
		return
	}
	s.available()
}

// resubmit settles runs whose submission Slurm did not answer: with one
// squeue call, a job found by the run's name is adopted, and the other
// runs are queued for submission again.
func (s *slurmExec) resubmit(ctx context.Context) {
	all, err := s.c.Queue(ctx)
	if ctx.Err() != nil {
		return
	}
	if err != nil {
		s.unavailable(err)
		return
	}
	s.available()
	byName := make(map[string]slurm.Status, len(all))
	for _, st := range all {
		byName[st.Name] = st
	}
	s.mu.Lock()
	held := slices.Collect(maps.Keys(s.held))
	maybe := slices.Collect(maps.Keys(s.maybe))
	clear(s.held)
	clear(s.maybe)
	s.mu.Unlock()
	var again []string
	for _, id := range maybe {
		if st, ok := byName[JobName(id)]; ok {
			s.adopt(ctx, id, st)
			continue
		}
		again = append(again, id)
	}
	// A job that ended longer ago than the controller's MinJobAge has left
	// squeue: where the cluster keeps accounting, sacct still knows it by
	// name. Submitting again without asking would run the simulation twice.
	again, err = s.accountedByName(ctx, again)
	if err != nil {
		if ctx.Err() != nil {
			return // the next start looks for them again
		}
		s.unavailable(err)
		s.mu.Lock()
		for _, id := range again {
			s.maybe[id] = true
		}
		for _, id := range held {
			s.held[id] = true
		}
		s.mu.Unlock()
		return
	}
	again = append(again, held...)
	if len(again) == 0 {
		return
	}
	// In launch order: the stored runs' order.
	rs, err := s.m.cfg.Store.RunsInState(ctx, cascade.RunQueued)
	if err != nil {
		s.m.log.Error("load queued runs", "err", err)
		s.mu.Lock()
		for _, id := range again {
			s.held[id] = true
		}
		s.mu.Unlock()
		return
	}
	want := map[string]bool{}
	for _, id := range again {
		want[id] = true
	}
	for _, r := range rs {
		if want[r.ID] {
			s.m.queue.Add(r.ID)
		}
	}
}

// adopt records a job found by its run's name as the run's.
func (s *slurmExec) adopt(ctx context.Context, id string, st slurm.Status) {
	s.m.log.Info("found the Slurm job of a run whose submission was not recorded", "run", id, "job", st.ID, "state", st.SlurmState)
	s.record(ctx, id, st.ID, st.Partition, s.m.kernelTotal(id), "found its Slurm job %d, submitted before the server heard back")
}

// accountedByName adopts the jobs sacct knows by the names of runs ids,
// where the cluster keeps accounting, and returns the runs that have
// none; on an error, ids are returned with it, none adopted.
func (s *slurmExec) accountedByName(ctx context.Context, ids []string) ([]string, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	acct, err := s.c.AccountingEnabled(ctx)
	if err != nil || !acct {
		return ids, err
	}
	names := make([]string, len(ids))
	for i, id := range ids {
		names[i] = JobName(id)
	}
	sts, err := s.c.AccountedByName(ctx, names)
	if err != nil {
		return ids, err
	}
	// The newest job of a name, should there be several.
	byName := map[string]slurm.Status{}
	for _, st := range sts {
		if prev, ok := byName[st.Name]; !ok || st.ID > prev.ID {
			byName[st.Name] = st
		}
	}
	var none []string
	for _, id := range ids {
		if st, ok := byName[JobName(id)]; ok {
			s.adopt(ctx, id, st)
			continue
		}
		none = append(none, id)
	}
	return none, nil
}

// statusChange is a job's new status that its run has yet to record.
type statusChange struct {
	j        *slurmJob
	st, prev slurm.Status
}

// statusBatch bounds the runs whose new status one transaction records.
const statusBatch = 500

// apply maps one job's status to its run: an end finishes the run at
// once; a pending or running job's status, when it changed, is returned
// for saveStatuses to record (running makes the run running), and a
// running job's log is followed from now on.
func (s *slurmExec) apply(ctx context.Context, j *slurmJob, st slurm.Status) (statusChange, bool) {
	if st.State.Done() {
		s.end(ctx, j, st)
		return statusChange{}, false
	}
	if st.Node == "" {
		st.Node = j.last.Node
	}
	prev := j.last
	j.last = st
	if st.State == slurm.Running {
		s.mu.Lock()
		if j.f == nil {
			j.f = newFollower(s.m, ctx, j.runID, s.m.LogPath(j.runID), j.total)
		}
		s.mu.Unlock()
	}
	if prev.SlurmState == st.SlurmState && prev.Reason == st.Reason && prev.Node == st.Node && prev.Partition == st.Partition {
		return statusChange{}, false
	}
	return statusChange{j: j, st: st, prev: prev}, true
}

// saveStatuses records the changed statuses of one poll, statusBatch runs
// to a transaction: the first poll after thousands of submissions records
// every pending reason in a few writes, not one per run.
func (s *slurmExec) saveStatuses(ctx context.Context, changed []statusChange) {
	m := s.m
	for batch := range slices.Chunk(changed, statusBatch) {
		byRun := make(map[string]statusChange, len(batch))
		ids := make([]string, len(batch))
		for i, c := range batch {
			byRun[c.j.runID], ids[i] = c, c.j.runID
		}
		saved, missing, err := m.cfg.Store.UpdateRuns(ctx, ids, func(r *cascade.Run) error {
			if r.State.Final() {
				return cascade.ErrUnchanged
			}
			st := byRun[r.ID].st
			s.setJob(r, st)
			if st.State == slurm.Running && r.State == cascade.RunQueued {
				start := time.Now().UTC()
				if !st.Start.IsZero() {
					start = st.Start.UTC()
				}
				r.State, r.StartedAt, r.Error = cascade.RunRunning, &start, nil
				r.StatCounters = statCounters(m.cfg.StatsTable)
			}
			return nil
		})
		if err != nil {
			if ctx.Err() == nil {
				m.log.Error("record Slurm job statuses", "runs", len(ids), "err", err)
			}
			continue
		}
		if len(missing) > 0 { // removed meanwhile
			s.mu.Lock()
			for _, id := range missing {
				delete(s.jobs, id)
			}
			s.mu.Unlock()
		}
		for _, r := range saved {
			c := byRun[r.ID]
			if c.st.State == slurm.Running && c.prev.State != slurm.Running {
				m.log.Info("run started", "run", r.ID, "job", c.j.id, "node", c.st.Node)
			}
			m.publish(r)
		}
	}
}

func (s *slurmExec) setJob(r *cascade.Run, st slurm.Status) {
	r.Slurm.State, r.Slurm.Reason = st.SlurmState, st.Reason
	if st.State == slurm.Lost {
		r.Slurm.State = string(slurm.Lost)
	}
	if st.Node != "" {
		r.Slurm.Node = st.Node
	}
	if st.Partition != "" {
		r.Slurm.Partition = st.Partition
	}
}

// end records the end of a run's job: its results from the log, and its
// state from both the log and Slurm's verdict.
func (s *slurmExec) end(ctx context.Context, j *slurmJob, st slurm.Status) {
	m := s.m
	s.mu.Lock()
	delete(s.jobs, j.runID)
	s.mu.Unlock()
	if st.Node == "" {
		st.Node = j.last.Node
	}
	s.mu.Lock()
	f, cancelled := j.f, j.cancelled
	s.mu.Unlock()
	if f == nil {
		f = newFollower(m, ctx, j.runID, m.LogPath(j.runID), j.total)
	}
	p := f.finish()
	prog := p.Progress()
	after := fmt.Sprintf("after %d of %d kernels", prog.Done, prog.Total)
	job := fmt.Sprintf("Slurm job %d", st.ID)
	verdict := job + " " + st.Describe()
	var state cascade.RunState
	var msg, note string
	switch st.State {
	case slurm.Completed:
		state, msg = s.judge(ctx, j.runID, p, simlog.Exit{})
	case slurm.Cancelled:
		state = cascade.RunCancelled
		if !cancelled {
			msg = fmt.Sprintf("%s was cancelled outside Cascade (%s) %s", job, st.Describe(), after)
		}
	case slurm.Lost:
		if o := p.Outcome(simlog.Exit{}); o.Succeeded {
			state = cascade.RunSucceeded
			note = fmt.Sprintf("Slurm no longer knows job %d; its log shows the simulation complete", st.ID)
		} else {
			state = cascade.RunFailed
			last := "never seen by this server"
			if j.last.SlurmState != "" {
				last = "last seen " + j.last.SlurmState
				if j.last.Node != "" {
					last += " on " + j.last.Node
				}
			}
			msg = fmt.Sprintf("lost: Slurm no longer knows job %d (%s; it left squeue, and the cluster keeps no accounting to ask); its log shows %d of %d kernels done", st.ID, last, prog.Done, prog.Total)
		}
	case slurm.Failed:
		state = cascade.RunFailed
		exit := simlog.Exit{Code: st.ExitCode}
		if st.Signal != 0 {
			exit = simlog.Exit{Code: -1, Signal: syscall.Signal(st.Signal).String()}
		}
		o := p.Outcome(exit)
		msg = o.Reason + " (" + verdict + ")"
	case slurm.Timeout:
		p.Outcome(simlog.Exit{Code: -1, Signal: "killed", TimeLimit: true}) // its failure class
		state, msg = cascade.RunFailed, fmt.Sprintf("%s hit its time limit (%s) %s; raise time= in %s or CASCADE_SLURM_TIME", job, st.Describe(), after, SlurmOptionsFile)
	case slurm.OutOfMemory:
		p.Outcome(simlog.Exit{Code: -1, Signal: "killed", OOM: true}) // its failure class
		state, msg = cascade.RunFailed, fmt.Sprintf("%s ran out of memory (%s) %s; raise mem= in %s or CASCADE_SLURM_MEM", job, st.Describe(), after, SlurmOptionsFile)
	case slurm.NodeFail:
		state, msg = cascade.RunFailed, fmt.Sprintf("%s's node failed (%s) %s", job, st.Describe(), after)
	default:
		state, msg = cascade.RunFailed, fmt.Sprintf("%s ended %s %s", job, st.Describe(), after)
	}
	m.finishWith(ctx, j.runID, p, state, msg, func(r *cascade.Run) {
		s.setJob(r, st)
		if r.StartedAt == nil && !st.Start.IsZero() {
			t := st.Start.UTC()
			r.StartedAt = &t
		}
		if !st.End.IsZero() {
			t := st.End.UTC()
			r.FinishedAt = &t
		}
		if note != "" {
			r.History = append(r.History, stamp(note))
		}
	})
}

// judge is the local executor's verdict on a finished simulator.
func (s *slurmExec) judge(ctx context.Context, runID string, p *simlog.Parser, exit simlog.Exit) (cascade.RunState, string) {
	o := p.Outcome(exit)
	switch {
	case o.Succeeded:
		return cascade.RunSucceeded, ""
	case o.Failure == simlog.FailureTraceFormat:
		r, err := s.m.cfg.Store.Run(ctx, runID)
		if err == nil {
			return cascade.RunFailed, o.Reason + ". " + traceFormatFix(r.TraceID)
		}
	}
	return cascade.RunFailed, o.Reason
}

// tailLoop reads the logs of running jobs every second, as the local
// executor's nudges do: progress and kernel results as they are written.
func (s *slurmExec) tailLoop(ctx context.Context) {
	t := time.NewTicker(min(time.Second, s.interval))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s.mu.Lock()
		var fs []*follower
		for _, j := range s.jobs {
			if j.f != nil {
				fs = append(fs, j.f)
			}
		}
		s.mu.Unlock()
		for _, f := range fs {
			f.grew()
		}
	}
}

// Status is the executor's health.
func (s *slurmExec) Status() cascade.ExecutorStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.status
}

func (s *slurmExec) unavailable(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.unavailableLocked(err)
}

func (s *slurmExec) unavailableLocked(err error) {
	was := s.status
	if was.Healthy {
		s.since = time.Now()
		s.m.log.Warn("Slurm is not answering; runs keep their state and polling goes on", "err", err, "interval", s.interval)
	}
	msg := fmt.Sprintf("Slurm has not answered since %s: %v. Runs keep their state; Cascade tries again every %v.",
		s.since.Format("15:04:05"), err, s.interval)
	s.status = cascade.ExecutorStatus{Kind: "slurm", Healthy: false, Message: &msg}
	if was.Healthy || cascade.Deref(was.Message) != msg {
		s.m.cfg.Events.Publish(cascade.ExecutorUpdated{Status: s.status})
	}
}

func (s *slurmExec) available() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.status.Healthy {
		return
	}
	if s.info == "" {
		// The start could not ask whether the cluster keeps accounting;
		// Poll asks when it needs to, and the answer is cached.
		s.info = "Slurm answers."
	}
	s.m.log.Info("Slurm answers again", "down for", time.Since(s.since).Round(time.Second))
	s.status = cascade.ExecutorStatus{Kind: "slurm", Healthy: true}
	if s.info != "" {
		s.status.Message = &s.info
	}
	s.m.cfg.Events.Publish(cascade.ExecutorUpdated{Status: s.status})
}

// cancelBeforeStart records a pending run whose job was cancelled: it
// never starts.
func cancelBeforeStart(r *cascade.Run) error {
	if r.State != cascade.RunQueued {
		return cascade.ErrUnchanged
	}
	now := time.Now().UTC()
	r.State, r.FinishedAt = cascade.RunCancelled, &now
	r.Slurm.State = string(slurm.Cancelled)
	r.History = append(r.History, stamp("cancelled before it started"))
	return nil
}
