package s3gw

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/versity/versitygw/backend/meta"
	"github.com/versity/versitygw/backend/posix"
	"golang.org/x/sys/unix"
)

// An object written again with the bytes it already had keeps its
// modification time. The scanner fingerprints a trace's data files by
// size and modification time (no trace of hundreds of GB can be hashed on
// every scan), so a byte-identical re-upload (`aws s3 cp --recursive` of
// the same folder, a retried script) counted as new data: the trace was
// post-processed again and its runs were marked stale. The gateway is the
// one place that sees both the old bytes and the new, so it tells them
// apart here:
//
//   - before a PUT or a multipart completion replaces an object, the old
//     file is kept by a hard link (prior), with its size, modification
//     time and ETag;
//   - once the new object is in place, the two are the same when their
//     ETags are equal and name a checksum of 64 bits or more
//     (CRC64NVME, SHA-1, SHA-256, or the backend's SHA-256 over the
//     parts' CRC64NVMEs), they differ when both ETags are whole-object
//     checksums of one algorithm with different values, and otherwise
//     (a 32-bit CRC, checksums of different kinds or part sizes) their
//     bytes are compared;
//   - the same, the new file gets the old modification time back;
//   - a write that begins before the previous write of the object is
//     settled (the client's next request, answered first) takes as the
//     old time the one that write ends with (prior.after).
//
// The comparison runs after the response, so no client waits for it (a
// CLI's read timeout is a minute); the object counts as being written
// (Gateway.Writing) until it ends, so the scanner sees the object only
// once its time is settled. The kept link is removed at the end; a
// server stopped before that finishes the comparison at its next start
// (priors.go).
// An S3 client that syncs by modification time (aws s3 sync) sees the
// object's earlier LastModified; one that syncs by size and checksum
// (rclone) is unaffected.
type sameKeeper struct {
	root string // the storage root: absolute, so the work is safe after Close restores the working directory
	log  *slog.Logger
	ctx  context.Context
	wg   sync.WaitGroup
	// compared, if set, is called between a comparison that found the
	// same bytes and the time set back (tests).
	compared func()

	// The last prior of each object (bucket/key) whose settle is under
	// way: a write's settle runs after the response, so the client's next
	// write of the object can begin before it ends (see prior.after).
	mu      sync.Mutex
	pending map[string]*prior
}

// priorPrefix names the kept links, in the bucket's .sgwtmp directory,
// which no scan enters.
const priorPrefix = "cascade-prior-"

// prior is an object as it was before a write replaced it.
type prior struct {
	bucket     string
	key        string // a copy: the request's strings are the server's buffers, reused once it answers
	path, link string // the object; the hard link that keeps its old bytes
	size       int64
	mtime      time.Time
	etag       string

	// after is the prior of the write before this one of the object,
	// when its settle was still under way at keep: the time this write's
	// object gets back is the one that write's object ends with, which
	// its settle decides (the old time again, when its bytes were the
	// same), not the new time it had when it was linked. settled is
	// closed when this one's settle is over, same then saying what it
	// found.
	after   *prior
	settled chan struct{}
	same    bool
}

// keep links the object at bucket/key, if it is a regular file, so its
// bytes outlive the write; nil when there is none or it cannot be kept
// (the write then counts as new data, as every write once did).
func (s *sameKeeper) keep(bucket, key *string) *prior {
	if s == nil {
		return nil
	}
	b, k := aws.ToString(bucket), aws.ToString(key)
	if b == "" || strings.ContainsAny(b, "/\\") || strings.HasPrefix(b, ".") || CheckKey(k) != nil || strings.Contains("/"+k+"/", "/../") {
		return nil // refused by the gateway or keyGuard anyway; never a path outside the bucket
	}
	path := filepath.Join(s.root, b, filepath.FromSlash(k))
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	var r [8]byte
	_, _ = rand.Read(r[:])
	link := filepath.Join(s.root, b, posix.MetaTmpDir, priorPrefix+hex.EncodeToString(r[:]))
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		return nil
	}
	if err := os.Link(path, link); err != nil {
		return nil
	}
	p := &prior{bucket: strings.Clone(b), key: strings.Clone(k), path: path, link: link, size: fi.Size(), mtime: fi.ModTime()}
	// Of the file linked, whatever the object's name points to by now.
	if e, err := (meta.XattrMeta{}).RetrieveAttribute(nil, "", link, "etag"); err == nil {
		p.etag = string(e)
	}
	if err := writeNote(p); err != nil {
		os.Remove(p.link)
		return nil
	}
	p.settled = make(chan struct{})
	s.mu.Lock()
	if s.pending == nil {
		s.pending = map[string]*prior{}
	}
	p.after, s.pending[b+"/"+k] = s.pending[b+"/"+k], p
	s.mu.Unlock()
	return p
}

// over ends p's settle: the next write's waits no longer, and the object
// has no settle under way unless a later write's.
func (s *sameKeeper) over(p *prior, same bool) {
	s.mu.Lock()
	if k := p.bucket + "/" + p.key; s.pending[k] == p {
		delete(s.pending, k)
	}
	s.mu.Unlock()
	p.same = same
	if p.settled != nil { // nil for a prior a stopped server left (priors.go)
		close(p.settled)
	}
}

// baseTime is the time p's object gets back when its bytes are the
// same: once the earlier write's settle is over, that write's result. A
// write of the same bytes again ends with the time the object had before
// it (which that settle gave back); one of other bytes, with its own, as
// the file p links (the earlier write's object) has it now.
func (s *sameKeeper) baseTime(p *prior) {
	a := p.after
	if a == nil {
		return
	}
	p.after = nil
	select {
	case <-a.settled:
	case <-s.ctx.Done():
		return
	}
	if a.same {
		p.mtime = a.mtime
	} else if fi, err := os.Lstat(p.link); err == nil {
		p.mtime = fi.ModTime()
	}
}

// settle decides, after the write ended with err, whether the object is
// what it was, and if so gives it back its modification time; then it
// drops the kept link and calls done. With a write that succeeded it
// works in the background.
func (s *sameKeeper) settle(p *prior, err error, done func()) {
	if p == nil {
		done()
		return
	}
	if err != nil {
		done()
		// The object is as it was: the write after this one gets back
		// the time it ends with, once the write before it is settled.
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.baseTime(p)
			dropPrior(p)
			s.over(p, true)
		}()
		return
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer done()
		same := false
		defer func() { s.over(p, same) }()
		defer dropPrior(p)
		s.baseTime(p)
		// The object as it is now, held open: what is compared is what
		// gets the time back, even if another write replaces the object
		// meanwhile (that one keeps its own time, and counts).
		f, err := os.Open(p.path)
		if err != nil {
			return
		}
		defer f.Close()
		var why string
		if same, why = s.same(p, f); !same {
			return
		}
		if s.compared != nil {
			s.compared() // tests: another write may land here
		}
		if err := setModTime(f, p.mtime); err != nil {
			s.log.Warn("an object written again with the same bytes keeps its new modification time; its trace will be processed again", "key", p.key, "err", err)
			return
		}
		s.log.Info("object written again with the same bytes: its modification time is kept", "key", p.key, "by", why)
	}()
}

// same reports whether f, the object now, holds the bytes p kept, and
// how that was told.
func (s *sameKeeper) same(p *prior, f *os.File) (bool, string) {
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() != p.size {
		return false, "size"
	}
	if old, err := os.Lstat(p.link); err != nil || os.SameFile(fi, old) {
		return false, "" // not replaced (a failed write left it), or the link went
	}
	var etag string
	if e, err := (meta.XattrMeta{}).RetrieveAttribute(f, "", "", "etag"); err == nil {
		etag = string(e)
	}
	switch etagsSay(p.etag, etag) {
	case sameBytes:
		return true, "checksum"
	case otherBytes:
		return false, "checksum"
	}
	eq, err := sameContent(s.ctx, f, p.link)
	if err != nil {
		if !errors.Is(err, context.Canceled) {
			s.log.Warn("comparing an object written again with its earlier bytes", "key", p.key, "err", err)
		}
		return false, ""
	}
	return eq, "comparison"
}

// wait waits for the comparisons under way, which Close has cancelled.
func (s *sameKeeper) wait() {
	if s != nil {
		s.wg.Wait()
	}
}

type etagVerdict int

const (
	unknown etagVerdict = iota
	sameBytes
	otherBytes
)

// strongETag matches the ETags whose checksum has 64 bits or more: a
// whole object's or a part's CRC64NVME, SHA-1 or SHA-256 (with "-<parts>"
// for a composite), and the backend's multipart token, a SHA-256 over
// the parts' CRC64NVMEs.
var strongETag = regexp.MustCompile(`^"?(?:(?:CRC64NVME|SHA1|SHA256)-[A-Za-z0-9+/=]+|[0-9a-f]{64})(?:-[0-9]+)?"?$`)

// wholeETag matches an ETag that is one checksum of the whole object.
var wholeETag = regexp.MustCompile(`^"?[A-Z0-9]+-[A-Za-z0-9+/=]+"?$`)

// etagsSay tells what two ETags the gateway stored (posixOpts) say of
// their objects' bytes.
func etagsSay(a, b string) etagVerdict {
	switch {
	case a == "" || b == "":
		return unknown
	case a == b && strongETag.MatchString(a):
		return sameBytes
	case a != b && wholeETag.MatchString(a) && wholeETag.MatchString(b) && etagAlgorithm(a) == etagAlgorithm(b):
		return otherBytes
	}
	return unknown
}

func etagAlgorithm(etag string) string {
	alg, _, _ := strings.Cut(strings.Trim(etag, `"`), "-")
	return alg
}

// sameContent compares the bytes of fa, from its start, with those of
// the file b.
func sameContent(ctx context.Context, fa *os.File, b string) (bool, error) {
	if _, err := fa.Seek(0, io.SeekStart); err != nil {
		return false, err
	}
	fb, err := os.Open(b)
	if err != nil {
		return false, err
	}
	defer fb.Close()
	const chunk = 1 << 20
	ba, bb := make([]byte, chunk), make([]byte, chunk)
	for {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		na, ea := io.ReadFull(fa, ba)
		nb, eb := io.ReadFull(fb, bb)
		if na != nb || !bytes.Equal(ba[:na], bb[:nb]) {
			return false, nil
		}
		endA := ea == io.EOF || ea == io.ErrUnexpectedEOF
		endB := eb == io.EOF || eb == io.ErrUnexpectedEOF
		switch {
		case endA && endB:
			return true, nil
		case ea != nil && !endA:
			return false, ea
		case eb != nil && !endB:
			return false, eb
		case endA != endB:
			return false, nil
		}
	}
}

// setModTime sets the modification time of the file f is open on (its
// access time as it is), by the descriptor's /proc entry: the file f
// was opened on, wherever its name points now.
func setModTime(f *os.File, t time.Time) error {
	ts := []unix.Timespec{{Nsec: unix.UTIME_OMIT}, unix.NsecToTimespec(t.UnixNano())}
	return unix.UtimesNanoAt(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(int(f.Fd())), ts, 0)
}
