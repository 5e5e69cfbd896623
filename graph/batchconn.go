package graph

import (
	"bufio"
	"net"
	"net/http"
	"sync"
	"time"
)

// batchConn is the connection under a websocket. Between begin and flush
// the frames written to it collect in a buffer and go out in one write:
// a writer that finds several messages queued for a client sends them
// with one system call rather than one each. Outside a batch it writes
// through. Writes are serialised by the websocket library.
type batchConn struct {
	net.Conn
	mu       sync.Mutex
	batching bool
	buf      []byte
}

// maxBatchBytes ends a batch early, so one write never holds much more.
const maxBatchBytes = 256 << 10

func (b *batchConn) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.batching {
		b.buf = append(b.buf, p...)
		return len(p), nil
	}
	return b.Conn.Write(p)
}

// begin starts collecting writes.
func (b *batchConn) begin() {
	b.mu.Lock()
	b.batching = true
	b.mu.Unlock()
}

// full reports whether the batch should be flushed now.
func (b *batchConn) full() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.buf) >= maxBatchBytes
}

// flush writes what was collected, giving up at deadline, and writes
// through again.
func (b *batchConn) flush(deadline time.Time) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.batching = false
	if len(b.buf) == 0 {
		return nil
	}
	b.Conn.SetWriteDeadline(deadline)
	_, err := b.Conn.Write(b.buf)
	if cap(b.buf) > 2*maxBatchBytes {
		b.buf = nil // a burst's buffer is not kept for an idle client
	} else {
		b.buf = b.buf[:0]
	}
	return err
}

// CloseWrite half-closes a TCP connection: the peer reads what was sent,
// then the end.
func (b *batchConn) CloseWrite() error {
	if cw, ok := b.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return b.Conn.Close()
}

// batchHijacker hands the websocket library a batchConn when it hijacks
// the connection.
type batchHijacker struct {
	http.ResponseWriter
	conn *batchConn
}

func (h *batchHijacker) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, brw, err := http.NewResponseController(h.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	h.conn = &batchConn{Conn: c}
	return h.conn, brw, nil
}
