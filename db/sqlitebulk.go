package db

import (
	"errors"
	"fmt"
	"reflect"
	"unsafe"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// The SQLite driver (github.com/glebarez/go-sqlite over modernc.org's
// SQLite) prepares a statement again on every Exec, and matches each
// argument to its parameter by a linear search, so a bulk insert through
// database/sql spends most of its time parsing SQL and binding. sqliteBulk
// goes one level down, to the driver connection's SQLite handle: one
// prepared multi-row INSERT, bound and stepped again and again. It reads
// the handle from the driver's connection by reflection; a driver whose
// connection looks different gets errNoRawSQLite, and the caller goes
// through database/sql instead.

var errNoRawSQLite = errors.New("db: the SQLite driver's connection has no raw handle this build knows")

// rawSQLite is a driver connection's SQLite handle.
type rawSQLite struct {
	db  uintptr
	tls *libc.TLS
}

func rawSQLiteOf(dc any) (rawSQLite, error) {
	v := reflect.ValueOf(dc)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return rawSQLite{}, errNoRawSQLite
	}
	e := v.Elem()
	db, tls := e.FieldByName("db"), e.FieldByName("tls")
	if !db.IsValid() || db.Kind() != reflect.Uintptr || !tls.IsValid() || tls.Type() != reflect.TypeFor[*libc.TLS]() {
		return rawSQLite{}, errNoRawSQLite
	}
	r := rawSQLite{db: uintptr(db.Uint()), tls: (*libc.TLS)(unsafe.Pointer(tls.Pointer()))}
	if r.db == 0 || r.tls == nil {
		return rawSQLite{}, errNoRawSQLite
	}
	return r, nil
}

// autocommit reports whether the connection is outside any transaction.
func (r rawSQLite) autocommit() bool { return sqlite3.Xsqlite3_get_autocommit(r.tls, r.db) != 0 }

func (r rawSQLite) err(rc int32, what string) error {
	return fmt.Errorf("%s: %s (%d)", what, libc.GoString(sqlite3.Xsqlite3_errmsg(r.tls, r.db)), rc)
}

// sqliteBulk inserts kernel rows into one set through prepared
// statements of perStmt rows.
type sqliteBulk struct {
	r       rawSQLite
	set     int64
	perStmt int
	stmts   map[int]uintptr // by rows
	// buf holds the text of one statement's rows, bound SQLITE_STATIC
	// until the step that reads it. It is SQLite's memory, as everything
	// handed to it must be (the race detector's checkptr rejects Go
	// memory passed as an address).
	buf    uintptr
	bufCap int
}

// cmem is n bytes at p, memory of SQLite's allocator, outside Go's heap.
func cmem(p uintptr, n int) []byte { return unsafe.Slice((*byte)(unsafe.Add(nil, p)), n) }

func (b *sqliteBulk) close() {
	for _, s := range b.stmts {
		sqlite3.Xsqlite3_finalize(b.r.tls, s)
	}
	if b.buf != 0 {
		libc.Xfree(b.r.tls, b.buf)
	}
}

func (b *sqliteBulk) stmt(rows int) (uintptr, error) {
	if s, ok := b.stmts[rows]; ok {
		return s, nil
	}
	zSQL, err := libc.CString(insertSQL(b.set, rows))
	if err != nil {
		return 0, err
	}
	defer libc.Xfree(b.r.tls, zSQL)
	pp := libc.Xmalloc(b.r.tls, 8)
	if pp == 0 {
		return 0, errors.New("sqlite bulk insert: out of memory")
	}
	defer libc.Xfree(b.r.tls, pp)
	if rc := sqlite3.Xsqlite3_prepare_v2(b.r.tls, b.r.db, zSQL, -1, pp, 0); rc != sqlite3.SQLITE_OK {
		return 0, b.r.err(rc, "prepare")
	}
	s := *(*uintptr)(unsafe.Add(nil, pp))
	if b.stmts == nil {
		b.stmts = map[int]uintptr{}
	}
	b.stmts[rows] = s
	return s, nil
}

// insert inserts rows.
func (b *sqliteBulk) insert(rows []kernelRow) error {
	for done := 0; done < len(rows); {
		n := min(b.perStmt, len(rows)-done)
		if err := b.exec(rows[done : done+n]); err != nil {
			return err
		}
		done += n
	}
	return nil
}

// exec binds rows to the statement of their number and steps it. Values
// are bound in kernelColumns order after set_id, which the statement
// holds.
func (b *sqliteBulk) exec(rows []kernelRow) error {
	s, err := b.stmt(len(rows))
	if err != nil {
		return err
	}
	text := 0
	for i := range rows {
		r := &rows[i]
		text += len(r.Name) + len(r.DemangledName) + len(r.TraceFile) + 3
		if r.Context != nil {
			text += len(*r.Context) + 1
		}
	}
	if text > b.bufCap {
		if b.buf != 0 {
			libc.Xfree(b.r.tls, b.buf)
		}
		b.bufCap = max(text, 2*b.bufCap)
		if b.buf = libc.Xmalloc(b.r.tls, uint64(b.bufCap)); b.buf == 0 {
			b.bufCap = 0
			return errors.New("sqlite bulk insert: out of memory")
		}
	}
	mem := cmem(b.buf, b.bufCap)
	off := 0
	idx := int32(0)
	var rc int32
	tls := b.r.tls
	bindInt := func(v int64) {
		if idx++; rc == sqlite3.SQLITE_OK {
			rc = sqlite3.Xsqlite3_bind_int64(tls, s, idx, v)
		}
	}
	bindText := func(v string) {
		if idx++; rc != sqlite3.SQLITE_OK {
			return
		}
		copy(mem[off:], v)
		mem[off+len(v)] = 0
		// SQLITE_STATIC: the text stays put until the step below.
		rc = sqlite3.Xsqlite3_bind_text(tls, s, idx, b.buf+uintptr(off), int32(len(v)), 0)
		off += len(v) + 1
	}
	bindNull := func() {
		if idx++; rc == sqlite3.SQLITE_OK {
			rc = sqlite3.Xsqlite3_bind_null(tls, s, idx)
		}
	}
	bindBool := func(v bool) {
		n := int64(0)
		if v {
			n = 1
		}
		bindInt(n)
	}
	for i := range rows {
		rows[i].values(bindInt, bindText, bindBool, bindNull)
	}
	if rc != sqlite3.SQLITE_OK {
		return b.r.err(rc, "bind")
	}
	rc = sqlite3.Xsqlite3_step(tls, s)
	sqlite3.Xsqlite3_reset(tls, s)
	if rc != sqlite3.SQLITE_DONE {
		return b.r.err(rc, "insert")
	}
	return nil
}
