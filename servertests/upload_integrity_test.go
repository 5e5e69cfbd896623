package servertests_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"io/fs"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/s3test"
	"github.com/cascade-sim/cascade/testkit/servertest"
	"github.com/cascade-sim/cascade/upload"
)

// marker is written into a trace file; corruptingProxy changes its last
// byte on the way, as a faulty network or disk would change one byte.
// Its first byte occurs only once in it, so a simple scan finds it.
const marker = "\x00QZJ-corrupt-me!"

// corruptingProxy forwards TCP connections to target and flips one byte of
// every copy of marker sent from the client to the server. It returns the
// proxy's address.
func corruptingProxy(t *testing.T, target string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close() // idle keep-alive connections too
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, c, s)
			mu.Unlock()
			wg.Go(func() {
				io.Copy(c, s)
				c.Close()
			})
			wg.Go(func() {
				flipMarker(s, c)
				s.Close()
			})
		}
	})
	return ln.Addr().String()
}

func flipMarker(dst io.Writer, src io.Reader) {
	in := bufio.NewReaderSize(src, 64<<10)
	out := bufio.NewWriterSize(dst, 64<<10)
	matched := 0
	for {
		b, err := in.ReadByte()
		if err != nil {
			out.Flush()
			return
		}
		switch {
		case b == marker[matched]:
			matched++
		case b == marker[0]:
			matched = 1
		default:
			matched = 0
		}
		if matched == len(marker) {
			b ^= 0x01
			matched = 0
		}
		if out.WriteByte(b) != nil {
			return
		}
		if in.Buffered() == 0 && out.Flush() != nil {
			return
		}
	}
}

// TestEndpointUploadRefusesCorruption sends traces through a proxy that
// changes one byte of a file's content: in a small file sent whole, and in
// the second part of a multipart upload. The bodies are not signed, so the
// CRC64NVME each one carries is what the gateway must check: the upload fails
// and the changed file does not appear.
func TestEndpointUploadRefusesCorruption(t *testing.T) {
	s := servertest.Server(t, s3test.WithS3)
	proxy := "http://" + corruptingProxy(t, strings.TrimPrefix(s.S3.URL, "http://"))
	for _, tc := range []struct {
		name string
		size int
		at   int // where marker goes in the file
	}{
		{"whole", 64 << 10, 1000},
		{"part", 12 << 20, 7<<20 + 12345},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := filepath.Join(t.TempDir(), "my-trace")
			if err := os.CopyFS(src, os.DirFS(filepath.Join(testkit.ModuleRoot(), "samples", "quickstart"))); err != nil {
				t.Fatal(err)
			}
			data := make([]byte, tc.size)
			rng := rand.New(rand.NewPCG(3, 4))
			for i := 0; i+8 <= len(data); i += 8 {
				binary.LittleEndian.PutUint64(data[i:], rng.Uint64())
			}
			copy(data[tc.at:], marker)
			name := "kernel-5-ctx_0x55d2c3a1e4f0.trace"
			if err := os.WriteFile(filepath.Join(src, "traces", name), data, 0o644); err != nil {
				t.Fatal(err)
			}
			run := "corrupt-" + tc.name
			_, err := upload.Upload(context.Background(), upload.Options{
				Source: src, RunName: run, Endpoint: proxy, Bucket: "cascade", Prefix: "traces",
				Keys: upload.Keys(s3test.Keys), PartSize: 5 << 20, Parallel: 2,
			})
			if err == nil || !strings.Contains(err.Error(), "BadDigest") {
				t.Fatalf("upload of a file changed on the way: %v, want the gateway's BadDigest", err)
			}
			t.Logf("refused: %v", err)
			dest := s.TraceDir(run)
			for _, p := range []string{"metadata.json", "traces/" + name} {
				if _, err := os.Stat(filepath.Join(dest, p)); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("%s after the refused upload: %v, want it absent", p, err)
				}
			}
		})
	}
}
