package servertests_test

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/cascade-sim/cascade/app"
	"github.com/cascade-sim/cascade/testkit/servertest"
)

// BenchmarkLastFileToSubscriber measures the time from a trace's last file
// landing (metadata.json with a files list, renamed into place) to a
// websocket subscriber receiving its new state, on a server with the
// default 2 s scan interval: the latency comes from fsnotify, not polling.
//
//	go test ./scanner -run '^$' -bench LastFileToSubscriber -benchtime 200x
func BenchmarkLastFileToSubscriber(b *testing.B) {
	s := servertest.Server(b, func(c *app.Config) { c.ScanInterval = 2 * time.Second })
	sub := s.Subscribe(b, "graphql-transport-ws", `subscription { traceUpdated { id state } }`, nil)
	files := perContextTraceFiles()
	var lat []time.Duration
	i := 0
	for b.Loop() {
		id := fmt.Sprintf("bench-%d", i)
		i++
		b.StopTimer()
		for _, f := range files {
			s.WriteFile(b, id, f.path, []byte(f.data))
		}
		meta := []byte(`{"files": [`)
		for j, f := range files {
			if j > 0 {
				meta = append(meta, ',')
			}
			meta = fmt.Appendf(meta, `{"path": %q, "size": %d}`, f.path, len(f.data))
		}
		meta = append(meta, "]}"...)
		drain(b, sub, id, "UPLOADING")
		b.StartTimer()
		start := time.Now()
		s.WriteFile(b, id, "metadata.json", meta)
		drainNot(b, sub, id, "UPLOADING")
		lat = append(lat, time.Since(start))
	}
	sort.Slice(lat, func(a, c int) bool { return lat[a] < lat[c] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "ms-median")
	b.ReportMetric(float64(lat[min(len(lat)-1, len(lat)*99/100)].Microseconds())/1000, "ms-p99")
}

func perContextTraceFiles() []uploadFile { return perContextTrace() }

// drain reads updates until trace id is in state want.
func drain(b *testing.B, sub *servertest.Subscription, id, want string) {
	b.Helper()
	for {
		var r struct{ TraceUpdated struct{ ID, State string } }
		if err := sub.Next(10*time.Second, &r); err != nil {
			b.Fatalf("waiting for %s %s: %v", id, want, err)
		}
		if r.TraceUpdated.ID == id && r.TraceUpdated.State == want {
			return
		}
	}
}

// drainNot reads updates until trace id leaves state from.
func drainNot(b *testing.B, sub *servertest.Subscription, id, from string) {
	b.Helper()
	for {
		var r struct{ TraceUpdated struct{ ID, State string } }
		if err := sub.Next(10*time.Second, &r); err != nil {
			b.Fatalf("waiting for %s to leave %s: %v", id, from, err)
		}
		if r.TraceUpdated.ID == id && r.TraceUpdated.State != from {
			return
		}
	}
}
