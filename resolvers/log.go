package resolvers

import (
	"context"
	"errors"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/events"
	"github.com/cascade-sim/cascade/graph/model"
)

// tailLog streams a log file: what it holds now, then each batch of new
// lines after the broker's nudge that it grew. A nudge subscription the
// broker drops for lagging is renewed here: the lines come from the file,
// from an offset, so a lost nudge loses nothing and the client never has
// to start the log again.
func tailLog(ctx context.Context, b *events.Broker, kind, id string, t cascade.LogTail) <-chan *model.LogChunk {
	key := cascade.LogGrew{Kind: kind, ID: id}.Key()
	match := func(e cascade.Event) bool { return e.Key() == key }
	// Subscribe before the first read, so no nudge falls between them.
	sub := b.Subscribe(ctx, match)
	out := make(chan *model.LogChunk)
	go func() {
		defer close(out)
		for {
			lines, err := t.Next()
			if err == nil && len(lines) > 0 {
				select {
				case out <- &model.LogChunk{Lines: lines}:
				case <-ctx.Done():
					return
				}
			}
			if _, err := sub.Next(ctx); errors.Is(err, events.ErrTooSlow) {
				sub = b.Subscribe(ctx, match) // then read what the lost nudges announced
			} else if err != nil {
				return
			}
		}
	}()
	return out
}
