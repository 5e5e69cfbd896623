package cascade

import (
	"crypto/rand"
	"encoding/base32"
	"time"
)

// The prefixes of the ids [NewID] mints, one for each kind of row.
const (
	RunIDPrefix   = "r"
	SweepIDPrefix = "s"
	PlanIDPrefix  = "sp"
)

var idEncoding = base32.NewEncoding("0123456789abcdefghjkmnpqrstvwxyz").WithPadding(base32.NoPadding)

// NewID returns a short id, prefix then 16 characters, that sorts by
// creation time (to the millisecond) and is unique with overwhelming
// probability (40 random bits a millisecond): runs', sweeps' and sampling
// plans' ids.
func NewID(prefix string) string {
	b := make([]byte, 10)
	ts := uint64(time.Now().UnixMilli())
	for i := range 5 {
		b[i] = byte(ts >> (8 * (4 - i)))
	}
	rand.Read(b[5:])
	return prefix + idEncoding.EncodeToString(b)
}
