package db

import "context"

// A worker is a goroutine that runs one job each time it is woken. The
// database has two: the checkpointer (checkpoint.go) and the collector of
// retired kernel sets (kernelsets.go). A wake never blocks its caller, and
// wakes that arrive while the job runs fold into one more run after it.
// A nil worker ignores both calls, so a database without one (the
// checkpointer on PostgreSQL) needs no checks at the call sites.
type worker struct {
	wake chan struct{}
	stop context.CancelFunc
	done chan struct{}
}

// startWorker starts job's goroutine. job's context ends at stop; the
// worker runs job once at start.
func startWorker(job func(ctx context.Context)) *worker {
	ctx, cancel := context.WithCancel(context.Background())
	w := &worker{wake: make(chan struct{}, 1), stop: cancel, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for {
			select {
			case <-ctx.Done():
				return
			case <-w.wake:
			}
			job(ctx)
		}
	}()
	w.Wake()
	return w
}

// Wake asks for one more run of the job.
func (w *worker) Wake() {
	if w == nil {
		return
	}
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// Stop ends the job's context and waits for the goroutine. It may be
// called more than once.
func (w *worker) Stop() {
	if w == nil {
		return
	}
	w.stop()
	<-w.done
}
