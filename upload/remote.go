package upload

import (
	"context"
	"crypto/md5"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"net/http"
	"os"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go/middleware"
	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/tracedir"
	"github.com/minio/crc64nvme"
	"golang.org/x/sync/errgroup"
)

// Keys is the access key pair requests to an Endpoint are signed with.
type Keys = cascade.S3Keys

// DefaultParallel is how many parts of a large file go to an Endpoint at
// once when Options.Parallel is 0.
const DefaultParallel = 4

const (
	// defaultPartSize keeps a part's retry cheap and the progress bar
	// moving, while a 2 GB kernel is still only 128 requests.
	defaultPartSize = 16 << 20
	maxParts        = 10000
)

// remote uploads a trace to a Cascade's S3 endpoint with the AWS SDK: the
// same order as a local upload (data files, then metadata.json with its
// files list), multipart for files larger than a part with the parts sent
// in parallel, and an interrupted upload resumed: files already there at
// the right size and modification time (see unchanged) are skipped, and so are the parts of an unfinished
// multipart upload whose size and checksums match (see partMatches).
type remote struct {
	client   *s3.Client
	bucket   string
	prefix   string // "traces/<run>/"
	partSize int64
	opts     Options

	mu   sync.Mutex // guards prog and res's counters
	prog *progress
	res  *Result
}

func newClient(opts Options) *s3.Client {
	return s3.New(s3.Options{
		BaseEndpoint: aws.String(strings.TrimSuffix(opts.Endpoint, "/")),
		Region:       "us-east-1",
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider(opts.Keys.AccessKey, opts.Keys.SecretKey, ""),
		HTTPClient: &http.Client{Transport: &http.Transport{
			Proxy:               http.ProxyFromEnvironment,
			MaxIdleConnsPerHost: 2 * max(opts.Parallel, DefaultParallel),
			IdleConnTimeout:     90 * time.Second,
		}},
		// The payload is not signed (no SHA-256 of the body, on either side):
		// every body carries its CRC64NVME instead (see checksumOf), which
		// the gateway verifies, at a fraction of SHA-256's cost. The SDK's own
		// checksums are off so it does not add a second one.
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		APIOptions:                 []func(*middleware.Stack) error{v4.SwapComputePayloadSHA256ForUnsignedPayloadMiddleware},
	})
}

func uploadRemote(ctx context.Context, opts Options, src *source, meta *metadata, runName string) (Result, error) {
	if err := checkEndpoint(opts.Endpoint); err != nil {
		return Result{}, err
	}
	if opts.Bucket == "" {
		opts.Bucket = "cascade"
	}
	if opts.Parallel <= 0 {
		opts.Parallel = DefaultParallel
	}
	r := &remote{
		client: newClient(opts),
		bucket: opts.Bucket,
		prefix: path.Join(opts.Prefix, runName) + "/",
		opts:   opts,
	}
	res := Result{RunName: runName, Dest: strings.TrimSuffix(opts.Endpoint, "/") + "/" + opts.Bucket + "/" + r.prefix}
	r.res = &res

	there, err := r.list(ctx)
	if err != nil {
		return res, requestFailed(opts, "list "+res.Dest, err)
	}
	conflict, extra := remoteConflict(res.Dest, there, src)
	if conflict != "" && !opts.Force {
		return res, fmt.Errorf("%w: %s", ErrExists, conflict)
	}
	_, complete := there["metadata.json"]
	var check []sourceFile // there at the right size: is it at the right time?
	for _, f := range src.files {
		if size, ok := there[f.rel]; ok && size == f.size {
			check = append(check, f)
		}
	}
	same, err := r.unchanged(ctx, check)
	if err != nil {
		return res, requestFailed(opts, "", err)
	}
	again := opts.Force && complete && uploadedAgain(src, func(f sourceFile) bool { return same[f.rel] }, extra)
	if opts.Force && !again {
		if err := r.clear(ctx, there, extra); err != nil {
			return res, requestFailed(opts, "", err)
		}
		res.Removed = len(extra)
	}

	var todo []sourceFile
	var total int64
	for _, f := range src.files {
		res.Files = append(res.Files, File{Path: f.rel, Size: f.size})
		if unchanged, checked := same[f.rel]; checked {
			if unchanged {
				res.Skipped++
				continue
			}
			res.Changed++
		}
		todo = append(todo, f)
		total += f.size
	}
	if opts.Progress != nil {
		fmt.Fprintf(opts.Progress, "upload: %s -> %s: sending %d files (%s)%s\n", src.root, res.Dest, len(todo), formatBytes(total), resumeNote(res))
	}
	r.prog = newProgress(opts.Progress, opts.Terminal, opts.Width, total, opts.now, opts.interval)
	err = r.sendAll(ctx, todo)
	r.prog.finish()
	if err != nil {
		if ctx.Err() != nil {
			return res, fmt.Errorf("upload: interrupted: %w", ctx.Err())
		}
		return res, requestFailed(opts, "", err)
	}

	meta.set("files", nil)
	data, err := meta.encode(res.Files)
	if err != nil {
		return res, fmt.Errorf("upload: %s: %w", src.metadata, err)
	}
	if err := r.put(ctx, "metadata.json", strings.NewReader(string(data)), int64(len(data)), nil); err != nil {
		return res, requestFailed(opts, "metadata.json", err)
	}
	return res, nil
}

// list returns the objects under the trace's prefix by relative path,
// dotfiles and what is in dot folders left out, as in a local
// destination (the app skips them; an S3 client may have stored a
// .DS_Store).
func (r *remote) list(ctx context.Context) (map[string]int64, error) {
	there := map[string]int64{}
	p := s3.NewListObjectsV2Paginator(r.client, &s3.ListObjectsV2Input{Bucket: &r.bucket, Prefix: &r.prefix})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		if _, ok := awsmiddleware.GetRequestIDMetadata(page.ResultMetadata); !ok {
			// Not an S3 server: a web server's page reads as an empty
			// listing, and its answers to the PUTs as success.
			return nil, errNotS3
		}
		for _, o := range page.Contents {
			rel := strings.TrimPrefix(aws.ToString(o.Key), r.prefix)
			if rel != "" && !strings.HasSuffix(rel, "/") && !tracedir.IsDotPath(rel) {
				there[rel] = aws.ToInt64(o.Size)
			}
		}
	}
	return there, nil
}

// remoteConflict applies the rules of a local upload (see inspectDest) to
// the objects already under the trace's prefix, and returns why writing
// there would overwrite another trace ("" when it is safe) and the objects
// the source does not have.
func remoteConflict(dest string, there map[string]int64, src *source) (conflict string, extra []string) {
	want := map[string]int64{}
	for _, f := range src.files {
		want[f.rel] = f.size
	}
	for rel, size := range there {
		if rel == "metadata.json" {
			continue
		}
		w, ok := want[rel]
		switch {
		case !ok:
			extra = append(extra, rel)
		case size > w && conflict == "":
			conflict = fmt.Sprintf("%s: %s is %d bytes there but %d bytes in the source", dest, rel, size, w)
		}
	}
	switch _, ok := there["metadata.json"]; {
	case ok:
		conflict = fmt.Sprintf("%s has a metadata.json (an upload that finished, or came from elsewhere)", dest)
	case len(extra) > 0:
		conflict = fmt.Sprintf("%s holds %d objects that are not in the source, such as %s", dest, len(extra), extra[0])
	}
	return conflict, extra
}

// clear deletes metadata.json first, so the app sees an upload again, then
// the objects the source does not have.
func (r *remote) clear(ctx context.Context, there map[string]int64, extra []string) error {
	if _, ok := there["metadata.json"]; ok {
		extra = append([]string{"metadata.json"}, extra...)
	}
	for _, rel := range extra {
		key := r.prefix + rel
		if _, err := r.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &r.bucket, Key: &key}); err != nil {
			return fmt.Errorf("delete %s: %w", key, err)
		}
	}
	return nil
}

// sendAll sends the data files: small ones whole, large ones in parts,
// at most opts.Parallel requests at a time.
func (r *remote) sendAll(ctx context.Context, files []sourceFile) error {
	work, wctx := errgroup.WithContext(ctx)
	work.SetLimit(r.opts.Parallel)
	// Completing a multipart upload waits for its parts, so it runs
	// outside the limited group and cannot hold a slot a part needs.
	var finish errgroup.Group
	for _, f := range files {
		if wctx.Err() != nil {
			break
		}
		size := r.partSizeFor(f.size)
		if f.size <= size {
			work.Go(func() error { return r.sendWhole(wctx, f) })
			continue
		}
		mp, err := r.startMultipart(wctx, f, size)
		if err != nil {
			work.Go(func() error { return err })
			break
		}
		var parts sync.WaitGroup
		for i := range mp.parts {
			parts.Add(1)
			work.Go(func() error {
				defer parts.Done()
				err := r.sendPart(wctx, mp, i)
				if err != nil {
					mp.failed.Store(true)
				}
				return err
			})
		}
		finish.Go(func() error {
			parts.Wait()
			if mp.failed.Load() {
				return nil // the failed part's error is work's
			}
			return r.complete(ctx, mp)
		})
	}
	if err := errors.Join(work.Wait(), finish.Wait()); err != nil {
		return err
	}
	return ctx.Err() // cancelled before every file was started
}

func (r *remote) partSizeFor(size int64) int64 {
	ps := r.opts.PartSize
	if ps <= 0 {
		ps = defaultPartSize
	}
	if n := (size + ps - 1) / ps; n > maxParts {
		ps = (size + maxParts - 1) / maxParts
		ps = (ps + 1<<20 - 1) &^ (1<<20 - 1) // whole MiB
	}
	return ps
}

func (r *remote) sendWhole(ctx context.Context, f sourceFile) error {
	in, err := os.Open(f.path)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := r.put(ctx, f.rel, io.NewSectionReader(in, 0, f.size), f.size, mtimeMetadata(f)); err != nil {
		return fmt.Errorf("%s: %w", f.rel, err)
	}
	r.done(f.size, func(res *Result) { res.Copied++ })
	return nil
}

// put sends body as the object rel with the user metadata meta.
func (r *remote) put(ctx context.Context, rel string, body io.ReadSeeker, size int64, meta map[string]string) error {
	key := r.prefix + rel
	sum, err := checksumOf(body, types.ChecksumAlgorithmCrc64nvme)
	if err != nil {
		return err
	}
	_, err = r.client.PutObject(ctx, &s3.PutObjectInput{
		Bucket: &r.bucket, Key: &key, Body: body, ContentLength: &size, ChecksumCRC64NVME: &sum, Metadata: meta,
	})
	return err
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// checksumOf returns the CRC64NVME, or with algo CRC32C the CRC32C, of
// what body holds, as S3's x-amz-checksum-* headers carry it (base64 of
// the big-endian value), and seeks body back to its start. Bodies are sent
// unsigned, so this checksum, verified by the gateway, is what refuses a
// body changed on the way. Both are computed with the CPU's vector
// instructions, many times faster than the SHA-256 of a signed payload.
// CRC64NVME is what the gateway keeps of every object anyway (its ETag),
// so a body that carries it is hashed once on the server, not twice (see
// s3gw's crc64Body); CRC32C is for resuming an upload that an older
// `cascade upload` started with it.
func checksumOf(body io.ReadSeeker, algo types.ChecksumAlgorithm) (string, error) {
	var h hash.Hash = crc64nvme.New()
	if algo == types.ChecksumAlgorithmCrc32c {
		h = crc32.New(castagnoli)
	}
	if _, err := io.Copy(h, body); err != nil {
		return "", err
	}
	if _, err := body.Seek(0, io.SeekStart); err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(h.Sum(nil)), nil
}

// done counts n bytes sent and updates the result under the lock.
func (r *remote) done(n int64, update func(*Result)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.prog.add(n)
	r.res.CopiedBytes += n
	update(r.res)
}

// multipart is one file's multipart upload.
type multipart struct {
	file     sourceFile
	key      string
	uploadID string
	partSize int64
	parts    []types.CompletedPart // by part number - 1; ETag set once sent
	existing map[int32]types.Part  // parts of an interrupted upload
	// algo is the checksum algorithm the upload was created with:
	// CRC64NVME (or CRC32C, by an older `cascade upload`), whose value the
	// gateway keeps of each part and the complete request must name, or
	// none (an upload started by another client), whose parts carry a
	// CRC64NVME.
	algo   types.ChecksumAlgorithm
	failed atomic.Bool // a part was not sent
}

// startMultipart resumes the newest unfinished multipart upload of the
// file's key, or starts one.
func (r *remote) startMultipart(ctx context.Context, f sourceFile, partSize int64) (*multipart, error) {
	mp := &multipart{file: f, key: r.prefix + f.rel, partSize: partSize, existing: map[int32]types.Part{}}
	n := (f.size + partSize - 1) / partSize
	mp.parts = make([]types.CompletedPart, n)
	for i := range mp.parts {
		mp.parts[i].PartNumber = aws.Int32(int32(i + 1))
	}
	ups, err := r.client.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: &r.bucket, Prefix: &mp.key})
	if err != nil {
		return nil, fmt.Errorf("%s: list unfinished uploads: %w", f.rel, err)
	}
	var newest *types.MultipartUpload
	for i, u := range ups.Uploads {
		// An upload with another checksum algorithm (not ours) would
		// refuse parts carrying ours.
		switch u.ChecksumAlgorithm {
		case "", types.ChecksumAlgorithmCrc64nvme, types.ChecksumAlgorithmCrc32c:
		default:
			continue
		}
		if aws.ToString(u.Key) == mp.key && (newest == nil || aws.ToTime(u.Initiated).After(aws.ToTime(newest.Initiated))) {
			newest = &ups.Uploads[i]
		}
	}
	if newest != nil && !r.opts.Force {
		mp.uploadID = aws.ToString(newest.UploadId)
		mp.algo = newest.ChecksumAlgorithm
		p := s3.NewListPartsPaginator(r.client, &s3.ListPartsInput{Bucket: &r.bucket, Key: &mp.key, UploadId: &mp.uploadID})
		for p.HasMorePages() {
			page, err := p.NextPage(ctx)
			if err != nil {
				return nil, fmt.Errorf("%s: list parts: %w", f.rel, err)
			}
			for _, part := range page.Parts {
				mp.existing[aws.ToInt32(part.PartNumber)] = part
			}
		}
		return mp, nil
	}
	// With CRC64NVME named here the gateway verifies and keeps each part's
	// CRC64NVME, which is also the part's ETag, and computes no other
	// checksum of the data. The object gets the file's time when complete.
	out, err := r.client.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{
		Bucket: &r.bucket, Key: &mp.key, Metadata: mtimeMetadata(f),
		ChecksumAlgorithm: types.ChecksumAlgorithmCrc64nvme, ChecksumType: types.ChecksumTypeFullObject,
	})
	if err != nil {
		return nil, fmt.Errorf("%s: start multipart upload: %w", f.rel, err)
	}
	mp.uploadID = aws.ToString(out.UploadId)
	mp.algo = types.ChecksumAlgorithmCrc64nvme
	return mp, nil
}

// sendPart sends part i+1 unless the interrupted upload has it already
// with the same size and content (see partMatches).
func (r *remote) sendPart(ctx context.Context, mp *multipart, i int) error {
	in, err := os.Open(mp.file.path)
	if err != nil {
		return err
	}
	defer in.Close()
	off := int64(i) * mp.partSize
	size := min(mp.partSize, mp.file.size-off)
	body := io.NewSectionReader(in, off, size)
	num := int32(i + 1)
	if have, ok := mp.existing[num]; ok && aws.ToInt64(have.Size) == size {
		same, err := partMatches(have, body)
		if err != nil {
			return fmt.Errorf("%s: %w", mp.file.rel, err)
		}
		if same {
			mp.parts[i].ETag = have.ETag
			switch mp.algo {
			case types.ChecksumAlgorithmCrc32c:
				mp.parts[i].ChecksumCRC32C = have.ChecksumCRC32C
			case types.ChecksumAlgorithmCrc64nvme:
				mp.parts[i].ChecksumCRC64NVME = have.ChecksumCRC64NVME
			}
			r.mu.Lock()
			r.prog.add(size)
			r.res.PartsSkipped++
			r.mu.Unlock()
			return nil
		}
		body = io.NewSectionReader(in, off, size)
	}
	sum, err := checksumOf(body, mp.algo)
	if err != nil {
		return fmt.Errorf("%s: %w", mp.file.rel, err)
	}
	req := &s3.UploadPartInput{
		Bucket: &r.bucket, Key: &mp.key, UploadId: &mp.uploadID,
		PartNumber: &num, Body: body, ContentLength: &size,
	}
	if mp.algo == types.ChecksumAlgorithmCrc32c {
		req.ChecksumCRC32C = &sum
	} else {
		req.ChecksumCRC64NVME = &sum
	}
	out, err := r.client.UploadPart(ctx, req)
	if err != nil {
		return fmt.Errorf("%s: part %d: %w", mp.file.rel, num, err)
	}
	mp.parts[i].ETag = out.ETag
	switch mp.algo {
	case types.ChecksumAlgorithmCrc32c:
		mp.parts[i].ChecksumCRC32C = &sum
	case types.ChecksumAlgorithmCrc64nvme:
		mp.parts[i].ChecksumCRC64NVME = &sum
	}
	r.done(size, func(res *Result) { res.PartsSent++ })
	if r.opts.PartSent != nil {
		r.opts.PartSent(mp.key, num)
	}
	return nil
}

func (r *remote) complete(ctx context.Context, mp *multipart) error {
	_, err := r.client.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{
		Bucket: &r.bucket, Key: &mp.key, UploadId: &mp.uploadID,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: mp.parts},
	})
	if err != nil {
		return fmt.Errorf("%s: complete multipart upload: %w", mp.file.rel, err)
	}
	r.mu.Lock()
	r.res.Copied++
	r.mu.Unlock()
	return nil
}

// partMatches reports whether a part the server has holds what body holds,
// by the checksums the server lists for it: the part's ETag, which is the
// MD5 of its bytes as hex (S3's own, and the gateway's before it named
// checksums in ETags) or "CRC64NVME-" and the base64 of its CRC64NVME (the
// gateway's now, which computes no MD5), and the CRC64NVME or CRC32C the
// part was sent with when the upload keeps one. Every checksum listed must
// match, and at least one must be known; a part whose ETag is of another
// form is sent again.
func partMatches(have types.Part, body io.Reader) (bool, error) {
	etag := strings.Trim(aws.ToString(have.ETag), `"`)
	var etagHash hash.Hash
	var want string
	switch {
	case len(etag) == 32 && isHex(etag):
		etagHash, want = md5.New(), etag
	case strings.HasPrefix(etag, "CRC64NVME-"):
		etagHash, want = crc64nvme.New(), strings.TrimPrefix(etag, "CRC64NVME-")
	default:
		return false, nil
	}
	hashes := []io.Writer{etagHash}
	var c32, c64 hash.Hash
	if have.ChecksumCRC32C != nil {
		c32 = crc32.New(castagnoli)
		hashes = append(hashes, c32)
	}
	if have.ChecksumCRC64NVME != nil {
		c64 = crc64nvme.New()
		hashes = append(hashes, c64)
	}
	if _, err := io.Copy(io.MultiWriter(hashes...), body); err != nil {
		return false, err
	}
	got := hex.EncodeToString(etagHash.Sum(nil))
	if _, ok := etagHash.(hash.Hash64); ok {
		got = base64.StdEncoding.EncodeToString(etagHash.Sum(nil))
	}
	if got != want {
		return false, nil
	}
	if c32 != nil && base64.StdEncoding.EncodeToString(c32.Sum(nil)) != aws.ToString(have.ChecksumCRC32C) {
		return false, nil
	}
	if c64 != nil && base64.StdEncoding.EncodeToString(c64.Sum(nil)) != aws.ToString(have.ChecksumCRC64NVME) {
		return false, nil
	}
	return true, nil
}

func isHex(s string) bool {
	_, err := hex.DecodeString(s)
	return err == nil
}
