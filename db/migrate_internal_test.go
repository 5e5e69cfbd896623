package db

import (
	"context"
	"errors"
	"testing"

	"github.com/cascade-sim/cascade"
)

// migrated opens a database in a new directory, lets back take it back
// to an earlier schema, forgets the migrations that match forget (a
// condition on schema_migrations' version) and opens it again, which
// migrates it. The database is closed when t ends.
func migrated(t *testing.T, forget string, back func(d *DB)) *DB {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	d, err := Open(ctx, Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	back(d)
	mustExec(t, d, "DELETE FROM schema_migrations WHERE "+forget)
	d.Close()
	d, err = Open(ctx, Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// mustExec runs a statement on d, failing t if it fails.
func mustExec(t *testing.T, d *DB, sql string) {
	t.Helper()
	if err := d.w.Exec(sql).Error; err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// TestMigration4FillsInDemangledNames: kernels stored before version 4 get
// their demangled names when the database is migrated.
func TestMigration4FillsInDemangledNames(t *testing.T) {
	ctx := context.Background()
	// Back to version 3: no demangled_name column, kernels as they were.
	d := migrated(t, "version >= 4", func(d *DB) {
		if err := d.SaveTrace(ctx, &cascade.Trace{ID: "t", State: cascade.TraceReady, Prompts: []string{}}); err != nil {
			t.Fatal(err)
		}
		d.RollBackTo6(t)
		mustExec(t, d, "INSERT INTO kernels (trace_id, seq, kernel_id, name, trace_file, grid_x, grid_y, grid_z, block_x, block_y, block_z) VALUES "+
			"('t', 0, 1, '_Z6vecAddPdS_S_i', 'kernel-1.trace', 1, 1, 1, 1, 1, 1), ('t', 1, 2, 'plain', 'kernel-2.trace', 1, 1, 1, 1, 1, 1)")
		if err := d.w.Migrator().DropColumn(&kernelV4{}, "DemangledName"); err != nil {
			t.Fatal(err)
		}
	})
	p, err := d.Kernels(ctx, "t", "", cascade.Page{First: cascade.DefaultPageSize})
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
	d := migrated(t, "version >= 5", func(d *DB) {
		d.RollBackTo6(t)
		for _, c := range []string{"SlurmJobID", "SlurmPartition", "SlurmNode", "SlurmState", "SlurmReason"} {
			if err := d.w.Migrator().DropColumn(&runV5{}, c); err != nil {
				t.Fatal(err)
			}
		}
		mustExec(t, d, "INSERT INTO runs (id, seq, trace_id, sim_config, state, executor, kernels_done, kernels_total, history) "+
			"VALUES ('r1', 1, 't', 'SM90_H100', 'RUNNING', 'local', 2, 4, '[]')")
	})
	if v, err := d.SchemaVersion(ctx); err != nil || v < 5 {
		t.Fatalf("schema version %d, %v", v, err)
	}
	r, err := d.Run(ctx, "r1")
	if err != nil || r.Slurm.JobID != nil || r.Slurm.Partition != "" || r.State != "RUNNING" || r.KernelsDone != 2 {
		t.Fatalf("run after migration: %+v, %v", r, err)
	}
}

// TestMigration6AddsSweeps: runs stored before version 6 belong to no
// sweep after the migration, and sweeps can be stored.
func TestMigration6AddsSweeps(t *testing.T) {
	ctx := context.Background()
	d := migrated(t, "version >= 6", func(d *DB) {
		d.RollBackTo6(t)
		m := d.w.Migrator()
		if err := m.DropIndex(&runV6{}, "idx_runs_sweep_id"); err != nil {
			t.Fatal(err)
		}
		if err := m.DropColumn(&runV6{}, "SweepID"); err != nil {
			t.Fatal(err)
		}
		if err := m.DropTable(&sweepV6{}); err != nil {
			t.Fatal(err)
		}
		mustExec(t, d, "INSERT INTO runs (id, seq, trace_id, sim_config, state, executor, kernels_done, kernels_total, history) "+
			"VALUES ('r1', 1, 't', 'SM90_H100', 'SUCCEEDED', 'local', 4, 4, '[]')")
	})
	if v, err := d.SchemaVersion(ctx); err != nil || v != LatestSchemaVersion {
		t.Fatalf("schema version %d, %v", v, err)
	}
	r, err := d.Run(ctx, "r1")
	if err != nil || r.SweepID != nil || r.State != "SUCCEEDED" {
		t.Fatalf("run after migration: %+v, %v", r, err)
	}
	if !d.w.Migrator().HasIndex(&runV6{}, "idx_runs_sweep_id") {
		t.Fatal("no index on runs.sweep_id")
	}
	s := cascade.Sweep{ID: "s", TraceIDs: []string{"t"}, SimConfigs: []string{"SM90_H100"}}
	if err := d.CreateSweep(ctx, &s, nil); err != nil {
		t.Fatal(err)
	}
}

// TestMigrationGap: a database that has a later migration but missed an
// earlier one (a gap) gets the missing one; a version this build does
// not know is refused.
func TestMigrationGap(t *testing.T) {
	m, ok, err := nextMigration([]int{1, 2, 4, 5, 6})
	if err != nil || !ok || m.version != 3 {
		t.Fatalf("next after a gap at 3: %d, %v, %v", m.version, ok, err)
	}
	var all []int // every version, newest first
	for i := len(migrations) - 1; i >= 0; i-- {
		all = append(all, migrations[i].version)
	}
	if _, ok, err := nextMigration(all); ok || err != nil {
		t.Fatalf("all applied: %v, %v", ok, err)
	}
	if _, _, err := nextMigration([]int{1, 99}); !errors.Is(err, ErrSchemaTooNew) {
		t.Fatalf("unknown version: %v", err)
	}

	// On a real database: migration 3 forgotten, its column gone.
	d := migrated(t, "version = 3", func(d *DB) {
		if err := d.w.Migrator().DropColumn(&traceV3{}, "MetadataSum"); err != nil {
			t.Fatal(err)
		}
	})
	if !d.w.Migrator().HasColumn(&traceV3{}, "MetadataSum") {
		t.Fatal("migration 3 was not applied to fill the gap")
	}
}
