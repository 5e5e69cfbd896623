package tracez

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestRoundTrip writes blocks of warps of various sizes (empty, less than,
// exactly and more than a subchunk; one streamed) and reads them back.
func TestRoundTrip(t *testing.T) {
	for _, sub := range []int{1, 3, 2048} {
		t.Run(fmt.Sprint("subchunk=", sub), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "k.tracez")
			f, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			enc, err := NewEncoder(sub, 2)
			if err != nil {
				t.Fatal(err)
			}
			w, err := NewWriter(f, []byte("-kernel name = k\n"), sub, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			want := [][][]string{
				{nil, lines(1), lines(3), lines(7)},
				{lines(4)},
			}
			for bi, blk := range want {
				w.BeginBlock(BlockHeader{TB: [3]uint32{uint32(bi), 2, 3}, ClusterID: [3]uint32{4, 5, 6}, ClusterCTA: [3]uint32{7, 8, 9}, Rank: 10})
				for wi, insts := range blk {
					if bi == 1 { // streamed
						if err := w.BeginWarp(uint64(len(insts))); err != nil {
							t.Fatal(err)
						}
						for s := 0; s < len(insts); s += sub {
							w.WriteFrame(enc.AppendFrame(nil, bytes.Join(toBytes(insts[s:min(s+sub, len(insts))]), []byte("\n"))))
						}
						if err := w.EndWarp(); err != nil {
							t.Fatal(err)
						}
						continue
					}
					frames, _ := enc.AppendWarp(nil, nil, toBytes(insts))
					if err := w.WriteWarp(uint64(len(insts)), frames); err != nil {
						t.Fatalf("warp %d: %v", wi, err)
					}
				}
				if err := w.EndBlock(); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			f.Close()

			r, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if string(r.Header) != "-kernel name = k\n" || r.SubchunkInsts != uint32(sub) || len(r.Dict) != 0 {
				t.Fatalf("header %q subchunk %d dict %d", r.Header, r.SubchunkInsts, len(r.Dict))
			}
			if len(r.Blocks) != len(want) {
				t.Fatalf("%d blocks, want %d", len(r.Blocks), len(want))
			}
			if n, err := CountInsts(path); r.TotalInsts() != 15 || n != 15 || err != nil {
				t.Errorf("TotalInsts = %d, CountInsts = %d, %v; want 15", r.TotalInsts(), n, err)
			}
			for bi, b := range r.Blocks {
				if b.TB[0] != uint32(bi) || b.Rank != 10 || b.ClusterCTA[2] != 9 {
					t.Errorf("block %d header %+v", bi, b.BlockHeader)
				}
				if len(b.Warps) != len(want[bi]) {
					t.Fatalf("block %d: %d warps", bi, len(b.Warps))
				}
				for wi, wp := range b.Warps {
					var got []string
					if err := r.Insts(wp, func(l []byte) error { got = append(got, string(l)); return nil }); err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(got, want[bi][wi]) || int(wp.Insts) != len(want[bi][wi]) {
						t.Errorf("block %d warp %d = %q, want %q", bi, wi, got, want[bi][wi])
					}
					if len(wp.Subchunks) != int(NumSubchunks(uint64(wp.Insts), sub)) {
						t.Errorf("block %d warp %d: %d subchunks", bi, wi, len(wp.Subchunks))
					}
				}
			}
		})
	}
}

// TestLayout pins the bytes of a tiny file to formats.md §4.
func TestLayout(t *testing.T) {
	var buf bytes.Buffer
	w, _ := NewWriter(&buf, []byte("H\n"), 2048, "")
	w.BeginBlock(BlockHeader{TB: [3]uint32{1, 0, 0}})
	w.WriteWarp(0, nil)
	w.EndBlock()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	le := binary.LittleEndian
	want := []byte("H\n\x00")
	want = le.AppendUint32(want, 0)    // dict_size
	want = le.AppendUint32(want, 2048) // subchunk_insts
	want = le.AppendUint32(want, 0)    // warp 0: inst_count
	want = le.AppendUint32(want, 0)    //         num_subchunks
	index := len(want)
	want = le.AppendUint32(want, 1) // num_tbs
	for _, v := range []uint32{1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1} {
		want = le.AppendUint32(want, v)
	}
	want = le.AppendUint32(want, 0)  // inst_count
	want = le.AppendUint32(want, 0)  // nsub
	want = le.AppendUint64(want, 11) // file_offset of the warp record
	want = le.AppendUint64(want, uint64(index))
	if !bytes.Equal(b, want) {
		t.Fatalf("bytes\n got %x\nwant %x", b, want)
	}
}

// TestFooterSpill checks a footer larger than the in-memory limit.
func TestFooterSpill(t *testing.T) {
	path := filepath.Join(t.TempDir(), "k.tracez")
	f, _ := os.Create(path)
	spill := t.TempDir()
	w, _ := NewWriter(f, []byte("H\n"), 4, spill)
	enc, _ := NewEncoder(4, 1)
	frames, _ := enc.AppendWarp(nil, nil, toBytes(lines(5)))
	const blocks = footerMemLimit/(44+2*(16+8)) + 10
	for i := 0; i < blocks; i++ {
		w.BeginBlock(BlockHeader{TB: [3]uint32{uint32(i), 0, 0}})
		w.WriteWarp(0, nil)
		w.WriteWarp(5, frames)
		w.EndBlock()
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if ents, _ := os.ReadDir(spill); len(ents) != 0 {
		t.Errorf("spill dir not empty: %v", ents)
	}
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if len(r.Blocks) != blocks || r.Blocks[blocks-1].TB[0] != blocks-1 || r.TotalInsts() != 5*blocks {
		t.Fatalf("%d blocks, %d insts", len(r.Blocks), r.TotalInsts())
	}
	var got []string
	r.Insts(r.Blocks[blocks-1].Warps[1], func(l []byte) error { got = append(got, string(l)); return nil })
	if !reflect.DeepEqual(got, lines(5)) {
		t.Errorf("last warp = %q", got)
	}
}

func TestOpenErrors(t *testing.T) {
	cases := []struct {
		name string
		data []byte
	}{
		{name: "no NUL", data: []byte("header")},
		{name: "short", data: []byte("h\x00\x00\x00")},
		{name: "bad index", data: append([]byte("h\x00\x00\x00\x00\x00\x00\x08\x00\x00"), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "bad.tracez")
			os.WriteFile(p, tc.data, 0o644)
			if r, err := Open(p); err == nil {
				r.Close()
				t.Fatal("Open succeeded")
			}
		})
	}
}

func lines(n int) []string {
	var s []string
	for i := 0; i < n; i++ {
		s = append(s, fmt.Sprintf("%04x ffffffff 1 R%d IMAD 0 0 0", i*16, i))
	}
	return s
}

func toBytes(s []string) [][]byte {
	var b [][]byte
	for _, x := range s {
		b = append(b, []byte(x))
	}
	return b
}

// TestHeaderWithNUL: the header ends at its first NUL, so a header holding
// one is refused rather than written as a file no reader can open.
func TestHeaderWithNUL(t *testing.T) {
	var buf bytes.Buffer
	if _, err := NewWriter(&buf, []byte("-kernel name = a\x00b\n"), 2048, ""); err == nil {
		t.Fatal("a header with a NUL byte was accepted")
	}
	if buf.Len() != 0 {
		t.Fatalf("%d bytes written for a refused header", buf.Len())
	}
}
