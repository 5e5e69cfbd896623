package db_test

import (
	"github.com/cascade-sim/cascade/db"
	"github.com/cascade-sim/cascade/disk"
	"github.com/cascade-sim/cascade/postproc"
	"github.com/cascade-sim/cascade/samples"
	"github.com/cascade-sim/cascade/sampling/plans"
	"github.com/cascade-sim/cascade/scanner"
)

// *db.DB is the store of the packages that name theirs as an interface:
// these fail to compile when a method drifts from the interface. (The
// in-memory fake, testkit/memstore, is checked in scanner's and
// postproc's tests.)
var (
	_ scanner.Store  = (*db.DB)(nil)
	_ postproc.Store = (*db.DB)(nil)
	_ disk.Store     = (*db.DB)(nil)
	_ samples.Store  = (*db.DB)(nil)
	_ plans.Store    = (*db.DB)(nil)
)
