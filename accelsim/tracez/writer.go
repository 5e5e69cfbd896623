package tracez

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/klauspost/compress/zstd"
)

// DefaultSubchunkInsts is the number of instructions per zstd frame when
// the writer is not told another (cascade postprocess reads it from
// TRACEZ_SUBCHUNK_INSTS).
const DefaultSubchunkInsts = 2048

// footerMemLimit is how much footer the [Writer] keeps in memory before it
// moves it to a temporary file: a kernel of millions of one-instruction
// warps has a footer of hundreds of megabytes.
const footerMemLimit = 4 << 20

// BlockHeader identifies a thread block in the footer.
type BlockHeader struct {
	TB         [3]uint32
	ClusterID  [3]uint32
	ClusterCTA [3]uint32
	Rank       uint32
}

// Encoder compresses instruction lines into subchunk frames at zstd level 3.
// It is safe for concurrent use.
type Encoder struct {
	z        *zstd.Encoder
	subchunk int
}

// NewEncoder returns an Encoder cutting warps into frames of subchunkInsts
// instructions, using up to concurrency encoders at once.
func NewEncoder(subchunkInsts, concurrency int) (*Encoder, error) {
	if subchunkInsts <= 0 {
		return nil, fmt.Errorf("tracez: subchunk size %d is not positive", subchunkInsts)
	}
	if concurrency < 1 {
		concurrency = 1
	}
	z, err := zstd.NewWriter(nil,
		zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(3)),
		zstd.WithEncoderConcurrency(concurrency),
		zstd.WithZeroFrames(true))
	if err != nil {
		return nil, fmt.Errorf("tracez: new zstd encoder: %w", err)
	}
	return &Encoder{z: z, subchunk: subchunkInsts}, nil
}

// SubchunkInsts returns the number of instructions per frame.
func (e *Encoder) SubchunkInsts() int { return e.subchunk }

// AppendWarp appends to dst the frames of one warp's instructions: for each
// subchunk a u32 compressed size and the zstd frame. scratch is reused to
// join lines; it returns the grown dst and scratch.
func (e *Encoder) AppendWarp(dst, scratch []byte, lines [][]byte) ([]byte, []byte) {
	for start := 0; start < len(lines); start += e.subchunk {
		end := min(start+e.subchunk, len(lines))
		scratch = scratch[:0]
		for i, l := range lines[start:end] {
			if i > 0 {
				scratch = append(scratch, '\n')
			}
			scratch = append(scratch, l...)
		}
		dst = e.AppendFrame(dst, scratch)
	}
	return dst, scratch
}

// AppendFrame appends a u32 compressed size and the zstd frame of text
// (already newline-joined lines of one subchunk) to dst.
func (e *Encoder) AppendFrame(dst, text []byte) []byte {
	at := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	dst = e.z.EncodeAll(text, dst)
	binary.LittleEndian.PutUint32(dst[at:], uint32(len(dst)-at-4))
	return dst
}

// NumSubchunks returns how many frames a warp of n instructions takes.
func NumSubchunks(n uint64, subchunkInsts int) uint32 {
	s := uint64(subchunkInsts)
	return uint32((n + s - 1) / s)
}

// Writer writes a .tracez file: blocks in the order given, warps of a
// block in the order given. It is not safe for concurrent use.
type Writer struct {
	w        *bufio.Writer
	off      uint64
	subchunk int
	spillDir string

	numTBs    uint32
	inBlock   bool
	blockHdr  BlockHeader
	blockWarp []byte // footer bytes of the open block's warps
	warps     uint32

	footer     []byte
	footerFile *os.File
	footerBuf  *bufio.Writer
	footerLen  int64

	warpLeft uint64 // instructions still expected by the streaming warp
	warpSub  int    // frames written for the streaming warp
	warpN    uint64
}

// NewWriter writes the header (without its NUL; NewWriter adds it) and the
// dictionary fields to w. A footer larger than a few megabytes is kept in a
// temporary file in spillDir (os.TempDir() when empty) until [Writer.Close].
func NewWriter(w io.Writer, header []byte, subchunkInsts int, spillDir string) (*Writer, error) {
	if bytes.IndexByte(header, 0) >= 0 {
		return nil, errors.New("tracez: the header holds a NUL byte, which would end it early")
	}
	tw := &Writer{w: bufio.NewWriterSize(w, 1<<20), subchunk: subchunkInsts, spillDir: spillDir}
	tw.write(header)
	tw.write([]byte{0})
	tw.u32(0) // dict_size
	tw.u32(uint32(subchunkInsts))
	return tw, nil
}

func (w *Writer) write(b []byte) {
	n, _ := w.w.Write(b) // errors are sticky in bufio and reported by Flush
	w.off += uint64(n)
}

func (w *Writer) u32(v uint32) {
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], v)
	w.write(b[:])
}

// BeginBlock opens a thread block; its warps follow.
func (w *Writer) BeginBlock(h BlockHeader) error {
	if w.inBlock {
		return errors.New("tracez: BeginBlock inside a block")
	}
	w.inBlock, w.blockHdr, w.warps, w.blockWarp = true, h, 0, w.blockWarp[:0]
	return nil
}

// WriteWarp writes one warp of n instructions whose frames (as made by
// [Encoder.AppendWarp]) are frames.
func (w *Writer) WriteWarp(n uint64, frames []byte) error {
	if err := w.BeginWarp(n); err != nil {
		return err
	}
	w.write(frames)
	w.warpLeft, w.warpSub = 0, int(NumSubchunks(n, w.subchunk))
	return w.EndWarp()
}

// BeginWarp starts a warp of n instructions whose frames follow through
// [Writer.WriteFrame], for warps too large to hold in memory.
func (w *Writer) BeginWarp(n uint64) error {
	if !w.inBlock {
		return errors.New("tracez: warp outside a block")
	}
	if n > 0xFFFFFFFF {
		return fmt.Errorf("tracez: warp of %d instructions exceeds u32", n)
	}
	nsub := NumSubchunks(n, w.subchunk)
	var b [16]byte
	binary.LittleEndian.PutUint32(b[0:], uint32(n))
	binary.LittleEndian.PutUint32(b[4:], nsub)
	binary.LittleEndian.PutUint64(b[8:], w.off)
	w.blockWarp = append(w.blockWarp, b[:]...)
	s := uint64(w.subchunk)
	for left := n; left > 0; left -= min(left, s) {
		w.blockWarp = binary.LittleEndian.AppendUint32(w.blockWarp, uint32(min(left, s)))
	}
	w.warps++
	w.u32(uint32(n))
	w.u32(nsub)
	w.warpLeft, w.warpSub, w.warpN = n, 0, n
	return nil
}

// WriteFrame writes one frame (u32 size and zstd frame, as made by
// [Encoder.AppendFrame]) of the warp begun by [Writer.BeginWarp].
func (w *Writer) WriteFrame(frame []byte) {
	w.write(frame)
	w.warpSub++
}

// EndWarp checks that the warp got the frames its count needs.
func (w *Writer) EndWarp() error {
	if want := int(NumSubchunks(w.warpN, w.subchunk)); w.warpSub != want {
		return fmt.Errorf("tracez: warp of %d instructions has %d frames, want %d", w.warpN, w.warpSub, want)
	}
	return nil
}

// EndBlock closes the block opened by [Writer.BeginBlock].
func (w *Writer) EndBlock() error {
	if !w.inBlock {
		return errors.New("tracez: EndBlock outside a block")
	}
	h := w.blockHdr
	var b [44]byte
	for i, v := range []uint32{h.TB[0], h.TB[1], h.TB[2], h.ClusterID[0], h.ClusterID[1], h.ClusterID[2],
		h.ClusterCTA[0], h.ClusterCTA[1], h.ClusterCTA[2], h.Rank, w.warps} {
		binary.LittleEndian.PutUint32(b[4*i:], v)
	}
	if err := w.addFooter(b[:]); err != nil {
		return err
	}
	if err := w.addFooter(w.blockWarp); err != nil {
		return err
	}
	w.numTBs++
	w.inBlock = false
	return nil
}

func (w *Writer) addFooter(b []byte) error {
	w.footerLen += int64(len(b))
	if w.footerFile == nil && len(w.footer)+len(b) <= footerMemLimit {
		w.footer = append(w.footer, b...)
		return nil
	}
	if w.footerFile == nil {
		f, err := os.CreateTemp(w.spillDir, "tracez-footer-*")
		if err != nil {
			return fmt.Errorf("tracez: spill footer: %w", err)
		}
		w.footerFile, w.footerBuf = f, bufio.NewWriterSize(f, 256<<10)
		if _, err := w.footerBuf.Write(w.footer); err != nil {
			return fmt.Errorf("tracez: spill footer: %w", err)
		}
		w.footer = nil
	}
	if _, err := w.footerBuf.Write(b); err != nil {
		return fmt.Errorf("tracez: spill footer: %w", err)
	}
	return nil
}

// Close writes the footer and the index offset and flushes; it does not
// close the underlying writer. It always removes the footer spill file.
func (w *Writer) Close() error {
	defer w.removeSpill()
	if w.inBlock {
		return errors.New("tracez: Close inside a block")
	}
	index := w.off
	w.u32(w.numTBs)
	if w.footerFile != nil {
		if err := w.footerBuf.Flush(); err != nil {
			return fmt.Errorf("tracez: spill footer: %w", err)
		}
		if _, err := w.footerFile.Seek(0, io.SeekStart); err != nil {
			return fmt.Errorf("tracez: spill footer: %w", err)
		}
		n, err := io.Copy(w.w, w.footerFile)
		if err != nil {
			return fmt.Errorf("tracez: copy footer: %w", err)
		}
		w.off += uint64(n)
	} else {
		w.write(w.footer)
	}
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], index)
	w.write(b[:])
	return w.w.Flush()
}

func (w *Writer) removeSpill() {
	if w.footerFile != nil {
		w.footerFile.Close()
		os.Remove(w.footerFile.Name())
		w.footerFile = nil
	}
}
