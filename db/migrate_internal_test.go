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
	if err := d.w.Exec("DELETE FROM schema_migrations WHERE version = 4").Error; err != nil {
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
