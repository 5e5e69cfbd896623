package transport_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/events"
	"github.com/cascade-sim/cascade/graph"
	"github.com/cascade-sim/cascade/graph/transport"
	"github.com/cascade-sim/cascade/resolvers"
	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/dbtest"
)

// fanoutQuery is what every subscriber of BenchmarkFanout asks for.
const fanoutQuery = `subscription { traceUpdated { id state kernelCount bytes updatedAt } }`

// BenchmarkFanout publishes b.N trace updates (over 10 traces) at 100 and
// at 10 a second to 1,000 subscribers of traceUpdated over real
// websockets, and fails unless every subscriber got every update, in
// order per trace. The subscribers are another process (this test binary
// running TestFanoutClients), so the server's CPU time is its own. It
// reports the publish-to-arrival latency's p50 and p99, the server's CPU
// time per delivery (and the clients'), and the rate the updates really
// went out at.
func BenchmarkFanout(b *testing.B) {
	for _, rate := range []int{100, 10} {
		b.Run(fmt.Sprintf("1000subs_%dps", rate), func(b *testing.B) { benchFanout(b, 1000, rate) })
	}
}

func benchFanout(b *testing.B, subscribers, rate int) {
	const traces = 10
	broker := &events.Broker{}
	srv := graph.NewServer(&resolvers.Resolver{DB: dbtest.DB(b), Events: broker}, transport.Options{Limits: transport.Limits{MaxConnsPerClient: -1}})
	hs := httptest.NewServer(srv)
	defer hs.Close()
	results := filepath.Join(b.TempDir(), "results.json")
	cmd := exec.Command(os.Args[0], "-test.run=^TestFanoutClients$", "-test.timeout=30m")
	cmd.Env = append(os.Environ(),
		"CASCADE_FANOUT_URL="+strings.Replace(hs.URL, "http", "ws", 1),
		"CASCADE_FANOUT_SUBSCRIBERS="+strconv.Itoa(subscribers),
		"CASCADE_FANOUT_UPDATES="+strconv.Itoa(b.N),
		"CASCADE_FANOUT_RESULTS="+results)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer cmd.Process.Kill()
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if sc.Text() == "fanout: subscribed" {
				ready <- true
			}
		}
		ready <- false
	}()
	if !<-ready {
		b.Fatal("the clients' process ended before it subscribed")
	}
	testkit.Eventually(b, 60*time.Second, "all subscribed", func() bool {
		return broker.Subscribers()+srv.SharedSubscriptions() == subscribers
	})
	var before syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &before)
	b.ResetTimer()
	start := time.Now()
	tick := time.NewTicker(time.Second / time.Duration(rate))
	for i := range b.N {
		<-tick.C
		broker.Publish(cascade.TraceUpdated{Trace: cascade.Trace{
			ID: "t-" + strconv.Itoa(i%traces), State: cascade.TraceUploading, KernelCount: i, Bytes: int64(i) * 1000,
			TraceGPUArch: cascade.DefaultTraceGPUArch, Prompts: []string{}, UpdatedAt: time.Now(),
		}})
	}
	tick.Stop()
	published := time.Since(start)
	werr := cmd.Wait()
	b.StopTimer()
	var after syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &after)
	if werr != nil {
		b.Fatalf("clients: %v", werr)
	}
	var r fanoutResults
	data, err := os.ReadFile(results)
	if err == nil {
		err = json.Unmarshal(data, &r)
	}
	if err != nil {
		b.Fatal(err)
	}
	if len(r.Errors) > 0 {
		b.Fatalf("%d of %d subscribers did not get all %d updates in order; first: %s", len(r.Errors), subscribers, b.N, r.Errors[0])
	}
	deliveries := float64(subscribers * b.N)
	cpu := time.Duration(after.Utime.Nano() + after.Stime.Nano() - before.Utime.Nano() - before.Stime.Nano())
	b.ReportMetric(float64(cpu.Microseconds())/deliveries, "cpu-µs/delivery")
	b.ReportMetric(float64(r.CPU.Microseconds())/deliveries, "client-cpu-µs/delivery")
	// A CPU-starved process cannot keep the ticker's pace: say how fast the
	// updates really went out.
	b.ReportMetric(float64(b.N)/published.Seconds(), "updates/s")
	lat := make([]time.Duration, len(r.Latencies))
	for i, l := range r.Latencies {
		lat[i] = time.Duration(l)
	}
	testkit.ReportLatencies(b, lat)
}

// fanoutResults is what TestFanoutClients reports to BenchmarkFanout.
type fanoutResults struct {
	Errors    []string      // one per subscriber that missed an update or got one out of order
	Latencies []int64       // ns from publish to arrival, of every delivery
	CPU       time.Duration // the process's, while the updates came
}

// TestFanoutClients is BenchmarkFanout's subscribers, in their own
// process; without CASCADE_FANOUT_URL it does nothing.
func TestFanoutClients(t *testing.T) {
	url := os.Getenv("CASCADE_FANOUT_URL")
	if url == "" {
		t.Skip("run by BenchmarkFanout")
	}
	subscribers, _ := strconv.Atoi(os.Getenv("CASCADE_FANOUT_SUBSCRIBERS"))
	want, _ := strconv.Atoi(os.Getenv("CASCADE_FANOUT_UPDATES"))
	conns := make([]*websocket.Conn, subscribers)
	for i := range conns {
		d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}}
		conn, _, err := d.Dial(url, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		conn.WriteJSON(map[string]any{"type": "connection_init"})
		var ack struct{ Type string }
		if err := conn.ReadJSON(&ack); err != nil || ack.Type != "connection_ack" {
			t.Fatalf("ack: %v", err)
		}
		conn.WriteJSON(map[string]any{"id": strconv.Itoa(i), "type": "subscribe", "payload": map[string]any{"query": fanoutQuery}})
		conns[i] = conn
	}
	var before syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &before)
	fmt.Println("fanout: subscribed")
	var (
		mu  sync.Mutex
		res fanoutResults
		wg  sync.WaitGroup
	)
	for i, c := range conns {
		wg.Go(func() {
			lat, err := readFanout(c, strconv.Itoa(i), want)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				res.Errors = append(res.Errors, fmt.Sprintf("subscriber %d: %v", i, err))
			}
			res.Latencies = append(res.Latencies, lat...)
		})
	}
	wg.Wait()
	var after syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &after)
	res.CPU = time.Duration(after.Utime.Nano() + after.Stime.Nano() - before.Utime.Nano() - before.Stime.Nano())
	data, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(os.Getenv("CASCADE_FANOUT_RESULTS"), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// readFanout reads want updates of subscription id from c, checking each
// trace's come in order (kernelCount grows), and returns their latencies.
// It picks the fields out of the message by hand, to cost the clients
// little CPU beside the server.
func readFanout(c *websocket.Conn, id string, want int) ([]int64, error) {
	lat := make([]int64, 0, want)
	last := map[string]int{}
	msgID := []byte(`,"id":` + strconv.Quote(id) + `,"type":"next"}`)
	for len(lat) < want {
		c.SetReadDeadline(time.Now().Add(60 * time.Second))
		_, data, err := c.ReadMessage()
		if err != nil {
			return lat, fmt.Errorf("after %d updates: %w", len(lat), err)
		}
		now := time.Now()
		if !bytes.HasSuffix(data, msgID) {
			return lat, fmt.Errorf("not an update of subscription %s: %s", id, data)
		}
		trace := field(data, `"id":"`, '"')
		count, err1 := strconv.Atoi(field(data, `"kernelCount":`, ','))
		at, err2 := time.Parse(time.RFC3339Nano, field(data, `"updatedAt":"`, '"'))
		if trace == "" || err1 != nil || err2 != nil {
			return lat, fmt.Errorf("update %d: %s", len(lat), data)
		}
		if n, ok := last[trace]; ok && count <= n {
			return lat, fmt.Errorf("trace %s: update %d after %d", trace, count, n)
		}
		last[trace] = count
		lat = append(lat, int64(now.Sub(at)))
	}
	return lat, nil
}

// field is what follows the first prefix in data, up to end.
func field(data []byte, prefix string, end byte) string {
	i := bytes.Index(data, []byte(prefix))
	if i < 0 {
		return ""
	}
	rest := data[i+len(prefix):]
	j := bytes.IndexByte(rest, end)
	if j < 0 {
		return ""
	}
	return string(rest[:j])
}
