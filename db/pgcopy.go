package db

import (
	"encoding/binary"
	"io"
)

// copyKernelsSQL is the COPY that copyReader's stream feeds.
const copyKernelsSQL = "COPY kernels (" + kernelColumns + ") FROM STDIN (FORMAT binary)"

// copyReader is a chunk of kernel rows in PostgreSQL's binary COPY
// format, encoded as it is read, a few hundred rows at a time. It writes
// the format directly rather than through pgx's CopyFrom, which looks up
// an encoder for each of a million rows' fourteen values and boxes each
// into an interface first. Every integer column is bigint (GORM's int).
type copyReader struct {
	set  int64
	rows []kernelRow
	next int    // the next row to encode
	buf  []byte // encoded, not yet read from off
	off  int
	head bool // the header is encoded
	tail bool // the trailer is encoded
}

// copyHeader is the binary format's signature, flags and extension length.
var copyHeader = []byte("PGCOPY\n\xff\r\n\x00\x00\x00\x00\x00\x00\x00\x00\x00")

func (r *copyReader) Read(p []byte) (int, error) {
	for r.off == len(r.buf) {
		if r.tail {
			return 0, io.EOF
		}
		r.fill()
	}
	n := copy(p, r.buf[r.off:])
	r.off += n
	return n, nil
}

// fill encodes the next rows, or the trailer after the last.
func (r *copyReader) fill() {
	b := r.buf[:0]
	r.off = 0
	if !r.head {
		b, r.head = append(b, copyHeader...), true
	}
	for end := min(len(r.rows), r.next+256); r.next < end; r.next++ {
		b = r.rows[r.next].appendCopy(b, r.set)
	}
	if r.next == len(r.rows) {
		b, r.tail = binary.BigEndian.AppendUint16(b, 0xffff), true // -1 fields: the end
	}
	r.buf = b
}

// appendCopy appends the row as a binary COPY tuple, in kernelColumns order.
func (k *kernelRow) appendCopy(b []byte, set int64) []byte {
	b = binary.BigEndian.AppendUint16(b, uint16(len(kernelColumnList)))
	i8 := func(v int64) { b = binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint32(b, 8), uint64(v)) }
	text := func(s string) { b = append(binary.BigEndian.AppendUint32(b, uint32(len(s))), s...) }
	null := func() { b = binary.BigEndian.AppendUint32(b, 0xffffffff) } // length -1
	boolean := func(v bool) {
		c := byte(0)
		if v {
			c = 1
		}
		b = append(binary.BigEndian.AppendUint32(b, 1), c)
	}
	i8(set)
	k.values(i8, text, boolean, null)
	return b
}
