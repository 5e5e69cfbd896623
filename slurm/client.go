package slurm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// ErrUnavailable is wrapped by every error of a Slurm command that failed
// or timed out for want of the cluster (controller or accounting daemon
// down, unreachable, overloaded): nothing is known about the jobs, nothing
// happened to them, and the same call may succeed later.
var ErrUnavailable = errors.New("slurm: unavailable")

// ErrRejected is wrapped by the error of a submission Slurm refused while
// up — an unknown partition, account or QOS, limits the job exceeds. The
// job will not run; resubmitting it unchanged is refused again.
var ErrRejected = errors.New("slurm: job rejected")

// Accounting says whether [Client.Poll] asks sacct about jobs squeue has
// forgotten.
type Accounting int

const (
	// AccountingAuto asks the controller (scontrol show config) once
	// whether the cluster keeps accounting in slurmdbd.
	AccountingAuto Accounting = iota
	AccountingOn
	AccountingOff
)

// DefaultTimeout bounds one command. squeue waits out its own connect
// retries (slurm.conf's MessageTimeout, 10 s by default) before saying the
// controller is down.
const DefaultTimeout = 30 * time.Second

// Client runs Slurm's client commands (sbatch, squeue, sacct, scancel,
// scontrol) as its Config's Bin, Env, Timeout and Accounting say (the
// rest of the Config is the executor's). The zero value runs those on
// PATH against the cluster the environment names. A Client is safe for
// concurrent use; its fields must not change once it is in use.
type Client struct {
	Config
	// PollFailed, if set, is told about each failed Poll (for /metrics:
	// metrics.Registry.SlurmPollFailed); it must be quick.
	PollFailed func(error)

	mu     sync.Mutex
	config map[string]string // scontrol show config, once asked
}

// Submit writes j's script into j.Dir and submits it with sbatch
// --parsable. Errors wrap ErrUnavailable when the controller could not be
// reached — the job may then still have been queued, if only the answer was
// lost: look for it by name before submitting again — or ErrRejected when
// Slurm refused the job.
func (c *Client) Submit(ctx context.Context, j Job) (JobID, error) {
	script, err := j.WriteScript()
	if err != nil {
		return 0, err
	}
	return c.sbatch(ctx, script, j.Hold)
}

// sbatch submits a written script.
func (c *Client) sbatch(ctx context.Context, script string, hold bool) (JobID, error) {
	args := []string{"--parsable"}
	if hold {
		args = append(args, "--hold")
	}
	out, err := c.run(ctx, "sbatch", append(args, script)...)
	if err != nil {
		// Only an sbatch that exited non-zero can have been refused: one
		// that timed out or whose answer was cut short (ErrUnavailable
		// from run) may have queued the job.
		if errors.Is(err, ErrUnavailable) || !c.up(ctx) {
			return 0, unavailable(err)
		}
		return 0, fmt.Errorf("%w: %w", ErrRejected, err)
	}
	return ParseJobID(strings.TrimSpace(string(out)))
}

// Poll returns the status of each job in ids: one squeue call for all of
// them, then — for those squeue no longer lists, and for the usage
// (Elapsed, MaxRSS) of those it lists ended, when the cluster keeps
// accounting — one sacct call; a job neither knows is Lost. An error wraps
// ErrUnavailable (or the context's error): the map then holds the jobs
// squeue answered for, if it did, and nothing is known of the others this
// time — keep their last status and poll again. Each error but ctx's own
// is also handed to PollFailed.
func (c *Client) Poll(ctx context.Context, ids []JobID) (map[JobID]Status, error) {
	refs := make([]Ref, len(ids))
	for i, id := range ids {
		refs[i] = JobRef(id)
	}
	byRef, err := c.PollRefs(ctx, refs)
	if byRef == nil {
		return nil, err
	}
	sts := make(map[JobID]Status, len(byRef))
	for r, st := range byRef {
		sts[r.ID] = st
	}
	return sts, err
}

// PollRefs is Poll of jobs and job arrays' tasks: each status is of its
// ref (a task's, whose squeue record may still be its array's pending
// one).
func (c *Client) PollRefs(ctx context.Context, refs []Ref) (map[Ref]Status, error) {
	sts, err := c.poll(ctx, refs)
	if err != nil && ctx.Err() == nil && c.PollFailed != nil {
		c.PollFailed(err)
	}
	return sts, err
}

func (c *Client) poll(ctx context.Context, refs []Ref) (map[Ref]Status, error) {
	sts := make(map[Ref]Status, len(refs))
	if len(refs) == 0 {
		return sts, nil
	}
	want := make(map[Ref]bool, len(refs))
	for _, r := range refs {
		want[r] = true
	}
	all, err := c.Queue(ctx)
	if err != nil {
		return nil, err
	}
	for _, st := range all {
		if want[st.Ref()] {
			sts[st.Ref()] = st
		}
	}
	var missing, ended []Ref
	for r := range want {
		st, ok := sts[r]
		switch {
		case !ok:
			missing = append(missing, r)
		case st.State.Done():
			ended = append(ended, r)
		}
	}
	if len(missing)+len(ended) > 0 {
		// One sacct call: the statuses of the jobs squeue forgot, and the
		// usage (Elapsed, MaxRSS) of those it shows ended, which squeue
		// does not give; without an answer for them they end without it.
		acct, err := c.accountingOn(ctx)
		if err != nil && len(missing) > 0 {
			return sts, err
		}
		if err == nil && acct {
			ask := slices.SortedFunc(slices.Values(append(slices.Clone(missing), ended...)), Ref.Compare)
			found, err := c.AccountedRefs(ctx, ask)
			if err != nil && len(missing) > 0 {
				return sts, err
			}
			for _, st := range found {
				q, ok := sts[st.Ref()]
				switch {
				case !want[st.Ref()]:
				case !ok:
					sts[st.Ref()] = st
				case q.State.Done() && st.State.Done():
					q.Elapsed, q.MaxRSS = st.Elapsed, st.MaxRSS
					sts[st.Ref()] = q
				}
			}
		}
	}
	for r := range want {
		if _, ok := sts[r]; !ok {
			sts[r] = lost(r)
		}
	}
	return sts, nil
}

// Queue returns every job the controller still holds, running or ended
// within its MinJobAge, from one squeue --json call. (Slurm 22.05 ignores
// squeue's filters with --json; later versions honour --states=all and
// --me, which keep the answer to this user's jobs in every state.)
func (c *Client) Queue(ctx context.Context) ([]Status, error) {
	out, err := c.run(ctx, "squeue", "--json", "--states=all", "--me")
	if err != nil {
		return nil, unavailable(err)
	}
	sts, err := parseSqueue(out)
	if err != nil {
		// squeue exits 0 with an error in its output when the controller
		// is down; an unreadable output is no better.
		return nil, fmt.Errorf("%w: squeue: %w", ErrUnavailable, err)
	}
	return sts, nil
}

// Accounted returns what slurmdbd recorded of the jobs ids, from one sacct
// --json call; jobs it has no record of are left out.
func (c *Client) Accounted(ctx context.Context, ids []JobID) ([]Status, error) {
	refs := make([]Ref, len(ids))
	for i, id := range ids {
		refs[i] = JobRef(id)
	}
	return c.AccountedRefs(ctx, refs)
}

// AccountedRefs is Accounted of jobs and job arrays' tasks ("1234_5"; a
// whole array's JobRef gives each of its tasks).
func (c *Client) AccountedRefs(ctx context.Context, refs []Ref) ([]Status, error) {
	list := make([]string, len(refs))
	for i, r := range refs {
		list[i] = r.String()
	}
	// --starttime: with --jobs alone sacct still looks from midnight only.
	// No --allocations: its JSON leaves out the jobs' steps, whose usage
	// is the MaxRSS (sacct --json lists each job once either way, its
	// steps within).
	out, err := c.run(ctx, "sacct", "--json", "--starttime=1970-01-02",
		"--jobs="+strings.Join(list, ","))
	if err != nil {
		return nil, unavailable(err) // slurmdbd down, most likely
	}
	sts, err := parseSacct(out)
	if err != nil {
		return nil, fmt.Errorf("%w: sacct: %w", ErrUnavailable, err)
	}
	return sts, nil
}

// AccountedByName returns what slurmdbd recorded of the jobs named names,
// from one sacct --json call: it finds a job whose id was lost (the
// submitter stopped before hearing it) after squeue has forgotten it.
// Jobs of other names are left out.
func (c *Client) AccountedByName(ctx context.Context, names []string) ([]Status, error) {
	if len(names) == 0 {
		return nil, nil
	}
	out, err := c.run(ctx, "sacct", "--json", "--allocations", "--starttime=1970-01-02",
		"--name="+strings.Join(names, ","))
	if err != nil {
		return nil, unavailable(err)
	}
	sts, err := parseSacct(out)
	if err != nil {
		return nil, fmt.Errorf("%w: sacct: %w", ErrUnavailable, err)
	}
	return slices.DeleteFunc(sts, func(st Status) bool { return !slices.Contains(names, st.Name) }), nil
}

// Cancel cancels the jobs with scancel. Cancelling a job that has ended
// or that Slurm does not know is not an error.
func (c *Client) Cancel(ctx context.Context, ids ...JobID) error {
	refs := make([]Ref, len(ids))
	for i, id := range ids {
		refs[i] = JobRef(id)
	}
	return c.CancelRefs(ctx, refs...)
}

// CancelRefs is Cancel of jobs and job arrays' tasks: a task's ref
// ("1234_5") cancels that task, an array's JobRef every task of it.
func (c *Client) CancelRefs(ctx context.Context, refs ...Ref) error {
	if len(refs) == 0 {
		return nil
	}
	args := make([]string, len(refs))
	for i, r := range refs {
		args[i] = r.String()
	}
	if _, err := c.run(ctx, "scancel", args...); err != nil {
		if !c.up(ctx) {
			return unavailable(err)
		}
		return err
	}
	return nil
}

// AccountingEnabled reports whether Poll asks sacct: the Client's
// Accounting setting, or for AccountingAuto the cluster's
// AccountingStorageType, asked once.
func (c *Client) AccountingEnabled(ctx context.Context) (bool, error) {
	return c.accountingOn(ctx)
}

func (c *Client) accountingOn(ctx context.Context) (bool, error) {
	switch c.Accounting {
	case AccountingOn:
		return true, nil
	case AccountingOff:
		return false, nil
	}
	cfg, err := c.controllerConfig(ctx)
	if err != nil {
		return false, err
	}
	v := cfg["AccountingStorageType"]
	return v != "" && v != "accounting_storage/none", nil
}

// controllerConfig is scontrol show config's settings, asked once.
func (c *Client) controllerConfig(ctx context.Context) (map[string]string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.config != nil {
		return c.config, nil
	}
	out, err := c.run(ctx, "scontrol", "show", "config")
	if err != nil {
		return nil, unavailable(err)
	}
	c.config = parseConfig(out)
	return c.config, nil
}

// parseConfig reads scontrol show config's "Key = value" lines.
func parseConfig(out []byte) map[string]string {
	cfg := map[string]string{}
	for line := range strings.Lines(string(out)) {
		if k, v, ok := strings.Cut(line, "="); ok {
			cfg[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return cfg
}

// unavailable wraps err in ErrUnavailable, once: a read-only command
// that failed told nothing about the jobs.
func unavailable(err error) error {
	if errors.Is(err, ErrUnavailable) || errors.Is(err, context.Canceled) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrUnavailable, err)
}

// up reports whether the controller answers scontrol ping: it tells a
// command refused by a working cluster from one that could not reach it.
func (c *Client) up(ctx context.Context) bool {
	out, err := c.run(ctx, "scontrol", "ping")
	return err == nil && bytes.Contains(out, []byte(" is UP"))
}

// run runs one command with the Client's environment and timeout and
// returns its stdout. A timeout, or a command that cannot be started, wraps
// ErrUnavailable; a non-zero exit carries the command's stderr.
func (c *Client) run(ctx context.Context, name string, args ...string) ([]byte, error) {
	timeout := c.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	prog := name
	if c.Bin != "" {
		prog = filepath.Join(c.Bin, name)
	}
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Env = append(os.Environ(), c.Env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	if err == nil {
		return stdout.Bytes(), nil
	}
	msg := strings.TrimSpace(stderr.String())
	if i := strings.LastIndexByte(msg, '\n'); i >= 0 {
		msg = msg[i+1:] // the last line says why; the ones before repeat it
	}
	var exit *exec.ExitError
	switch {
	case parent.Err() != nil:
		return nil, fmt.Errorf("%s: %w", name, parent.Err())
	case ctx.Err() != nil:
		return nil, fmt.Errorf("%w: %s: no answer within %v", ErrUnavailable, name, timeout)
	case errors.As(err, &exit):
		return nil, fmt.Errorf("%s: %v: %s", name, err, msg)
	default:
		return nil, fmt.Errorf("%w: %s: %w", ErrUnavailable, name, err)
	}
}
