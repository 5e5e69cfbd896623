package db

import (
	"context"
	"testing"
)

// TestMigration4FillsInDemangledNames: kernels stored before version 4 get
// their demangled names when the database is migrated.
func TestMigration4FillsInDemangledNames(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	d, err := Open(ctx, Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	// Back to version 3: no demangled_name column, kernels as they were.
	err = d.w.Exec("INSERT INTO kernels (trace_id, seq, kernel_id, name, trace_file, grid_x, grid_y, grid_z, block_x, block_y, block_z) VALUES " +
		"('t', 0, 1, '_Z6vecAddPdS_S_i', 'kernel-1.trace', 1, 1, 1, 1, 1, 1), ('t', 1, 2, 'plain', 'kernel-2.trace', 1, 1, 1, 1, 1, 1)").Error
	if err != nil {
		t.Fatal(err)
	}
	if err := d.w.Migrator().DropColumn(&kernelV4{}, "DemangledName"); err != nil {
		t.Fatal(err)
	}
	if err := d.w.Exec("DELETE FROM schema_migrations WHERE version >= 4").Error; err != nil {
		t.Fatal(err)
	}
	d.Close()

	d, err = Open(ctx, Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	p, err := d.Kernels(ctx, "t", "", Page{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Items) != 2 || p.Items[0].DemangledName != "vecAdd(double*, double*, double*, int)" || p.Items[1].DemangledName != "" {
		t.Fatalf("kernels after migration: %+v", p.Items)
	}
}

// TestMigration5AddsSlurmJob: runs stored before version 5 have no Slurm
// job after the migration, and keep everything else.
func TestMigration5AddsSlurmJob(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	d, err := Open(ctx, Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"SlurmJobID", "SlurmPartition", "SlurmNode", "SlurmState", "SlurmReason"} {
		if err := d.w.Migrator().DropColumn(&runV5{}, c); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.w.Exec("DELETE FROM schema_migrations WHERE version >= 5").Error; err != nil {
		t.Fatal(err)
	}
	err = d.w.Exec("INSERT INTO runs (id, seq, trace_id, sim_config, state, executor, kernels_done, kernels_total, history) " +
		"VALUES ('r1', 1, 't', 'SM90_H100', 'RUNNING', 'local', 2, 4, '[]')").Error
	if err != nil {
		t.Fatal(err)
	}
	d.Close()

	d, err = Open(ctx, Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if v, err := d.SchemaVersion(ctx); err != nil || v < 5 {
		t.Fatalf("schema version %d, %v", v, err)
	}
	r, err := d.Run(ctx, "r1")
	if err != nil || r.Slurm.JobID != nil || r.Slurm.Partition != "" || r.State != "RUNNING" || r.KernelsDone != 2 {
		t.Fatalf("run after migration: %+v, %v", r, err)
	}
}
