package upload

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"golang.org/x/sync/errgroup"
)

// A resumed upload skips a file already at the destination only when both
// its size and its modification time are the local file's, as rclone does:
// a trace traced again often has files of the same size, and a size alone
// would keep the earlier bytes. A local upload gives each file it copies
// the source's time (see copyFile); an upload to an Endpoint sends it as
// the object's user metadata mtime, rclone's key and format (formatMtime),
// and reads it back with a HEAD on resume (see remote.unchanged). An object
// without it, written by another tool, is sent again.
const mtimeKey = "mtime"

// resumeNote says, for the progress line, which files a resumed upload
// found already there and which it sends again because their time changed:
// " (2 already there, 1 changed since: sent again)", or "".
func resumeNote(res Result) string {
	var notes []string
	if res.Skipped > 0 {
		notes = append(notes, fmt.Sprintf("%d already there", res.Skipped))
	}
	if res.Changed > 0 {
		notes = append(notes, fmt.Sprintf("%d changed since: sent again", res.Changed))
	}
	if len(notes) == 0 {
		return ""
	}
	return " (" + strings.Join(notes, ", ") + ")"
}

// formatMtime writes t as seconds since the epoch in fixed point with up
// to nine decimals, trailing zeros dropped: "1733570000.123456789",
// "1733570000.5", "1733570000". This is the mtime metadata rclone (and
// swift's python client) writes and reads.
func formatMtime(t time.Time) string {
	ns := t.UnixNano()
	sign := ""
	if ns < 0 {
		sign, ns = "-", -ns
	}
	s := fmt.Sprintf("%d.%09d", ns/1e9, ns%1e9)
	s = strings.TrimSuffix(strings.TrimRight(s, "0"), ".")
	return sign + s
}

// parseMtime reads a time written as formatMtime writes it; digits past
// the ninth decimal are ignored.
func parseMtime(s string) (time.Time, error) {
	neg := strings.HasPrefix(s, "-")
	digits := strings.TrimPrefix(s, "-")
	sec, frac, _ := strings.Cut(digits, ".")
	frac = (frac + "000000000")[:9]
	if sec == "" || strings.ContainsAny(sec+frac, "+-") {
		return time.Time{}, fmt.Errorf("mtime %q is not seconds since the epoch", s)
	}
	whole, err := strconv.ParseInt(sec, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("mtime %q is not seconds since the epoch", s)
	}
	ns, err := strconv.ParseInt(frac, 10, 64)
	if err != nil || whole > (1<<63-1-ns)/1e9 {
		return time.Time{}, fmt.Errorf("mtime %q is not seconds since the epoch", s)
	}
	total := whole*1e9 + ns
	if neg {
		total = -total
	}
	return time.Unix(0, total), nil
}

// mtimeMetadata is the user metadata an object gets: its file's time.
func mtimeMetadata(f sourceFile) map[string]string {
	return map[string]string{mtimeKey: formatMtime(f.mtime)}
}

// unchanged reads, for each of files (all already at the endpoint at their
// size), the time the object carries, at most opts.Parallel HEADs at a
// time, and reports by relative path whether it is the local file's.
func (r *remote) unchanged(ctx context.Context, files []sourceFile) (map[string]bool, error) {
	same := make([]bool, len(files))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(r.opts.Parallel)
	for i, f := range files {
		g.Go(func() error {
			key := r.prefix + f.rel
			out, err := r.client.HeadObject(gctx, &s3.HeadObjectInput{Bucket: &r.bucket, Key: &key})
			var missing *types.NotFound
			if errors.As(err, &missing) {
				return nil // gone since it was listed: sent again
			}
			if err != nil {
				return fmt.Errorf("%s: %w", f.rel, err)
			}
			same[i] = aws.ToInt64(out.ContentLength) == f.size && sameMtime(out.Metadata, f.mtime)
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	res := make(map[string]bool, len(files))
	for i, f := range files {
		res[f.rel] = same[i]
	}
	return res, nil
}

// sameMtime reports whether an object's user metadata holds an mtime
// exactly t, to the nanosecond. Header names are case-insensitive, so the
// key is too.
func sameMtime(meta map[string]string, t time.Time) bool {
	for k, v := range meta {
		if strings.EqualFold(k, mtimeKey) {
			got, err := parseMtime(v)
			return err == nil && got.Equal(t)
		}
	}
	return false
}
