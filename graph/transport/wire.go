package transport

import (
	"bufio"
	"net"
	"net/http"
	"sync"
	"syscall"
	"time"
)

// wire is the connection under a websocket. Past the handshake the
// websocket library writes to it only control frames (a pong, the close
// frame answering the client's, a protocol error's): those join the
// connection's send queue behind the messages, so the queue's writer is
// the socket's only writer and no frame is ever cut by another. Write
// deadlines are the writer's: the library's are ignored.
type wire struct {
	net.Conn
	raw syscall.RawConn // for writes that must not wait; nil if the conn has none

	mu sync.Mutex
	c  *gorillaConn // nil during the handshake: writes go straight out
}

func (w *wire) attach(c *gorillaConn) {
	w.mu.Lock()
	w.c = c
	w.mu.Unlock()
}

func (w *wire) Write(p []byte) (int, error) {
	w.mu.Lock()
	c := w.c
	w.mu.Unlock()
	if c == nil {
		return w.Conn.Write(p)
	}
	if err := c.queueFrame(p); err != nil {
		return 0, err
	}
	c.flush()
	return len(p), nil
}

func (w *wire) SetWriteDeadline(t time.Time) error {
	w.mu.Lock()
	c := w.c
	w.mu.Unlock()
	if c == nil {
		return w.Conn.SetWriteDeadline(t)
	}
	return nil
}

func (w *wire) SetDeadline(t time.Time) error {
	w.mu.Lock()
	c := w.c
	w.mu.Unlock()
	if c == nil {
		return w.Conn.SetDeadline(t)
	}
	return w.Conn.SetReadDeadline(t)
}

// tryWrite writes what the socket takes at once, without waiting: n bytes
// went out, and blocked says the socket took no more (or failed; the
// writer goroutine then finds out how).
func (w *wire) tryWrite(p []byte) (n int, blocked bool) {
	if w.raw == nil {
		return 0, true
	}
	return nonblockingWrite(w.raw, p)
}

// CloseWrite half-closes a TCP connection: the peer reads what was sent,
// then the end.
func (w *wire) CloseWrite() error {
	if cw, ok := w.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return w.Conn.Close()
}

// wireHijacker hands the websocket library a wire when it hijacks the
// connection.
type wireHijacker struct {
	http.ResponseWriter
	conn *wire
}

func (h *wireHijacker) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, brw, err := http.NewResponseController(h.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	h.conn = &wire{Conn: c}
	if sc, ok := c.(syscall.Conn); ok {
		if raw, err := sc.SyscallConn(); err == nil {
			h.conn.raw = raw
		}
	}
	return h.conn, brw, nil
}

// Websocket frames, as a server sends them (never masked).
const (
	opText  = 0x1
	opClose = 0x8
	finBit  = 0x80
)

// appendFrameHeader appends the header of an unfragmented frame with a
// payload of n bytes.
func appendFrameHeader(b []byte, op byte, n int) []byte {
	switch {
	case n < 126:
		return append(b, finBit|op, byte(n))
	case n <= 0xffff:
		return append(b, finBit|op, 126, byte(n>>8), byte(n))
	default:
		return append(b, finBit|op, 127, byte(n>>56), byte(n>>48), byte(n>>40), byte(n>>32), byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
}

// frameEnd is where the frame that holds b[off] ends, or off when a frame
// starts there (b holds whole frames from its start).
func frameEnd(b []byte, off int) int {
	for i := 0; i < len(b); {
		if i >= off {
			return i
		}
		h, n := 2, int(b[i+1]&0x7f)
		switch n {
		case 126:
			h, n = 4, int(b[i+2])<<8|int(b[i+3])
		case 127:
			h, n = 10, 0
			for _, x := range b[i+2 : i+10] {
				n = n<<8 | int(x)
			}
		}
		i += h + n
		if i > off {
			return i
		}
	}
	return len(b)
}
