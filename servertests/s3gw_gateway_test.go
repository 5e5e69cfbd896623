package servertests_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/cascade-sim/cascade/app"
	"github.com/cascade-sim/cascade/s3gw"
	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/s3test"
	"github.com/cascade-sim/cascade/testkit/servertest"
)

// files lists the regular files under root by slash path, dotfiles and
// dot directories included, with their sizes.
func files(t *testing.T, root string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		out[filepath.ToSlash(rel)] = info.Size()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// visible is what the scanner can see: files with no dot component.
func visible(all map[string]int64) []string {
	var out []string
	for rel := range all {
		if !strings.HasPrefix(rel, ".") && !strings.Contains(rel, "/.") {
			out = append(out, rel)
		}
	}
	return out
}

func client(url string, keys s3gw.Keys) *s3.Client {
	return s3.New(s3.Options{
		BaseEndpoint: aws.String(url),
		Region:       "us-east-1",
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider(keys.AccessKey, keys.SecretKey, ""),
	})
}

func apiCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

// TestMultipartUpload drives a 112 MB multipart upload of 7 parts with
// boto3, looks at the disk once every part is there and before the upload
// is completed or aborted: the object is not at its path and nothing the
// scanner reads has appeared. Completed, the object is whole at its path;
// aborted, nothing of it is left.
func TestMultipartUpload(t *testing.T) {
	needBoto3(t)
	s := servertest.Server(t, s3test.WithS3)
	src := filepath.Join(t.TempDir(), "big.trace")
	data := bytes.Repeat([]byte("multipart kernel trace line\n"), 112<<20/28)
	if err := os.WriteFile(src, data, 0o644); err != nil {
		t.Fatal(err)
	}
	bucket := filepath.Join(s.DataDir, "s3", "cascade")
	script := filepath.Join(testkit.ModuleRoot(), "s3gw", "testdata", "boto3_multipart.py")
	for _, step := range []string{"complete", "abort"} {
		t.Run(step, func(t *testing.T) {
			key := "traces/mp-" + step + "/traces/kernel-1.trace"
			cmd := exec.Command("python3", script, s.S3.URL, "cascade", key, src, "16777216")
			cmd.Env = clientEnv(t)
			stdin, _ := cmd.StdinPipe()
			stdout, _ := cmd.StdoutPipe()
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			lines := bufio.NewScanner(stdout)
			if !lines.Scan() || lines.Text() != "parts 7" {
				cmd.Wait()
				t.Fatalf("boto3 said %q, want \"parts 7\": %s", lines.Text(), stderr.String())
			}
			// Every part is on disk now, only under .sgwtmp.
			before := files(t, bucket)
			var staged int64
			for rel, size := range before {
				if strings.HasPrefix(rel, ".sgwtmp/multipart/") {
					staged += size
				}
			}
			if staged != int64(len(data)) {
				t.Fatalf("%d bytes staged under .sgwtmp/multipart, want %d: %v", staged, len(data), before)
			}
			for _, rel := range visible(before) {
				if strings.HasPrefix(rel, "traces/mp-"+step+"/") {
					t.Fatalf("the scanner sees %s before CompleteMultipartUpload", rel)
				}
			}
			io.WriteString(stdin, step+"\n")
			if !lines.Scan() || lines.Text() != "done" {
				cmd.Wait()
				t.Fatalf("boto3 said %q after %s: %s", lines.Text(), step, stderr.String())
			}
			if err := cmd.Wait(); err != nil {
				t.Fatalf("boto3: %v: %s", err, stderr.String())
			}
			after := files(t, bucket)
			mine := 0
			for _, rel := range visible(after) {
				if strings.HasPrefix(rel, "traces/mp-"+step+"/") {
					mine++
				}
			}
			for rel := range after {
				if strings.HasPrefix(rel, ".sgwtmp/") {
					t.Errorf("left after %s: %s", step, rel)
				}
			}
			got, err := os.ReadFile(filepath.Join(bucket, filepath.FromSlash(key)))
			switch step {
			case "complete":
				if err != nil || sha256.Sum256(got) != sha256.Sum256(data) || mine != 1 {
					t.Fatalf("completed object: %v, %d bytes, want %d; %d files of it", err, len(got), len(data), mine)
				}
			case "abort":
				if !errors.Is(err, fs.ErrNotExist) {
					t.Fatalf("aborted object: %v, want no file", err)
				}
				if mine != 0 {
					t.Fatalf("files after the abort: %v", visible(after))
				}
			}
		})
	}
}

// TestUnsignedAndWronglySignedRequestsAreRefused uploads with the AWS CLI
// without a signature and with a wrong secret: S3's AccessDenied and
// SignatureDoesNotMatch, and nothing written.
func TestUnsignedAndWronglySignedRequestsAreRefused(t *testing.T) {
	needTool(t, "aws")
	s := servertest.Server(t, s3test.WithS3)
	src := filepath.Join(testkit.ModuleRoot(), "samples", "quickstart", "metadata.json")
	env := clientEnv(t)
	for _, c := range []struct {
		name, want string
		env        []string
		args       []string
	}{
		{"unsigned", "AccessDenied", env, []string{"--no-sign-request"}},
		{"wrong secret", "SignatureDoesNotMatch", append(env[:len(env):len(env)], "AWS_SECRET_ACCESS_KEY=not-the-secret"), nil},
		{"unknown key", "InvalidAccessKeyId", append(env[:len(env):len(env)], "AWS_ACCESS_KEY_ID=AKIANOTAKEYOFCASCADE"), nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"--endpoint-url", s.S3.URL}, c.args...)
			args = append(args, "s3", "cp", src, "s3://cascade/traces/refused/metadata.json")
			out, err := runIn(t.TempDir(), c.env, "aws", args...)
			if err == nil || !strings.Contains(out, c.want) {
				t.Fatalf("aws %v: %v, want %s:\n%s", c.args, err, c.want, out)
			}
		})
	}
	if _, err := os.Stat(s.TraceDir("refused")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("refused uploads left %s: %v", s.TraceDir("refused"), err)
	}
}

// TestKeysCannotEscapeOrHide sends keys that climb out of the bucket, are
// absolute, hold a "." component, a control character or a name the
// gateway keeps for its own files, or put a trace in a dot folder the
// scanner would skip: each is refused with an S3 error and nothing is
// written anywhere in the data directory. Odd but harmless characters,
// and dotfiles (.DS_Store), are stored under exactly that name.
func TestKeysCannotEscapeOrHide(t *testing.T) {
	s := servertest.Server(t, s3test.WithS3)
	c := client(s.S3.URL, s3test.Keys)
	ctx := context.Background()
	before := files(t, s.DataDir)
	for _, key := range []string{
		"../escaped",
		"traces/../../escaped",
		"traces/x/../../../../escaped",
		"/escaped",
		"traces//escaped",
		"traces/.hidden/kernel-1.trace",
		"traces/.hidden/",
		".sgwtmp/multipart/escaped",
		".sgwtmp/cascade-prior-0123456789abcdef",
		"traces/x/.sgwtmp/y",
		"traces/x/.kernel-1.trace.sgwtmp.1700000000000000000",
		".vgwlocks/x",
		"traces/x/./kernel-1.trace",
		"traces/x/a\x01b",
		"traces/x/" + strings.Repeat("k", 256),
	} {
		_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("cascade"), Key: aws.String(key), Body: strings.NewReader("x")})
		if err == nil {
			t.Errorf("PutObject %q succeeded", key)
			continue
		}
		if code := apiCode(err); code == "" || code == "InternalError" {
			t.Errorf("PutObject %q: %v, want an S3 client error", key, err)
		}
		_, err = c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("cascade"), Key: aws.String(key)})
		if err == nil {
			t.Errorf("CreateMultipartUpload %q succeeded", key)
		}
	}
	if after := files(t, s.DataDir); len(after) != len(before) {
		for rel := range after {
			if _, ok := before[rel]; !ok && !strings.HasPrefix(rel, "s3/.vgwlocks/") && !strings.HasSuffix(rel, "-wal") && !strings.HasSuffix(rel, "-shm") {
				t.Errorf("written: %s", rel)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(s.DataDir), "escaped")); err == nil {
		t.Error("a key escaped the data directory")
	}

	for _, key := range []string{
		"traces/odd/ä b+c%d?e=f&g'h",
		"traces/x/.DS_Store",
		"traces/x/traces/.kernel-1.trace",
		"traces/x/.git/HEAD",
		"traces/.DS_Store", // a file beside the trace folders, not one
		".DS_Store",
		"other/.hidden/x",
	} {
		if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("cascade"), Key: aws.String(key), Body: strings.NewReader("odd")}); err != nil {
			t.Fatalf("PutObject %q: %v", key, err)
		}
		if got, err := os.ReadFile(filepath.Join(s.DataDir, "s3", "cascade", filepath.FromSlash(key))); err != nil || string(got) != "odd" {
			t.Fatalf("%q on disk: %q, %v", key, got, err)
		}
	}

	// Clients with the key may make buckets of their own, beside the watched one.
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("scratch")}); err != nil {
		t.Fatalf("CreateBucket: %v", err)
	}
	if fi, err := os.Stat(filepath.Join(s.DataDir, "s3", "scratch")); err != nil || !fi.IsDir() {
		t.Fatalf("bucket directory: %v", err)
	}
}

// onSmallDisk starts a server with the S3 endpoint whose storage root is a
// tmpfs of the given size ("16m"), and returns the root. It skips the test
// unless it runs as root, for mount(2), or, outside CI, when the mount
// fails.
func onSmallDisk(t *testing.T, size string) (*servertest.TestServer, string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a small file system")
	}
	mounted := ""
	s := servertest.Server(t, s3test.WithS3, func(c *app.Config) {
		root := filepath.Join(c.DataDir, "s3")
		if err := os.MkdirAll(root, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mount("tmpfs", root, "tmpfs", 0, "size="+size); err != nil {
			if os.Getenv("CI") == "" {
				t.Skipf("mount tmpfs: %v", err)
			}
			t.Fatalf("mount tmpfs: %v", err)
		}
		mounted = root
	})
	t.Cleanup(func() {
		s.Close() // before the unmount, which runs before the data directory's removal
		if err := syscall.Unmount(mounted, 0); err != nil {
			t.Errorf("unmount %s: %v", mounted, err)
		}
	})
	return s, mounted
}

// TestFullDiskFailsTheRequest puts the storage root on a 16 MiB tmpfs and
// uploads 24 MiB: the request fails with S3's InsufficientStorage and
// leaves no file, so the space is free again for the next upload. It
// needs root, for mount(2).
func TestFullDiskFailsTheRequest(t *testing.T) {
	s, mounted := onSmallDisk(t, "16m")
	c := client(s.S3.URL, s3test.Keys)
	ctx := context.Background()
	big := bytes.Repeat([]byte("k"), 24<<20)
	_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("cascade"), Key: aws.String("traces/full/traces/kernel-1.trace"), Body: bytes.NewReader(big)})
	if code := apiCode(err); code != "InsufficientStorage" {
		t.Fatalf("PutObject on a full disk: %v, want InsufficientStorage", err)
	}
	for rel := range files(t, mounted) {
		if !strings.HasPrefix(rel, ".vgwlocks/") {
			t.Errorf("left on the full disk: %s", rel)
		}
	}
	small := bytes.Repeat([]byte("k"), 8<<20)
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("cascade"), Key: aws.String("traces/full/traces/kernel-2.trace"), Body: bytes.NewReader(small)}); err != nil {
		t.Fatalf("8 MiB after the failed upload: %v", err)
	}
}

// TestPutIsInvisibleUntilComplete streams a PUT through a pipe and stops
// half way, once the server holds the object's temporary file open:
// nothing the scanner reads has appeared. The rest of the body makes the
// object appear whole at its path.
func TestPutIsInvisibleUntilComplete(t *testing.T) {
	s := servertest.Server(t, s3test.WithS3)
	bucket := filepath.Join(s.DataDir, "s3", "cascade")
	key := "traces/streamed/traces/kernel-1.trace"
	half := bytes.Repeat([]byte("streamed kernel trace line\n"), 8<<20/27)
	// A pipe cannot be hashed before it is sent: streamedPut signs the
	// request with an unsigned payload, as streaming clients do.
	pw, done := streamedPut(t, s.S3.URL, key, int64(2*len(half)))
	if _, err := pw.Write(half); err != nil {
		t.Fatalf("%v: %v", err, <-done)
	}
	// The server (in this process) writes the object to an unnamed
	// O_TMPFILE in the bucket's .sgwtmp, or a named file there.
	testkit.Eventually(t, 10*time.Second, "the server writes the object to a temporary file", func() bool {
		fds, _ := os.ReadDir("/proc/self/fd")
		for _, fd := range fds {
			if target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil && strings.HasPrefix(target, filepath.Join(bucket, ".sgwtmp")) {
				return true
			}
		}
		return false
	})
	if v := visible(files(t, bucket)); len(v) != 0 {
		t.Fatalf("the scanner sees %v half way through a PUT", v)
	}
	if _, err := pw.Write(half); err != nil {
		t.Fatalf("%v: %v", err, <-done)
	}
	pw.Close()
	if err := <-done; err != nil {
		t.Fatalf("PUT: %v", err)
	}
	got, err := os.ReadFile(filepath.Join(bucket, filepath.FromSlash(key)))
	if err != nil || !bytes.Equal(got, append(half, half...)) {
		t.Fatalf("object: %v, %d bytes, want %d", err, len(got), 2*len(half))
	}
}

// TestCompleteNeedsRoomForOneMorePart puts the storage root on a 56 MiB
// tmpfs and uploads 38 MiB in seven parts, the last of 8 MiB. Completing
// needs room for the upload and its largest part, not the upload twice, as
// each part is moved into the object. A completion on a disk too full for
// the first part fails with InsufficientStorage and leaves the upload
// whole; one that runs out of room half way fails the same, publishes
// nothing, and removes the upload, whose parts it has partly used. It needs
// root, for mount(2).
func TestCompleteNeedsRoomForOneMorePart(t *testing.T) {
	s, mounted := onSmallDisk(t, "56m")
	c := client(s.S3.URL, s3test.Keys)
	ctx := context.Background()
	key := "traces/moved/traces/kernel-1.trace"
	var data []byte
	for n := 1; n <= 7; n++ {
		size := 5 << 20
		if n == 7 {
			size = 8 << 20
		}
		data = append(data, bytes.Repeat([]byte{'a' + byte(n)}, size)...)
	}
	upload := func() *s3.CompleteMultipartUploadInput {
		t.Helper()
		up, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("cascade"), Key: aws.String(key)})
		if err != nil {
			t.Fatal(err)
		}
		var parts []types.CompletedPart
		for n := int32(1); n <= 7; n++ {
			part := data[(n-1)*5<<20:]
			if n < 7 {
				part = part[:5<<20]
			}
			out, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("cascade"), Key: aws.String(key), UploadId: up.UploadId, PartNumber: aws.Int32(n), Body: bytes.NewReader(part)})
			if err != nil {
				t.Fatalf("part %d: %v", n, err)
			}
			parts = append(parts, types.CompletedPart{PartNumber: aws.Int32(n), ETag: out.ETag})
		}
		return &s3.CompleteMultipartUploadInput{Bucket: aws.String("cascade"), Key: aws.String(key), UploadId: up.UploadId,
			MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}}
	}
	filler := filepath.Join(mounted, "filler")
	// fill leaves free MiB free on the disk.
	fill := func(free int64) {
		t.Helper()
		os.Remove(filler)
		var st syscall.Statfs_t
		if err := syscall.Statfs(mounted, &st); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filler, make([]byte, int64(st.Bavail)*st.Bsize-free<<20), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	nothingPublished := func(when string) {
		t.Helper()
		if v := visible(files(t, mounted)); len(v) != 1 || v[0] != "filler" {
			t.Fatalf("%s the scanner sees %v", when, v)
		}
	}
	parts := func(in *s3.CompleteMultipartUploadInput) (int, error) {
		out, err := c.ListParts(ctx, &s3.ListPartsInput{Bucket: in.Bucket, Key: in.Key, UploadId: in.UploadId})
		if err != nil {
			return 0, err
		}
		return len(out.Parts), nil
	}

	// Less room than a part: the first move fails, and nothing is lost.
	complete := upload()
	fill(2)
	if _, err := c.CompleteMultipartUpload(ctx, complete); apiCode(err) != "InsufficientStorage" {
		t.Fatalf("CompleteMultipartUpload with 2 MiB free: %v, want InsufficientStorage", err)
	}
	nothingPublished("after a completion with 2 MiB free")
	if n, err := parts(complete); err != nil || n != 7 {
		t.Fatalf("ListParts after the failed completion: %d parts, %v; want 7", n, err)
	}

	// Room for the 5 MiB parts but not the 8 MiB one: six parts move, the
	// last does not fit, and the upload is gone.
	fill(6)
	if _, err := c.CompleteMultipartUpload(ctx, complete); apiCode(err) != "InsufficientStorage" {
		t.Fatalf("CompleteMultipartUpload with 6 MiB free: %v, want InsufficientStorage", err)
	}
	nothingPublished("after a completion that ran out of room half way")
	if _, err := parts(complete); apiCode(err) != "NoSuchUpload" {
		t.Fatalf("ListParts after a completion failed half way: %v, want NoSuchUpload", err)
	}
	for rel := range files(t, mounted) {
		if strings.HasPrefix(rel, "cascade/.sgwtmp/") {
			t.Errorf("left after the failed completion: %s", rel)
		}
	}

	// 38 MiB in 56: the old join, which kept every part until the end,
	// needed 76.
	os.Remove(filler)
	complete = upload()
	if _, err := c.CompleteMultipartUpload(ctx, complete); err != nil {
		t.Fatalf("CompleteMultipartUpload of 38 MiB in 56: %v", err)
	}
	got, err := os.ReadFile(filepath.Join(mounted, "cascade", filepath.FromSlash(key)))
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("object: %v, %d bytes, want %d", err, len(got), len(data))
	}
	for rel := range files(t, mounted) {
		if strings.HasPrefix(rel, "cascade/.sgwtmp/") {
			t.Errorf("left after the completion: %s", rel)
		}
	}
}
