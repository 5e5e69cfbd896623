package db

import (
	"slices"
	"testing"
)

// TestMigration11CreatesSamplingTables: a database at version 9 gets the
// sampling tables when it opens.
func TestMigration11CreatesSamplingTables(t *testing.T) {
	d := migrated(t, "version = 11", func(d *DB) {
		if err := d.w.Migrator().DropTable(&samplingStratumV11{}, &samplingPlanV11{}); err != nil {
			t.Fatal(err)
		}
	})
	for _, tbl := range []any{&samplingPlanV11{}, &samplingStratumV11{}} {
		if !d.w.Migrator().HasTable(tbl) {
			t.Fatalf("no table of %T after migration 11", tbl)
		}
	}
	if !d.w.Migrator().HasIndex(&samplingPlanV11{}, "idx_sampling_plans_trace_id") {
		t.Fatal("no index of sampling plans by trace")
	}
}

// TestMembersEncoding: members round-trip in about a byte each when
// close, and what is not ascending, or not an encoding, is refused.
func TestMembersEncoding(t *testing.T) {
	members := []int32{0, 1, 2, 3, 200, 70000, 1<<31 - 1}
	b, err := encodeMembers(members)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != 1+1+1+1+2+3+5 {
		t.Fatalf("%d bytes for %v", len(b), members)
	}
	got, err := decodeMembers(b, len(members))
	if err != nil || !slices.Equal(got, members) {
		t.Fatalf("decoded %v, %v", got, err)
	}
	for _, bad := range [][]int32{{3, 3}, {5, 2}, {-1}} {
		if _, err := encodeMembers(bad); err == nil {
			t.Fatalf("encoded %v", bad)
		}
	}
	if _, err := decodeMembers(b, len(members)+1); err == nil {
		t.Fatal("decoded more members than the size says")
	}
	if _, err := decodeMembers([]byte{4, 0}, 2); err == nil {
		t.Fatal("decoded a member twice")
	}
	if _, err := decodeMembers([]byte{0x80}, 1); err == nil {
		t.Fatal("decoded a truncated varint")
	}
	if _, err := decodeMembers(append(b, 1), len(members)+1); err == nil {
		t.Fatal("decoded a position past 2^31-1")
	}
}
