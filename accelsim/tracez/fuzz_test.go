package tracez

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// fuzzTrace is what a .tracez holds, as the fuzz targets build and read it.
type fuzzTrace struct {
	header []byte
	sub    int
	blocks []fuzzBlock
}

type fuzzBlock struct {
	h     BlockHeader
	warps [][][]byte
}

// shape turns fuzz input into a trace: the text up to the first '\n' is
// the header, every other line an instruction; a line starting with 'B'
// begins a block (its bytes give the block header), one starting with 'W'
// a warp; "W" alone makes an empty warp.
func shape(data []byte, sub uint8) fuzzTrace {
	tr := fuzzTrace{sub: int(sub%8) + 1}
	header, rest, _ := bytes.Cut(data, []byte{'\n'})
	tr.header = append(header, '\n')
	for _, l := range bytes.Split(rest, []byte{'\n'}) {
		if len(tr.blocks) == 0 || bytes.HasPrefix(l, []byte("B")) {
			var h BlockHeader
			for i, c := range l {
				h.TB[i%3] = h.TB[i%3]*31 + uint32(c)
				h.Rank ^= uint32(c) << (i % 24)
			}
			tr.blocks = append(tr.blocks, fuzzBlock{h: h})
			if bytes.HasPrefix(l, []byte("B")) {
				continue
			}
		}
		b := &tr.blocks[len(tr.blocks)-1]
		if len(b.warps) == 0 || bytes.HasPrefix(l, []byte("W")) {
			b.warps = append(b.warps, nil)
			if string(l) == "W" {
				continue
			}
		}
		w := &b.warps[len(b.warps)-1]
		*w = append(*w, l)
	}
	return tr
}

// write writes tr to path, streaming every other warp frame by frame.
func (tr fuzzTrace) write(t testing.TB, path string) []byte {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	enc, err := NewEncoder(tr.sub, 1)
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewWriter(f, tr.header, tr.sub, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, b := range tr.blocks {
		if err := w.BeginBlock(b.h); err != nil {
			t.Fatal(err)
		}
		for _, insts := range b.warps {
			n++
			if n%2 == 0 {
				frames, _ := enc.AppendWarp(nil, nil, insts)
				if err := w.WriteWarp(uint64(len(insts)), frames); err != nil {
					t.Fatal(err)
				}
				continue
			}
			if err := w.BeginWarp(uint64(len(insts))); err != nil {
				t.Fatal(err)
			}
			for s := 0; s < len(insts); s += tr.sub {
				w.WriteFrame(enc.AppendFrame(nil, bytes.Join(insts[s:min(s+tr.sub, len(insts))], []byte{'\n'})))
			}
			if err := w.EndWarp(); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.EndBlock(); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// read reads the .tracez at path back into a fuzzTrace.
func read(t *testing.T, path string) (fuzzTrace, error) {
	r, err := Open(path)
	if err != nil {
		return fuzzTrace{}, err
	}
	defer r.Close()
	tr := fuzzTrace{header: bytes.Clone(r.Header), sub: int(r.SubchunkInsts)}
	for _, b := range r.Blocks {
		fb := fuzzBlock{h: b.BlockHeader}
		for _, w := range b.Warps {
			var insts [][]byte
			if err := r.Insts(w, func(l []byte) error { insts = append(insts, bytes.Clone(l)); return nil }); err != nil {
				return tr, err
			}
			if uint32(len(insts)) != w.Insts {
				t.Fatalf("%s: warp of %d instructions gave %d", path, w.Insts, len(insts))
			}
			fb.warps = append(fb.warps, insts)
		}
		tr.blocks = append(tr.blocks, fb)
	}
	return tr, nil
}

// FuzzRoundTrip: what the Writer writes reads back the same (header,
// subchunk size, blocks, warps, instructions), and written again from
// what was read gives the same bytes.
func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte("-kernel name = k\nB1\n0010 ffffffff 1 R1 IMAD 0 0 0\n0020 ffffffff 0 EXIT 0 0\nW\nW\n0030 ffffffff 0 EXIT 0 0\nBxyz\nW"), uint8(1))
	f.Add([]byte("-grid dim = (1,1,1)\n\n\n\n"), uint8(0))
	f.Add([]byte("h\nB\nB\nB"), uint8(7))
	f.Add([]byte("\nW1\n2\n3\n4\n5\n6\n7\n8\n9\n10"), uint8(2))
	f.Fuzz(func(t *testing.T, data []byte, sub uint8) {
		if len(data) > 1<<14 {
			return
		}
		tr := shape(data, sub)
		if bytes.IndexByte(tr.header, 0) >= 0 {
			return // raw trace headers are text lines; see FuzzOpen for what a NUL does
		}
		dir := t.TempDir()
		first := tr.write(t, filepath.Join(dir, "a.tracez"))
		got, err := read(t, filepath.Join(dir, "a.tracez"))
		if err != nil {
			t.Fatalf("%q: %v", data, err)
		}
		// An empty warp reads back as no instructions, an empty line as nil.
		norm := func(tr fuzzTrace) fuzzTrace {
			for i := range tr.blocks {
				for j, w := range tr.blocks[i].warps {
					if len(w) == 0 {
						tr.blocks[i].warps[j] = nil
					}
					for k, l := range w {
						if len(l) == 0 {
							w[k] = nil
						}
					}
				}
			}
			return tr
		}
		if !reflect.DeepEqual(norm(got), norm(tr)) {
			t.Fatalf("%q: wrote\n%+v\nread\n%+v", data, tr, got)
		}
		if again := got.write(t, filepath.Join(dir, "b.tracez")); !bytes.Equal(first, again) {
			t.Fatalf("%q: written, read and written again gives other bytes", data)
		}
	})
}

// FuzzOpen: any file given as .tracez is read or refused with an error
// naming it, never a panic or an allocation its size cannot justify;
// each warp of a file that opens decodes to the instructions its footer
// counts, or fails naming the file.
func FuzzOpen(f *testing.F) {
	dir := f.TempDir()
	good := shape([]byte("-kernel name = k\nB1\n0010 ffffffff 1 R1 IMAD 0 0 0\n0020 ffffffff 0 EXIT 0 0\nW\nW\n0030 ffffffff 0 EXIT 0 0"), 1)
	f.Add([]byte("header"))
	f.Add([]byte("h\x00\x00\x00"))
	f.Add(append([]byte("h\x00\x00\x00\x00\x00\x00\x08\x00\x00"), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f))
	f.Add(good.write(f, filepath.Join(dir, "good.tracez")))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "k.tracez")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		defer func() {
			var after runtime.MemStats
			runtime.ReadMemStats(&after)
			if n := after.TotalAlloc - before.TotalAlloc; n > 64<<20+uint64(len(data))*64 {
				t.Fatalf("reading %d bytes allocated %d", len(data), n)
			}
		}()
		r, err := Open(path)
		if err != nil {
			if !strings.Contains(err.Error(), path) {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		defer r.Close()
		for _, b := range r.Blocks {
			for _, w := range b.Warps {
				n := uint32(0)
				err := r.Insts(w, func([]byte) error { n++; return nil })
				if err != nil {
					if !strings.Contains(err.Error(), path) {
						t.Fatalf("error %q does not name the file", err)
					}
					continue
				}
				if n != w.Insts {
					t.Fatalf("warp %+v decoded to %d instructions", w, n)
				}
			}
		}
	})
}
