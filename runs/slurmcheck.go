package runs

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/cascade-sim/cascade"
)

// fsKind says who can see a filesystem.
type fsKind int

const (
	fsUnknown fsKind = iota
	fsShared         // a network or cluster filesystem
	fsLocal          // a disk of this machine
	fsMemory         // memory, or a container's own layer: this machine only
)

func fmtMagic(m int64) string { return fmt.Sprintf("filesystem type %#x", m) }

// ExecutorStatus is the executor's health: the Slurm executor is unhealthy
// while Slurm's commands fail or time out. The local one is always healthy.
func (m *Manager) ExecutorStatus() cascade.ExecutorStatus {
	if m.slurm == nil {
		return cascade.ExecutorStatus{Kind: m.cfg.Executor.Name(), Healthy: true}
	}
	return m.slurm.Status()
}

// CheckExecutor checks, at start, what the executor needs and says what
// it found, one line each. For Slurm: the commands are there (an error
// when sbatch, squeue, scancel or scontrol is missing), the controller
// answers, whether the cluster keeps accounting (sacct), and whether the
// directories jobs read and write are on a filesystem the compute nodes
// can share. A controller that does not answer is no error: the executor
// is unhealthy until it does.
func (m *Manager) CheckExecutor(ctx context.Context) ([]string, error) {
	if m.slurm == nil {
		return nil, nil
	}
	return m.slurm.check(ctx)
}

func (s *slurmExec) check(ctx context.Context) ([]string, error) {
	var lines []string
	var missing []string
	for _, name := range []string{"sbatch", "squeue", "scancel", "scontrol", "sacct"} {
		prog := name
		if s.c.Bin != "" {
			prog = filepath.Join(s.c.Bin, name)
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
		if s.c.Bin != "" {
			where = "in " + s.c.Bin
		}
		return lines, fmt.Errorf("CASCADE_EXECUTOR=slurm, but Slurm's %s %s not found %s (install Slurm's client commands, or set CASCADE_SLURM_BIN)",
			strings.Join(missing, ", "), map[bool]string{true: "is", false: "are"}[len(missing) == 1], where)
	}
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	acct, err := s.c.AccountingEnabled(ctx)
	switch {
	case err != nil:
		lines = append(lines, fmt.Sprintf("Slurm: the controller does not answer (%v): runs stay queued, and running ones keep their state, until it does; Cascade polls every %v", err, s.interval))
		s.unavailable(err)
	case acct:
		s.info = "Accounting is on: sacct tells how jobs squeue has forgotten ended."
		lines = append(lines, fmt.Sprintf("Slurm: the controller answers; accounting is on (slurmdbd): sacct tells how jobs squeue has forgotten ended; one squeue call every %v polls every run", s.interval))
	default:
		s.info = "No accounting: a job squeue forgets while Cascade is not polling is reported lost."
		lines = append(lines, fmt.Sprintf("Slurm: the controller answers; no accounting (AccountingStorageType=accounting_storage/none): squeue alone is polled, every %v, and a job it forgets while Cascade is down (after MinJobAge) is reported lost", s.interval))
	}
	if s.info != "" {
		s.mu.Lock()
		if s.status.Healthy {
			s.status.Message = &s.info
		}
		s.mu.Unlock()
	}
	return append(lines, s.checkShared()...), nil
}

// checkShared says whether the directories a job reads and writes (the
// runs' work directories, the traces, the configs, the simulator) are on
// filesystems compute nodes can share.
func (s *slurmExec) checkShared() []string {
	m := s.m
	dirs := []struct{ what, path string }{
		{"run directories", filepath.Join(m.cfg.WorkDir, "runs")},
		{"traces", m.cfg.BucketDir},
		{"sim configs", m.cfg.ConfigsDir},
		{"trace configs", m.cfg.TraceConfigsDir},
	}
	var lines []string
	if len(s.cfg.Command) > 0 {
		if cmd := s.cfg.Command[0]; filepath.IsAbs(cmd) {
			dirs = append(dirs, struct{ what, path string }{"simulator", filepath.Dir(cmd)})
		} else {
			lines = append(lines, fmt.Sprintf("Slurm: the simulator %q is looked up on the compute node's PATH", cmd))
		}
	}
	for _, d := range dirs {
		if d.path == "" {
			continue
		}
		name, kind, err := fsType(nearestExisting(d.path))
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
			if strings.HasPrefix(d.path+"/", tmp+"/") {
				verdict += "; it is under " + tmp + ", which is each node's own on most clusters"
			}
		}
		lines = append(lines, fmt.Sprintf("Slurm: %s %s: %s", d.what, d.path, verdict))
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
