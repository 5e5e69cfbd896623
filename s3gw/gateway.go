package s3gw

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/versity/versitygw/auth"
	"github.com/versity/versitygw/backend/meta"
	"github.com/versity/versitygw/backend/posix"
	"github.com/versity/versitygw/embedgw"
	"github.com/versity/versitygw/s3api"
)

// Region is what the endpoint tells clients; any region a client signs
// with that matches it works, and the CLI lines printed at start pass it.
const Region = "us-east-1"

// Limits of the gateway's connection and request concurrency, and of parts
// per multipart upload (S3's own maximum).
const (
	maxConnections = 256
	maxRequests    = 128
	maxParts       = 10000
	startTimeout   = 15 * time.Second
)

// Config says where the gateway listens and what it stores.
type Config struct {
	// Root is the storage root, <data dir>/s3: each bucket is a directory
	// in it. It must be absolute.
	Root string
	// Bucket is created at start if it is not there yet.
	Bucket string
	// Prefix is where in Bucket the trace folders are ("traces"): a key
	// there is refused when its trace folder could not be a trace's
	// (CheckTraceKey).
	Prefix string
	// Addr is the listen address; port 0 picks a free one.
	Addr string
	Keys Keys
	// ReadOnlyKeys, when set, may get, head and list, and nothing more.
	ReadOnlyKeys Keys
	// MultipartExpiry: a multipart upload nothing was written to for
	// longer is aborted, its parts freed (expire.go); 0 is
	// DefaultMultipartExpiry, below 0 never.
	MultipartExpiry time.Duration
	// Logger gets a line per failed request and the gateway's life.
	Logger *slog.Logger
}

// Gateway is a running S3 endpoint.
type Gateway struct {
	// URL is the endpoint, "http://127.0.0.1:9000".
	URL string

	cfg     Config
	oldWD   string
	cancel  context.CancelFunc
	exited  chan struct{} // closed when the gateway stopped
	exitErr error         // why, set before exited is closed
	uploads activity      // see UploadsInFlight and Writing
	same    *sameKeeper   // re-uploads of the same bytes (same.go)
	// expiring is the loop that aborts multipart uploads left, through
	// backend (expire.go).
	expiring sync.WaitGroup
	backend  uploadsBackend

	closeOnce sync.Once
	closeErr  error
}

// Start makes sure the bucket exists and serves the S3 API on cfg.Addr. It
// returns once the endpoint accepts connections; Close stops it. The
// process's working directory is cfg.Root until Close (see the package
// documentation).
func Start(ctx context.Context, cfg Config) (*Gateway, error) {
	if !filepath.IsAbs(cfg.Root) {
		return nil, fmt.Errorf("s3gw: storage root %q is not absolute", cfg.Root)
	}
	if cfg.Keys.AccessKey == "" || cfg.Keys.SecretKey == "" {
		return nil, errors.New("s3gw: no access key pair")
	}
	if ro := cfg.ReadOnlyKeys; ro != (Keys{}) {
		switch {
		case ro.AccessKey == "" || ro.SecretKey == "":
			return nil, errors.New("s3gw: the read-only key pair needs both an access key and a secret key")
		case ro.AccessKey == cfg.Keys.AccessKey:
			return nil, errors.New("s3gw: the read-only access key is the read-write one; it must differ")
		}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	cfg.Logger = cfg.Logger.With("component", "s3")
	if err := os.MkdirAll(cfg.Root, 0o755); err != nil {
		return nil, fmt.Errorf("s3gw: %w", err)
	}
	if err := (meta.XattrMeta{}).Test(cfg.Root); err != nil {
		return nil, fmt.Errorf("s3gw: %s keeps no extended attributes (user.*), which the gateway stores object metadata in: %w", cfg.Root, err)
	}
	releaseClaims(cfg.Root, cfg.Logger)
	left := leftPriors(cfg.Root)
	host, port, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("s3gw: listen address %q: %w", cfg.Addr, err)
	}
	// The gateway binds its own listener from an address string and does
	// not say which port it got, so port 0 is resolved here: a free port
	// is picked, and picked again in the unlikely case that another
	// process takes it in between.
	attempts := 1
	if port == "0" {
		attempts = 3
	}
	oldWD, err := os.Getwd()
	if err != nil {
		return nil, fmt.Errorf("s3gw: %w", err)
	}
	for i := 0; ; i++ {
		addr := cfg.Addr
		if port == "0" {
			if addr, err = freeAddr(host); err != nil {
				return nil, fmt.Errorf("s3gw: %w", err)
			}
		}
		g, err := start(ctx, cfg, addr)
		if err == nil {
			g.oldWD = oldWD
			for _, p := range left { // what a stopped server was comparing
				g.same.settle(p, nil, g.uploads.begin(&p.bucket, &p.key))
			}
			return g, nil
		}
		os.Chdir(oldWD)
		if i+1 >= attempts || !errors.Is(err, syscall.EADDRINUSE) {
			return nil, fmt.Errorf("s3gw: %w", err)
		}
	}
}

func start(ctx context.Context, cfg Config, addr string) (*Gateway, error) {
	// posix.New changes the working directory to the root.
	be, err := posix.New(cfg.Root, meta.XattrMeta{}, posixOpts)
	if err != nil {
		return nil, err
	}
	if err := ensureBucket(ctx, be, cfg); err != nil {
		be.Shutdown()
		return nil, fmt.Errorf("bucket %s: %w", cfg.Bucket, err)
	}
	root := auth.Account{Access: cfg.Keys.AccessKey, Secret: cfg.Keys.SecretKey, Role: auth.RoleAdmin}
	iam := accounts{IAMService: auth.NewIAMServiceSingle(root)}
	if ro := cfg.ReadOnlyKeys; ro.AccessKey != "" {
		iam.readOnly = &auth.Account{Access: ro.AccessKey, Secret: ro.SecretKey, Role: auth.RoleUser}
	}
	ready := make(chan struct{})
	var readyOnce sync.Once
	gcfg := &embedgw.Config{
		RootUserAccess:    cfg.Keys.AccessKey,
		RootUserSecret:    cfg.Keys.SecretKey,
		Region:            Region,
		Ports:             []string{addr},
		MaxConnections:    maxConnections,
		MaxRequests:       maxRequests,
		MultipartMaxParts: maxParts,
		Quiet:             true,
		KeepAlive:         true,
		IAMService:        iam,
		S3Options: []s3api.Option{
			s3api.WithOnListen(func() { readyOnce.Do(func() { close(ready) }) }),
		},
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	g := &Gateway{URL: "http://" + addr, cfg: cfg, cancel: cancel, exited: make(chan struct{})}
	g.same = &sameKeeper{root: cfg.Root, log: cfg.Logger, ctx: runCtx}
	backend := counting{keyGuard{Posix: be, readOnly: cfg.ReadOnlyKeys.AccessKey, bucket: cfg.Bucket, prefix: cfg.Prefix}, &g.uploads, g.same}
	g.backend = backend
	go func() {
		g.exitErr = embedgw.RunVersityGW(runCtx, backend, gcfg)
		close(g.exited)
	}()
	select {
	case <-ready:
		cfg.Logger.Info("serving S3", "url", g.URL, "bucket", cfg.Bucket, "root", cfg.Root)
		if err := restoreOpen(runCtx, backend, &g.uploads, cfg.Bucket); err != nil {
			cfg.Logger.Warn("reading the multipart uploads open before the start: a trace without a files list may be taken for complete while one is", "err", err)
		}
		expiry := cfg.MultipartExpiry
		if expiry == 0 {
			expiry = DefaultMultipartExpiry
		}
		g.expiring.Add(1)
		go func() {
			defer g.expiring.Done()
			expireLoop(runCtx, backend, &g.uploads, cfg.Bucket, expiry, cfg.Logger)
		}()
		return g, nil
	case <-g.exited:
		cancel()
		if g.exitErr == nil {
			return nil, errors.New("gateway stopped at start")
		}
		return nil, g.exitErr
	case <-time.After(startTimeout):
		cancel()
		<-g.exited
		return nil, fmt.Errorf("gateway did not listen on %s within %v", addr, startTimeout)
	}
}

// posixOpts: ETags are named after a checksum of the data, not its MD5:
// "CRC64NVME-<base64>" for an object or a part, and for a multipart
// upload started with a checksum algorithm that one's of the whole object
// ("CRC32-<base64>" from the AWS CLI); crc64.go has the CRC64NVME
// computed once, and fast, when it is a body's only checksum. MD5 was the
// single largest cost of an upload on the server: it cannot use the CPU's
// vector instructions and ran at a third of the (table-driven) CRC64's
// speed here. A Content-MD5 a client sends is still verified (by the gateway's
// middleware, not the backend). Clients that check an ETag against their
// own MD5 do so only when it looks like one (rclone), or not at all (the
// AWS CLI, boto3, `cascade upload`, which compares resumed parts by
// their checksums).
var posixOpts = posix.PosixOpts{DataIntegrityEtag: true}

// freeAddr returns host with a port free at the time of the call.
func freeAddr(host string) (string, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return "", err
	}
	addr := ln.Addr().(*net.TCPAddr)
	ln.Close()
	return net.JoinHostPort(host, strconv.Itoa(addr.Port)), nil
}

// ensureBucket creates the bucket, or makes an existing directory (made by
// an earlier Cascade, or by hand) a bucket the gateway serves: the
// backend stores its owner and ownership mode as extended attributes.
func ensureBucket(ctx context.Context, be *posix.Posix, cfg Config) error {
	owner := auth.Account{Access: cfg.Keys.AccessKey, Role: auth.RoleAdmin}
	acl, err := json.Marshal(auth.ACL{Owner: owner.Access})
	if err != nil {
		return err
	}
	ownership := types.ObjectOwnershipBucketOwnerEnforced
	if _, err := os.Stat(filepath.Join(cfg.Root, cfg.Bucket)); err != nil {
		ctx = context.WithValue(ctx, "bucket-owner", owner) //nolint:staticcheck // the backend's own key
		return be.CreateBucket(ctx, &s3.CreateBucketInput{
			Bucket:                    &cfg.Bucket,
			ObjectOwnership:           ownership,
			CreateBucketConfiguration: &types.CreateBucketConfiguration{},
		}, acl)
	}
	var m meta.XattrMeta
	if _, err := m.RetrieveAttribute(nil, cfg.Bucket, "", "acl"); err == nil {
		return nil
	} else if !errors.Is(err, meta.ErrNoSuchKey) {
		return err
	}
	if err := m.StoreAttribute(nil, cfg.Bucket, "", "acl", acl); err != nil {
		return err
	}
	return m.StoreAttribute(nil, cfg.Bucket, "", "ownership", []byte(ownership))
}

// Exited is closed when the gateway stops, by Close or on its own; Err
// then says why.
func (g *Gateway) Exited() <-chan struct{} { return g.exited }

// Err is why the gateway stopped, once Exited is closed.
func (g *Gateway) Err() error {
	select {
	case <-g.exited:
		if g.exitErr == nil {
			return errors.New("s3gw: gateway stopped")
		}
		return fmt.Errorf("s3gw: %w", g.exitErr)
	default:
		return nil
	}
}

// Close stops the gateway: in-flight requests get up to 10 s to finish.
// The working directory is restored. Calling it again returns the first
// call's result.
func (g *Gateway) Close() error {
	g.closeOnce.Do(func() {
		g.cancel()
		<-g.exited
		g.same.wait()
		g.expiring.Wait()
		g.closeErr = g.exitErr
		if g.oldWD != "" {
			if err := os.Chdir(g.oldWD); err != nil {
				g.closeErr = errors.Join(g.closeErr, err)
			}
		}
	})
	return g.closeErr
}
