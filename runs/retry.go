package runs

import (
	"context"
	"errors"
	"time"
)

// retryPolicy is how finish tries again when the database fails: waits
// from first, doubling up to most, and how long it goes on storing a
// run's kernel results before the run fails for them.
type retryPolicy struct {
	first, most, kernels time.Duration
}

// finishRetry is a Manager's retryPolicy (tests shorten theirs).
var finishRetry = retryPolicy{first: 250 * time.Millisecond, most: 10 * time.Second, kernels: 2 * time.Minute}

// errPermanent wraps an error retry must not try again after.
type errPermanent struct{ err error }

func (e errPermanent) Error() string { return e.err.Error() }
func (e errPermanent) Unwrap() error { return e.err }

// retry calls fn until it succeeds, returns an errPermanent, ctx ends, or,
// when budget > 0, budget has passed; each failure is logged with what
// was being done. It returns fn's last error (unwrapped from
// errPermanent), or ctx's.
func (m *Manager) retry(ctx context.Context, what, id string, budget time.Duration, fn func() error) error {
	start, wait := time.Now(), m.retryPolicy.first
	for try := 1; ; try++ {
		err := fn()
		if err == nil {
			if try > 1 {
				m.log.Info(what+": done after failures", "run", id, "tries", try)
			}
			return nil
		}
		var perm errPermanent
		if errors.As(err, &perm) {
			return perm.err
		}
		if ctx.Err() != nil {
			return err
		}
		if budget > 0 && time.Since(start)+wait > budget {
			m.log.Error(what+": giving up", "run", id, "tries", try, "err", err)
			return err
		}
		m.log.Warn(what+": failed, trying again", "run", id, "try", try, "in", wait, "err", err)
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait = min(2*wait, m.retryPolicy.most)
	}
}
