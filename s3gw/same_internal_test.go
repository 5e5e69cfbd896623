package s3gw

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestETagsSay: equal ETags of 64-bit or stronger checksums mean the same
// bytes; different whole-object checksums of one algorithm mean other
// bytes; anything else (a 32-bit CRC, checksums of two kinds, composites
// of parts) is left to a comparison of the bytes.
func TestETagsSay(t *testing.T) {
	token := `"` + string(bytes.Repeat([]byte("ab"), 32)) + `-3"`
	for _, c := range []struct {
		a, b string
		want etagVerdict
	}{
		{`"CRC64NVME-QgSHOq9YLGI="`, `"CRC64NVME-QgSHOq9YLGI="`, sameBytes},
		{`"SHA256-n4bQgYhMfWWaL+qgxVrQFaO/TxsrC4Is0V1sFbDwCgg="`, `"SHA256-n4bQgYhMfWWaL+qgxVrQFaO/TxsrC4Is0V1sFbDwCgg="`, sameBytes},
		{token, token, sameBytes},
		{`"CRC64NVME-QgSHOq9YLGI="`, `"CRC64NVME-AAAAAAAAAAA="`, otherBytes},
		{`"CRC32-AAAAAA=="`, `"CRC32-BBBBBB=="`, otherBytes},
		{`"CRC32-AAAAAA=="`, `"CRC32-AAAAAA=="`, unknown},         // 32 bits: compared
		{`"CRC32C-AAAAAA=="`, `"CRC32C-AAAAAA=="`, unknown},       // 32 bits: compared
		{`"CRC32-AAAAAA==-2"`, `"CRC32-BBBBBB==-3"`, unknown},     // parts of other sizes
		{`"CRC32-AAAAAA=="`, `"CRC64NVME-QgSHOq9YLGI="`, unknown}, // two kinds
		{``, `"CRC64NVME-QgSHOq9YLGI="`, unknown},                 // written before the gateway (cascade upload to a local data dir)
	} {
		if got := etagsSay(c.a, c.b); got != c.want {
			t.Errorf("etagsSay(%s, %s) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

// TestSameContent compares files across the chunk boundary: equal, one
// byte off at the end, one byte longer.
func TestSameContent(t *testing.T) {
	dir := t.TempDir()
	data := bytes.Repeat([]byte("0123456789abcdef"), (1<<20)/16+3)
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	fa, err := os.Open(write("a", data))
	if err != nil {
		t.Fatal(err)
	}
	defer fa.Close()
	off := append([]byte(nil), data...)
	off[len(off)-1] ^= 1
	for _, c := range []struct {
		name string
		b    []byte
		want bool
	}{
		{"same", data, true},
		{"last byte off", off, false},
		{"one byte longer", append(append([]byte(nil), data...), 'x'), false},
		{"empty", nil, false},
	} {
		got, err := sameContent(context.Background(), fa, write(c.name, c.b))
		if err != nil || got != c.want {
			t.Errorf("%s: %v, %v; want %v", c.name, got, err, c.want)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := sameContent(ctx, fa, fa.Name()); err == nil {
		t.Error("a cancelled comparison went on")
	}
}

// TestSettleSetsTheComparedFilesTime: an object written again with its
// bytes gets its time back; when another write with other bytes lands
// between the comparison and the time set back, that write's file keeps
// its own time (the time goes to the file compared, which is no longer
// the object), so the change counts. It was the object's path that got
// the time back, and a trace stayed READY on bytes the bucket no longer
// had (QA, two multipart completions a second apart).
func TestSettleSetsTheComparedFilesTime(t *testing.T) {
	root := t.TempDir()
	bucket, key := "cascade", "traces/t/traces/kernel-1.trace"
	path := filepath.Join(root, bucket, filepath.FromSlash(key))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(b []byte) { // as the gateway does: a new file renamed over the object
		tmp := filepath.Join(root, bucket, "new")
		if err := os.WriteFile(tmp, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
	}
	x := bytes.Repeat([]byte("warp instruction\n"), 1000)
	y := bytes.Clone(x)
	y[len(y)/2] = 'W'
	was := time.Date(2026, 1, 2, 3, 4, 5, 678901234, time.UTC)
	for _, c := range []struct {
		name     string
		between  []byte // written between the comparison and the time set back
		want     []byte
		wantTime bool
	}{
		{"same bytes", nil, x, true},
		{"other bytes land meanwhile", y, y, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			write(x)
			if err := os.Chtimes(path, was, was); err != nil {
				t.Fatal(err)
			}
			s := &sameKeeper{root: root, log: slog.New(slog.DiscardHandler), ctx: context.Background()}
			if c.between != nil {
				s.compared = func() { write(c.between) }
			}
			p := s.keep(&bucket, &key)
			if p == nil {
				t.Fatal("nothing kept")
			}
			write(x) // the write, of the same bytes
			done := make(chan struct{})
			s.settle(p, nil, func() { close(done) })
			<-done
			got, err := os.ReadFile(path)
			if err != nil || !bytes.Equal(got, c.want) {
				t.Fatalf("object %d bytes, %v", len(got), err)
			}
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if kept := fi.ModTime().Equal(was); kept != c.wantTime {
				t.Errorf("object's time %v, kept %v; want kept %v", fi.ModTime(), kept, c.wantTime)
			}
			if links, _ := filepath.Glob(filepath.Join(root, bucket, ".sgwtmp", priorPrefix+"*")); len(links) != 0 {
				t.Errorf("kept links left: %v", links)
			}
		})
	}
}

// TestWritesAgainBeforeTheSettle: a client writes an object again with
// its bytes, then again, before the gateway has settled the first write
// (its comparison runs after the response). Each time the object ends
// with the time it had before the first: the second write's own time is
// the first's result, not the new time the first write's file had when
// the second linked it. It was that new time, and a ready trace whose
// kernel trace was PUT and then completed by multipart with the same
// bytes was processed again (TestIdenticalReuploadKeepsTheTraceReady,
// failing now and then in CI). With other bytes the first time, the
// object keeps the time of the write that brought them.
func TestWritesAgainBeforeTheSettle(t *testing.T) {
	root := t.TempDir()
	bucket, key := "cascade", "traces/t/traces/kernel-1.trace"
	path := filepath.Join(root, bucket, filepath.FromSlash(key))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(b []byte, at time.Time) {
		tmp := filepath.Join(root, bucket, "new")
		if err := os.WriteFile(tmp, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(tmp, at, at); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
	}
	x := bytes.Repeat([]byte("warp instruction\n"), 1000)
	y := bytes.ToUpper(x)
	was := time.Date(2026, 1, 2, 3, 4, 5, 678901234, time.UTC)
	first, second := was.Add(time.Hour), was.Add(2*time.Hour)
	for _, c := range []struct {
		name     string
		firstly  []byte
		wantTime time.Time
	}{
		{"the same bytes twice", x, was},
		{"other bytes, then those again", y, first},
	} {
		t.Run(c.name, func(t *testing.T) {
			write(x, was)
			s := &sameKeeper{root: root, log: slog.New(slog.DiscardHandler), ctx: context.Background()}
			p1 := s.keep(&bucket, &key)
			write(c.firstly, first)
			p2 := s.keep(&bucket, &key) // the first write not settled yet
			write(c.firstly, second)
			if p1 == nil || p2 == nil {
				t.Fatal("nothing kept")
			}
			done1, done2 := make(chan struct{}), make(chan struct{})
			s.settle(p2, nil, func() { close(done2) }) // waits for the first's
			s.settle(p1, nil, func() { close(done1) })
			<-done1
			<-done2
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if !fi.ModTime().Equal(c.wantTime) {
				t.Errorf("object's time %v, want %v", fi.ModTime(), c.wantTime)
			}
			if len(s.pending) != 0 {
				t.Errorf("settles left pending: %v", s.pending)
			}
		})
	}
}
