// Package objectstore is one bucket of an S3-compatible object store, reached with minio-go:
// streaming put, ranged get, head, delete, list by prefix and short-lived presigned URLs.
// A Store holds one workload's credentials and names one bucket, so what a holder may touch
// is what the server grants those credentials (docs/objectstore.md).
package objectstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// PartSize is the size of one part of a multipart upload and so the most a Put holds in
// memory at once (twice that with Config.ReadAhead): an upload of unknown length is read one part at a time, into a buffer kept
// across uploads (partbuf.go). S3's smallest part (5 MiB) keeps deploys' peak memory during
// an upload lowest (measured against 8 MiB in docs/performance.md's deploys table); with S3's 10,000
// parts an object may reach about 48 GiB, far over any plan's upload limit.
const PartSize = 5 << 20

// MaxPresignLifetime bounds a presigned URL's life: a URL is handed to a process outside the
// holder of the credentials, so it must not outlive the task it was made for by much.
const MaxPresignLifetime = time.Hour

var (
	// ErrNotFound: no object under that key (or no such bucket).
	ErrNotFound = errors.New("objectstore: no such object")
	// ErrAccessDenied: the credentials may not do this to this bucket.
	ErrAccessDenied = errors.New("objectstore: access denied")
	// ErrInvalidRange: the range asked for starts past the object's end.
	ErrInvalidRange = errors.New("objectstore: range not satisfiable")
)

// Config is one holder's way into one bucket.
type Config struct {
	URL       string // http(s)://host:port of the S3 endpoint (path-style addressing)
	AccessKey string
	SecretKey string
	Bucket    string
	Region    string // "us-east-1" unless the server says otherwise
	// ReadAhead reads an upload's next part from its stream while the part before it is
	// sent, into a second kept buffer: a long upload takes about the longer of reading and
	// sending instead of their sum, for one more part in memory while it runs. For a holder
	// whose peak memory during uploads matters less than their time (a zone publishing a
	// site); deploys, whose peak during a 500 MB upload is a budgeted figure, keeps it off.
	ReadAhead bool
}

// Store is one bucket seen through one holder's credentials. Safe for concurrent use.
type Store struct {
	client    *minio.Client
	bucket    string
	readAhead bool
}

// Info describes a stored object.
type Info struct {
	Key          string
	Size         int64
	ETag         string
	ContentType  string
	LastModified time.Time
}

// Range is the bytes [Start, End] of an object, both inclusive; End < 0 means to the end.
type Range struct {
	Start, End int64
}

// New checks cfg and makes the client; it reaches nothing.
func New(cfg Config) (*Store, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("objectstore: URL must be http(s)://host[:port]")
	}
	if cfg.AccessKey == "" || cfg.SecretKey == "" {
		return nil, errors.New("objectstore: access key and secret are required")
	}
	if cfg.Bucket == "" {
		return nil, errors.New("objectstore: bucket is required")
	}
	region := cfg.Region
	if region == "" {
		region = "us-east-1"
	}
	transport, err := minio.DefaultTransport(u.Scheme == "https")
	if err != nil {
		return nil, fmt.Errorf("objectstore: %w", err)
	}
	// Every request of a Store goes to one host: keep as many idle connections to it as a
	// busy holder runs requests at once. minio's default keeps 16, so a zone edge filling its
	// cache for more sites at once (after a restart, make bench-scale) closed each extra
	// connection after its request and dialled a new one for the next.
	transport.MaxIdleConnsPerHost = transport.MaxIdleConns
	client, err := minio.New(u.Host, &minio.Options{
		Creds:        credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, ""),
		Secure:       u.Scheme == "https",
		Region:       region,
		BucketLookup: minio.BucketLookupPath,
		Transport:    transport,
	})
	if err != nil {
		return nil, fmt.Errorf("objectstore: %w", err)
	}
	return &Store{client: client, bucket: cfg.Bucket, readAhead: cfg.ReadAhead}, nil
}

// Bucket is the bucket this store names.
func (s *Store) Bucket() string { return s.bucket }

// Put stores r under key. A short object of known length (at most PartSize) is one PUT
// streamed from r; anything else (size < 0, an upload as it arrives, or longer) is read one
// PartSize part at a time into a pooled buffer (putParts); a failed upload leaves no object.
func (s *Store) Put(ctx context.Context, key string, r io.Reader, size int64, contentType string) (Info, error) {
	if err := checkKey(key); err != nil {
		return Info{}, err
	}
	if contentType == "" {
		contentType = "application/octet-stream"
	}
	if size < 0 || size > PartSize {
		return s.putParts(ctx, key, r, size, contentType)
	}
	up, err := s.client.PutObject(ctx, s.bucket, key, r, size, minio.PutObjectOptions{ContentType: contentType})
	if err != nil {
		return Info{}, translate(err)
	}
	return Info{Key: key, Size: up.Size, ETag: up.ETag, ContentType: contentType, LastModified: up.LastModified}, nil
}

// Get opens key, or the part rng names (nil: all of it). The caller closes the reader.
func (s *Store) Get(ctx context.Context, key string, rng *Range) (io.ReadCloser, Info, error) {
	if err := checkKey(key); err != nil {
		return nil, Info{}, err
	}
	opts := minio.GetObjectOptions{}
	if rng != nil {
		if rng.Start < 0 || (rng.End >= 0 && rng.End < rng.Start) {
			return nil, Info{}, ErrInvalidRange
		}
		end := rng.End
		if end < 0 {
			end = 0 // minio-go: 0 as the end means "to the end" when start > 0
		}
		if rng.End < 0 && rng.Start == 0 {
			rng = nil // the whole object
		} else if err := opts.SetRange(rng.Start, end); err != nil {
			return nil, Info{}, fmt.Errorf("objectstore: %w", err)
		}
	}
	// minio-go's GetObject sends nothing until the first read or Stat; Stat makes errors
	// (no such key, access denied) show here instead of in the caller's copy loop.
	obj, err := s.client.GetObject(ctx, s.bucket, key, opts)
	if err != nil {
		return nil, Info{}, translate(err)
	}
	st, err := obj.Stat()
	if err != nil {
		obj.Close()
		return nil, Info{}, translate(err)
	}
	return obj, infoOf(st), nil
}

// Head describes key without reading it.
func (s *Store) Head(ctx context.Context, key string) (Info, error) {
	if err := checkKey(key); err != nil {
		return Info{}, err
	}
	st, err := s.client.StatObject(ctx, s.bucket, key, minio.StatObjectOptions{})
	if err != nil {
		return Info{}, translate(err)
	}
	return infoOf(st), nil
}

// Delete removes key; removing a key that is not there is not an error (S3's own rule), so
// a reclaiming job may run twice.
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := checkKey(key); err != nil {
		return err
	}
	return translate(s.client.RemoveObject(ctx, s.bucket, key, minio.RemoveObjectOptions{}))
}

// List calls fn for every object whose key starts with prefix, in key order, until fn
// returns false or an error stops it.
func (s *Store) List(ctx context.Context, prefix string, fn func(Info) bool) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // stops minio-go's lister when fn stops early
	for obj := range s.client.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if obj.Err != nil {
			return translate(obj.Err)
		}
		if !fn(infoOf(obj)) {
			return nil
		}
	}
	return ctx.Err()
}

// PresignGet is a URL that reads key for ttl (at most MaxPresignLifetime) without credentials.
func (s *Store) PresignGet(ctx context.Context, key string, ttl time.Duration) (string, error) {
	if err := checkPresign(key, ttl); err != nil {
		return "", err
	}
	u, err := s.client.PresignedGetObject(ctx, s.bucket, key, ttl, nil)
	if err != nil {
		return "", translate(err)
	}
	return u.String(), nil
}

// PresignPut is a URL that writes key with one PUT for ttl (at most MaxPresignLifetime).
func (s *Store) PresignPut(ctx context.Context, key string, ttl time.Duration) (string, error) {
	if err := checkPresign(key, ttl); err != nil {
		return "", err
	}
	u, err := s.client.PresignedPutObject(ctx, s.bucket, key, ttl)
	if err != nil {
		return "", translate(err)
	}
	return u.String(), nil
}

func checkPresign(key string, ttl time.Duration) error {
	if err := checkKey(key); err != nil {
		return err
	}
	if ttl <= 0 || ttl > MaxPresignLifetime {
		return fmt.Errorf("objectstore: a presigned URL lives between 1s and %s", MaxPresignLifetime)
	}
	return nil
}

// checkKey refuses keys S3 servers treat differently (empty, leading slash, dot segments: a
// posix backend maps keys to paths).
func checkKey(key string) error {
	if key == "" || len(key) > 1024 || strings.HasPrefix(key, "/") {
		return fmt.Errorf("objectstore: invalid key %q", key)
	}
	for _, seg := range strings.Split(key, "/") {
		if seg == "." || seg == ".." {
			return fmt.Errorf("objectstore: invalid key %q", key)
		}
	}
	return nil
}

func infoOf(o minio.ObjectInfo) Info {
	return Info{Key: o.Key, Size: o.Size, ETag: o.ETag, ContentType: o.ContentType, LastModified: o.LastModified}
}

// translate turns the server's answers the callers act on into this package's sentinels.
func translate(err error) error {
	if err == nil {
		return nil
	}
	resp := minio.ToErrorResponse(err)
	switch {
	case resp.Code == "NoSuchKey" || resp.Code == "NoSuchBucket" || resp.StatusCode == http.StatusNotFound:
		return fmt.Errorf("%w (%s)", ErrNotFound, resp.Code)
	case resp.Code == "AccessDenied" || resp.StatusCode == http.StatusForbidden:
		return fmt.Errorf("%w (%s)", ErrAccessDenied, resp.Code)
	case resp.Code == "InvalidRange" || resp.StatusCode == http.StatusRequestedRangeNotSatisfiable:
		return fmt.Errorf("%w (%s)", ErrInvalidRange, resp.Code)
	}
	return fmt.Errorf("objectstore: %w", err)
}
