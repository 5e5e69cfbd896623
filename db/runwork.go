package db

import (
	"context"
	"fmt"

	"github.com/cascade-sim/cascade"
)

// RunWork returns the last recent SUCCEEDED runs of the config simConfig
// that ran a simulator process and recorded its wall time, newest first,
// each with the warp instructions it simulated: its stored kernels'
// instruction counts in its trace's current kernel list (matched by
// kernel id and context). A sampled run (its segments ran the processes)
// and a run that reused another's results are left out.
func (d *DB) RunWork(ctx context.Context, simConfig string, recent int) ([]cascade.RunWork, error) {
	var rs []cascade.Run
	err := d.read(ctx).Where("sim_config = ? AND state = ? AND wall_seconds > 0 AND same_as_id IS NULL AND sampling IS NULL",
		simConfig, cascade.RunSucceeded).Order("seq DESC").Limit(max(1, recent)).Find(&rs).Error
	if err != nil || len(rs) == 0 {
		return nil, err
	}
	ids := make([]string, len(rs))
	for i := range rs {
		ids[i] = rs[i].ID
	}
	var sums []struct {
		RunID        string
		Kernels      int
		Counted      int
		Instructions int64
	}
	err = d.read(ctx).Table("run_kernels AS rk").
		Select("rk.run_id AS run_id, COUNT(*) AS kernels, COUNT(k.instructions) AS counted, COALESCE(SUM(k.instructions), 0) AS instructions").
		Joins("JOIN runs AS r ON r.id = rk.run_id").
		Joins("LEFT JOIN kernels AS k ON k.set_id = (SELECT t.kernel_set_id FROM traces AS t WHERE t.id = r.trace_id) AND k.kernel_id = rk.kernel_id AND COALESCE(k.context, '') = COALESCE(rk.context, '')").
		Where("rk.run_id IN ?", ids).Group("rk.run_id").Scan(&sums).Error
	if err != nil {
		return nil, fmt.Errorf("instructions of runs of %s: %w", simConfig, err)
	}
	out := make([]cascade.RunWork, len(rs))
	at := make(map[string]int, len(rs))
	for i := range rs {
		out[i].Run, at[rs[i].ID] = rs[i], i
	}
	for _, s := range sums {
		w := &out[at[s.RunID]]
		w.Kernels, w.Counted, w.Instructions = s.Kernels, s.Counted, s.Instructions
	}
	return out, nil
}
