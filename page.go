package cascade

import (
	"encoding/base64"
	"strconv"
	"strings"
)

// Page asks for up to First items after the item whose cursor is After.
// A First of 0 asks for none: a page of no items, with its Total (when
// Count) and HasNext, which is how a client asks for a count alone. The
// API's connections ask for DefaultPageSize when a query gives no first.
type Page struct {
	First int
	After string
	// Count asks for PageOf.Total. Counting may read every matching row,
	// so only callers that show the total ask for it.
	Count bool
}

// Page sizes: the size of a page a query asks for without first, and the
// largest page served (a larger First is served this many).
const (
	DefaultPageSize = 50
	MaxPageSize     = 5000
)

// Limit is the number of items p asks for: First, at most MaxPageSize, or
// a BAD_USER_INPUT error for a negative First.
func (p Page) Limit() (int, error) {
	switch {
	case p.First < 0:
		return 0, Errorf(EINVALID, "first: must not be negative, got %d", p.First)
	case p.First > MaxPageSize:
		return MaxPageSize, nil
	}
	return p.First, nil
}

// Cursor is the opaque cursor of the item at position seq. A page of
// kernels makes a hundred of them, so it costs one allocation, the string.
func Cursor(seq int64) string {
	var raw [32]byte
	b := strconv.AppendInt(append(raw[:0], "seq:"...), seq, 10)
	var enc [48]byte
	n := base64.RawURLEncoding.EncodedLen(len(b))
	base64.RawURLEncoding.Encode(enc[:n], b)
	return string(enc[:n])
}

// ParseCursor returns the position a Cursor names; ok is false for "".
// Anything else that is not a cursor is a BAD_USER_INPUT error.
func ParseCursor(c string) (seq int64, ok bool, err error) {
	if c == "" {
		return 0, false, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err == nil {
		if s, ok := strings.CutPrefix(string(b), "seq:"); ok {
			if n, err := strconv.ParseInt(s, 10, 64); err == nil {
				return n, true, nil
			}
		}
	}
	return 0, false, Errorf(EINVALID, "after: %q is not a cursor from this API", c)
}

// PageOf is one page of a listing.
type PageOf[T any] struct {
	Items   []T
	Total   int64 // matching items in all pages; 0 unless Page.Count
	HasNext bool
}

// TraceFilter narrows a trace listing.
type TraceFilter struct {
	State  TraceState // "" for any
	Search string     // case-insensitive substring of id or model
}

// RunFilter narrows a run listing.
type RunFilter struct {
	TraceID string   // "" for any
	State   RunState // "" for any
	SweepID string   // "" for any
	// FailureClass is "" for any.
	FailureClass FailureClass
	// Segments lists the segments of sampled and split runs too (Run.SampledByID);
	// they are left out without it.
	Segments bool
}
