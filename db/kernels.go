package db

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"gorm.io/gorm"

	"github.com/cascade-sim/cascade"
)

// A trace's kernels are rows of the kernels table in the kernel set the
// trace points at (kernelsets.go); this file maps them to cascade.Kernel
// and reads them a page at a time. kernelingest.go writes them.

// kernelRow is a stored kernel: cascade.Kernel with its set for a trace.
type kernelRow struct {
	SetID         int64 `gorm:"primaryKey;autoIncrement:false"`
	Seq           int   `gorm:"primaryKey;autoIncrement:false"`
	KernelID      int
	Context       *string
	Name          string
	DemangledName string
	TraceFile     string
	GridX         int
	GridY         int
	GridZ         int
	BlockX        int
	BlockY        int
	BlockZ        int
	Instructions  *int64
	Untraced      bool
}

func (kernelRow) TableName() string { return "kernels" }

const kernelColumns = "set_id, seq, kernel_id, context, name, demangled_name, trace_file, grid_x, grid_y, grid_z, block_x, block_y, block_z, instructions, untraced"

var kernelColumnList = strings.Split(kernelColumns, ", ")

// values gives the row's values after set_id, in kernelColumns order, to
// the bulk writers: integer, text, boolean, or NULL for a nil pointer.
func (r *kernelRow) values(integer func(int64), text func(string), boolean func(bool), null func()) {
	integer(int64(r.Seq))
	integer(int64(r.KernelID))
	if r.Context != nil {
		text(*r.Context)
	} else {
		null()
	}
	text(r.Name)
	text(r.DemangledName)
	text(r.TraceFile)
	integer(int64(r.GridX))
	integer(int64(r.GridY))
	integer(int64(r.GridZ))
	integer(int64(r.BlockX))
	integer(int64(r.BlockY))
	integer(int64(r.BlockZ))
	if r.Instructions != nil {
		integer(*r.Instructions)
	} else {
		null()
	}
	boolean(r.Untraced)
}

// rowOf is the row of k, without its set: a chunk's rows are written
// with the set given beside them.
func rowOf(k *cascade.Kernel) kernelRow {
	return kernelRow{
		Seq: k.Seq, KernelID: k.KernelID, Context: k.Context, Name: k.Name, DemangledName: k.DemangledName,
		TraceFile: k.TraceFile, GridX: k.GridX, GridY: k.GridY, GridZ: k.GridZ,
		BlockX: k.BlockX, BlockY: k.BlockY, BlockZ: k.BlockZ, Instructions: k.Instructions, Untraced: k.Untraced,
	}
}

// args is the row's columns after set_id, in kernelColumns order, for
// database/sql.
func (r *kernelRow) args(dst []any) []any {
	var ctx, insts any
	if r.Context != nil {
		ctx = *r.Context
	}
	if r.Instructions != nil {
		insts = *r.Instructions
	}
	return append(dst, int64(r.Seq), int64(r.KernelID), ctx, r.Name, r.DemangledName, r.TraceFile,
		int64(r.GridX), int64(r.GridY), int64(r.GridZ), int64(r.BlockX), int64(r.BlockY), int64(r.BlockZ), insts, r.Untraced)
}

// currentSet is the subquery of the trace's current kernel set id.
func (d *DB) currentSet(ctx context.Context, traceID string) *gorm.DB {
	return d.read(ctx).Model(&cascade.Trace{}).Select("kernel_set_id").Where("id = ?", traceID)
}

// Kernels returns a page of the kernels of the trace with the given id, in
// the tracer's order; with a search text, only those whose mangled or
// demangled name holds it, case-insensitively. It pages in the database: a
// trace with a million kernels costs one page, and, without a search, its
// count one probe of the set's stored count.
func (d *DB) Kernels(ctx context.Context, traceID, search string, p cascade.Page) (cascade.PageOf[cascade.Kernel], error) {
	q := d.read(ctx).Model(&kernelRow{}).Where("set_id = (?)", d.currentSet(ctx, traceID))
	find := func(q *gorm.DB, n int, dst *[]cascade.Kernel) error { return scanKernels(q, traceID, n, dst) }
	if search = strings.TrimSpace(search); search != "" {
		like := "%" + escapeLike(strings.ToLower(search)) + "%"
		q = q.Where("(LOWER(name) LIKE ? ESCAPE '\\' OR LOWER(demangled_name) LIKE ? ESCAPE '\\')", like, like)
		return fetchPageWith(q, p, false, nil, find)
	}
	return fetchPageWith(q, p, false, func() (int64, error) { return d.kernelCount(ctx, traceID) }, find)
}

// KernelRange returns the kernels of the trace whose seq is in [from,
// to), in the tracer's order: a caller that reads a whole list reads it
// a bounded range at a time.
func (d *DB) KernelRange(ctx context.Context, traceID string, from, to int) ([]cascade.Kernel, error) {
	q := d.read(ctx).Model(&kernelRow{}).Where("set_id = (?) AND seq >= ? AND seq < ?", d.currentSet(ctx, traceID), from, to).Order("seq")
	var ks []cascade.Kernel
	err := scanKernels(q, traceID, min(max(to-from, 0), cascade.MaxPageSize), &ks)
	return ks, err
}

// Columns of the kernels table, as scanKernels knows them.
const (
	colOther = iota
	colSeq
	colKernelID
	colContext
	colName
	colDemangledName
	colTraceFile
	colGridX
	colGridY
	colGridZ
	colBlockX
	colBlockY
	colBlockZ
	colInstructions
	colUntraced
)

var kernelColumnIndex = map[string]int{
	"seq": colSeq, "kernel_id": colKernelID, "context": colContext, "name": colName,
	"demangled_name": colDemangledName, "trace_file": colTraceFile,
	"grid_x": colGridX, "grid_y": colGridY, "grid_z": colGridZ,
	"block_x": colBlockX, "block_y": colBlockY, "block_z": colBlockZ,
	"instructions": colInstructions,
	"untraced":     colUntraced,
}

// scanKernels runs q, a SELECT * of at most n kernel rows, and reads them
// into *dst as kernels of traceID, by their columns' names (set_id and any
// column it does not know are skipped). It reads the drivers' values
// directly rather than through GORM's reflection, which cost a page of a
// hundred kernels some 3,000 allocations; GORM still builds and logs the
// statement.
func scanKernels(q *gorm.DB, traceID string, n int, dst *[]cascade.Kernel) error {
	rows, err := q.Rows()
	if err != nil {
		return err
	}
	defer rows.Close()
	names, err := rows.Columns()
	if err != nil {
		return err
	}
	cols := make([]int, len(names))
	vals := make([]any, len(names))
	ptrs := make([]any, len(names))
	for i, name := range names {
		cols[i] = kernelColumnIndex[name]
		ptrs[i] = &vals[i]
	}
	ks := make([]cascade.Kernel, 0, n)
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		k := cascade.Kernel{TraceID: traceID}
		for i, c := range cols {
			v := vals[i]
			switch c {
			case colSeq:
				k.Seq, err = intValue(v)
			case colKernelID:
				k.KernelID, err = intValue(v)
			case colContext:
				k.Context, err = nullString(v)
			case colName:
				k.Name, err = stringValue(v)
			case colDemangledName:
				k.DemangledName, err = stringValue(v)
			case colTraceFile:
				k.TraceFile, err = stringValue(v)
			case colGridX:
				k.GridX, err = intValue(v)
			case colGridY:
				k.GridY, err = intValue(v)
			case colGridZ:
				k.GridZ, err = intValue(v)
			case colBlockX:
				k.BlockX, err = intValue(v)
			case colBlockY:
				k.BlockY, err = intValue(v)
			case colBlockZ:
				k.BlockZ, err = intValue(v)
			case colInstructions:
				if v != nil {
					var i int64
					i, err = int64Value(v)
					k.Instructions = &i
				}
			case colUntraced:
				k.Untraced, err = boolValue(v)
			}
			if err != nil {
				return fmt.Errorf("kernels of trace %q: column %s: %w", traceID, names[i], err)
			}
		}
		ks = append(ks, k)
	}
	*dst = ks
	return rows.Err()
}

// int64Value is an integer column's value as a driver gives it.
func int64Value(v any) (int64, error) {
	switch v := v.(type) {
	case int64:
		return v, nil
	case int32:
		return int64(v), nil
	case int:
		return int64(v), nil
	case []byte:
		return strconv.ParseInt(string(v), 10, 64)
	case string:
		return strconv.ParseInt(v, 10, 64)
	}
	return 0, fmt.Errorf("%T %v is not an integer", v, v)
}

func intValue(v any) (int, error) {
	i, err := int64Value(v)
	return int(i), err
}

// boolValue is a boolean column's value as a driver gives it: a bool
// (PostgreSQL), an integer (SQLite), or text.
func boolValue(v any) (bool, error) {
	switch v := v.(type) {
	case bool:
		return v, nil
	case []byte:
		return strconv.ParseBool(string(v))
	case string:
		return strconv.ParseBool(v)
	}
	i, err := int64Value(v)
	if err != nil {
		return false, fmt.Errorf("%T %v is not a boolean", v, v)
	}
	return i != 0, nil
}

// stringValue is a text column's value as a driver gives it.
func stringValue(v any) (string, error) {
	switch v := v.(type) {
	case string:
		return v, nil
	case []byte:
		return string(v), nil
	}
	return "", fmt.Errorf("%T %v is not text", v, v)
}

func nullString(v any) (*string, error) {
	if v == nil {
		return nil, nil
	}
	s, err := stringValue(v)
	return &s, err
}

// kernelCount is the number of kernels of a trace, stored with its set.
func (d *DB) kernelCount(ctx context.Context, traceID string) (int64, error) {
	var n []int64
	err := d.read(ctx).Model(&kernelSet{}).Where("id = (?)", d.currentSet(ctx, traceID)).Pluck("n", &n).Error
	if err != nil || len(n) == 0 {
		return 0, err
	}
	return n[0], nil
}
