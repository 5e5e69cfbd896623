package slurmexec

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/runs"
)

// Status implements [runs.Executor]: unhealthy while Slurm's commands
// fail or time out, with a message saying since when.
func (e *Executor) Status() cascade.ExecutorStatus {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.status
}

func (e *Executor) unavailable(err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.unavailableLocked(err)
}

func (e *Executor) unavailableLocked(err error) {
	was := e.status
	if was.Healthy {
		e.since = time.Now()
		e.log.Warn("Slurm is not answering; runs keep their state and polling goes on", "err", err, "interval", e.interval)
	}
	msg := fmt.Sprintf("Slurm has not answered since %s: %v. Runs keep their state; Cascade tries again every %v.",
		e.since.Format("15:04:05"), err, e.interval)
	e.status = cascade.ExecutorStatus{Kind: "slurm", Healthy: false, Message: &msg}
	if was.Healthy || cascade.Deref(was.Message) != msg {
		e.host.StatusChanged(e.status)
	}
}

func (e *Executor) available() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.status.Healthy {
		return
	}
	if e.info == "" {
		// The start could not ask whether the cluster keeps accounting;
		// Poll asks when it needs to, and the answer is cached.
		e.info = "Slurm answers."
	}
	e.log.Info("Slurm answers again", "down for", time.Since(e.since).Round(time.Second))
	e.status = cascade.ExecutorStatus{Kind: "slurm", Healthy: true}
	if e.info != "" {
		e.status.Message = &e.info
	}
	e.host.StatusChanged(e.status)
}

// probe asks Slurm whether it answers, with one squeue call.
func (e *Executor) probe(ctx context.Context) {
	if _, err := e.c.Queue(ctx); err != nil {
		if ctx.Err() == nil {
			e.unavailable(err)
		}
		return
	}
	e.available()
}

// Check implements [runs.Executor]: Slurm's commands are there (an error
// when sbatch, squeue, scancel or scontrol is missing), the controller
// answers, whether the cluster keeps accounting (sacct), and whether the
// directories jobs read and write, and the simulator, are on a
// filesystem the compute nodes can share. A controller that does not
// answer is no error: the executor is unhealthy until it does.
func (e *Executor) Check(ctx context.Context, dirs []runs.Dir) ([]string, error) {
	var lines []string
	var missing []string
	for _, name := range []string{"sbatch", "squeue", "scancel", "scontrol", "sacct"} {
		prog := name
		if e.c.Bin != "" {
			prog = filepath.Join(e.c.Bin, name)
		}
		if _, err := exec.LookPath(prog); err != nil {
			if name == "sacct" {
				lines = append(lines, "Slurm: no sacct command: jobs squeue has forgotten are not looked up")
				continue
			}
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		where := "on PATH"
		if e.c.Bin != "" {
			where = "in " + e.c.Bin
		}
		return lines, fmt.Errorf("CASCADE_EXECUTOR=slurm, but Slurm's %s %s not found %s (install Slurm's client commands, or set CASCADE_SLURM_BIN)",
			strings.Join(missing, ", "), map[bool]string{true: "is", false: "are"}[len(missing) == 1], where)
	}
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	acct, err := e.c.AccountingEnabled(ctx)
	switch {
	case err != nil:
		lines = append(lines, fmt.Sprintf("Slurm: the controller does not answer (%v): runs stay queued, and running ones keep their state, until it does; Cascade polls every %v", err, e.interval))
		e.unavailable(err)
	case acct:
		e.info = "Accounting is on: sacct tells how jobs squeue has forgotten ended."
		lines = append(lines, fmt.Sprintf("Slurm: the controller answers; accounting is on (slurmdbd): sacct tells how jobs squeue has forgotten ended; one squeue call every %v polls every run", e.interval))
	default:
		e.info = "No accounting: a job squeue forgets while Cascade is not polling is reported lost."
		lines = append(lines, fmt.Sprintf("Slurm: the controller answers; no accounting (AccountingStorageType=accounting_storage/none): squeue alone is polled, every %v, and a job it forgets while Cascade is down (after MinJobAge) is reported lost", e.interval))
	}
	if e.info != "" {
		e.mu.Lock()
		if e.status.Healthy {
			e.status.Message = &e.info
		}
		e.mu.Unlock()
	}
	return append(lines, e.checkShared(dirs)...), nil
}

// checkShared says whether the directories a job reads and writes (the
// runs' work directories, the traces, the configs: dirs; and the
// simulator's) are on filesystems compute nodes can share.
func (e *Executor) checkShared(dirs []runs.Dir) []string {
	dirs = slices.Clone(dirs)
	var lines []string
	if len(e.cfg.Command) > 0 {
		if cmd := e.cfg.Command[0]; filepath.IsAbs(cmd) {
			dirs = append(dirs, runs.Dir{What: "simulator", Path: filepath.Dir(cmd)})
		} else {
			lines = append(lines, fmt.Sprintf("Slurm: the simulator %q is looked up on the compute node's PATH", cmd))
		}
	}
	for _, d := range dirs {
		if d.Path == "" {
			continue
		}
		name, kind, err := fsType(nearestExisting(d.Path))
		var verdict string
		switch {
		case err != nil:
			verdict = fmt.Sprintf("cannot tell its filesystem (%v); the compute nodes must see it at the same path", err)
		case kind == fsShared:
			verdict = fmt.Sprintf("on %s, shared: the compute nodes must mount it at the same path", name)
		case kind == fsMemory:
			verdict = fmt.Sprintf("WARNING: on %s, which only this machine sees: no compute node can read it, so jobs fail; put it on the filesystem the nodes share", name)
		case kind == fsLocal:
			verdict = fmt.Sprintf("on %s, a disk of this machine: jobs work only on nodes that mount it at the same path (a one-node cluster, or an export)", name)
		default:
			verdict = fmt.Sprintf("on %s, which Cascade cannot classify; the compute nodes must see it at the same path", name)
		}
		for _, tmp := range []string{"/tmp", "/var/tmp", "/dev/shm"} {
			if strings.HasPrefix(d.Path+"/", tmp+"/") {
				verdict += "; it is under " + tmp + ", which is each node's own on most clusters"
			}
		}
		lines = append(lines, fmt.Sprintf("Slurm: %s %s: %s", d.What, d.Path, verdict))
	}
	return lines
}

// nearestExisting is path, or its nearest ancestor that exists.
func nearestExisting(path string) string {
	for p := path; ; p = filepath.Dir(p) {
		if _, _, err := fsType(p); err == nil || p == filepath.Dir(p) {
			return p
		}
	}
}

// fsKind says who can see a filesystem.
type fsKind int

const (
	fsUnknown fsKind = iota
	fsShared         // a network or cluster filesystem
	fsLocal          // a disk of this machine
	fsMemory         // memory, or a container's own layer: this machine only
)

func fmtMagic(m int64) string { return fmt.Sprintf("filesystem type %#x", m) }
