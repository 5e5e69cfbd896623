package db

import (
	"errors"
	"fmt"
	"reflect"
	"runtime"
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

func (r rawSQLite) err(rc int32, what string) error {
	return fmt.Errorf("%s: %s (%d)", what, libc.GoString(sqlite3.Xsqlite3_errmsg(r.tls, r.db)), rc)
}

// sqliteBulk inserts rows of cols values through prepared statements of
// perStmt rows. Values are int64, string or nil.
type sqliteBulk struct {
	r       rawSQLite
	sql     func(rows int) string
	cols    int
	perStmt int
	stmts   map[int]uintptr // by rows
	// buf holds the text of one statement's rows, bound SQLITE_STATIC:
	// Go heap memory, which does not move, kept alive by b until the step
	// that reads it. pstmt is where prepare writes its statement.
	buf   []byte
	pstmt uintptr
}

func (b *sqliteBulk) close() {
	for _, s := range b.stmts {
		sqlite3.Xsqlite3_finalize(b.r.tls, s)
	}
}

func (b *sqliteBulk) stmt(rows int) (uintptr, error) {
	if s, ok := b.stmts[rows]; ok {
		return s, nil
	}
	zSQL := append([]byte(b.sql(rows)), 0)
	rc := sqlite3.Xsqlite3_prepare_v2(b.r.tls, b.r.db, uintptr(unsafe.Pointer(&zSQL[0])), -1, uintptr(unsafe.Pointer(&b.pstmt)), 0)
	runtime.KeepAlive(zSQL)
	if rc != sqlite3.SQLITE_OK {
		return 0, b.r.err(rc, "prepare")
	}
	s := b.pstmt
	if b.stmts == nil {
		b.stmts = map[int]uintptr{}
	}
	b.stmts[rows] = s
	return s, nil
}

// insert inserts the rows whose values args holds, cols a row.
func (b *sqliteBulk) insert(args []any) error {
	n := len(args) / b.cols
	for done := 0; done < n; {
		rows := min(b.perStmt, n-done)
		if err := b.exec(rows, args[done*b.cols:(done+rows)*b.cols]); err != nil {
			return err
		}
		done += rows
	}
	return nil
}

func (b *sqliteBulk) exec(rows int, args []any) error {
	s, err := b.stmt(rows)
	if err != nil {
		return err
	}
	text := 0
	for _, a := range args {
		if str, ok := a.(string); ok {
			text += len(str) + 1
		}
	}
	if text > len(b.buf) {
		b.buf = make([]byte, max(text, 2*len(b.buf)))
	}
	mem := b.buf
	base := uintptr(unsafe.Pointer(&mem[0]))
	off := 0
	for i, a := range args {
		idx := int32(i + 1)
		var rc int32
		switch v := a.(type) {
		case nil:
			rc = sqlite3.Xsqlite3_bind_null(b.r.tls, s, idx)
		case int64:
			rc = sqlite3.Xsqlite3_bind_int64(b.r.tls, s, idx, v)
		case string:
			copy(mem[off:], v)
			mem[off+len(v)] = 0
			// SQLITE_STATIC: the text stays put until the step below.
			rc = sqlite3.Xsqlite3_bind_text(b.r.tls, s, idx, base+uintptr(off), int32(len(v)), 0)
			off += len(v) + 1
		default:
			return fmt.Errorf("sqlite bulk insert: value %d is a %T", i, a)
		}
		if rc != sqlite3.SQLITE_OK {
			return b.r.err(rc, "bind")
		}
	}
	rc := sqlite3.Xsqlite3_step(b.r.tls, s)
	runtime.KeepAlive(mem)
	sqlite3.Xsqlite3_reset(b.r.tls, s)
	if rc != sqlite3.SQLITE_DONE {
		return b.r.err(rc, "insert")
	}
	return nil
}
