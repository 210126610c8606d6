// Package objstore reads and writes traces and facts files named by
// object-storage URLs: s3:// (AWS S3 and S3-protocol stores), gs:// (Google
// Cloud Storage), azblob:// (Azure Blob Storage) and file:// (a local path
// through the same code), through gocloud.dev/blob.
//
// A URL names one object (s3://bucket/run/rank3.json.gz) or a prefix that
// is listed like a directory (s3://bucket/run/rank3/). The query holds the
// driver's bucket options, e.g. ?region=us-east-1, or for an S3-protocol
// server ?endpoint=http://host:9000&use_path_style=true (gocloud.dev/aws
// V2ConfigFromURLParams and s3blob URLOpener list them). Credentials come
// from the standard environment of each SDK: AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY, AWS_PROFILE, AWS_REGION, web identity and instance
// roles (aws-sdk-go-v2 config.LoadDefaultConfig); GOOGLE_APPLICATION_CREDENTIALS
// and the metadata server (Application Default Credentials);
// AZURE_STORAGE_ACCOUNT with AZURE_STORAGE_KEY, AZURE_STORAGE_SAS_TOKEN or
// the azidentity default chain. Local paths never reach this package.
//
// Reads stream (Bucket.NewReader): nothing is copied to local disk. A write
// is one upload that the store makes visible whole when it completes (an
// S3 PutObject or completed multipart upload, a GCS upload, an Azure block
// blob commit; fileblob renames a temporary file); a write that fails or is
// aborted leaves no object and no partial one.
package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"
	"gocloud.dev/gcerrors"

	// The drivers of the schemes IsURL accepts.
	_ "gocloud.dev/blob/azureblob"
	_ "gocloud.dev/blob/gcsblob"
	_ "gocloud.dev/blob/s3blob"
)

// Schemes are the URL schemes this package reads and writes.
var Schemes = []string{"s3", "gs", "azblob", "file"}

// IsURL reports whether p is an object-storage URL (one of Schemes
// followed by "://"). Anything else is a local path.
func IsURL(p string) bool {
	scheme, rest, ok := strings.Cut(p, "://")
	if !ok || rest == "" {
		return false
	}
	for _, s := range Schemes {
		if scheme == s {
			return true
		}
	}
	return false
}

// LocalPath is the local path a file:// URL names (file:///data/r0.json:
// /data/r0.json), and true; p itself and false for anything else. Checks
// that compare paths (an output that would replace an input) read a
// file:// URL through it, as the same file as its plain path.
func LocalPath(p string) (string, bool) {
	l, err := parse(p)
	if err != nil || l.scheme != "file" {
		return p, false
	}
	return filepath.Join(l.root, filepath.FromSlash(l.key)), true
}

// Name is the object's key part of a URL (its path, without the query),
// for matching file names and extensions; p itself when it is not a URL.
func Name(p string) string {
	if !IsURL(p) {
		return p
	}
	u, err := url.Parse(p)
	if err != nil {
		return p
	}
	return u.Path
}

// Object is one object found by Stat or List.
type Object struct {
	URL  string // the object's URL, with the bucket's query
	Key  string // its key in the bucket
	Size int64  // bytes, as stored (compressed bytes for a .gz object)
}

// loc is a parsed URL: the bucket it lives in and the key.
type loc struct {
	bucket string // cache key: scheme://host?query
	scheme string
	host   string
	query  string
	key    string
	root   string // file://: the local root the key is relative to
}

func parse(raw string) (loc, error) {
	if !IsURL(raw) {
		return loc{}, fmt.Errorf("parse URL %s: not one of %s://", raw, strings.Join(Schemes, "://, "))
	}
	u, err := url.Parse(raw)
	if err != nil {
		return loc{}, fmt.Errorf("parse URL %s: %w", raw, err)
	}
	l := loc{scheme: u.Scheme, host: u.Host, query: u.RawQuery}
	if u.Scheme == "file" {
		if u.Host != "" && u.Host != "localhost" {
			return loc{}, fmt.Errorf("parse URL %s: a file:// URL names a local path (file:///abs/path), not host %q", raw, u.Host)
		}
		p := filepath.FromSlash(u.Path)
		if len(p) >= 3 && p[0] == filepath.Separator && p[2] == ':' { // file:///C:/dir on Windows
			p = p[1:]
		}
		if !filepath.IsAbs(p) {
			return loc{}, fmt.Errorf("parse URL %s: a file:// URL needs an absolute path", raw)
		}
		vol := filepath.VolumeName(p)
		l.root = vol + string(filepath.Separator)
		l.key = strings.TrimLeft(filepath.ToSlash(p[len(vol):]), "/")
		l.host = ""
	} else {
		if u.Host == "" {
			return loc{}, fmt.Errorf("parse URL %s: no bucket (%s://BUCKET/KEY)", raw, u.Scheme)
		}
		l.key = strings.TrimPrefix(u.Path, "/")
	}
	l.bucket = l.scheme + "://" + l.host + l.root + "?" + l.query
	return l, nil
}

// url is the URL of key in the same bucket as l.
func (l loc) url(key string) string {
	var s string
	if l.scheme == "file" {
		s = "file://" + path.Join("/", filepath.ToSlash(l.root), key)
	} else {
		s = l.scheme + "://" + l.host + "/" + key
	}
	if l.query != "" {
		s += "?" + l.query
	}
	return s
}

// Store opens buckets on first use and keeps them for the run; the zero
// value is ready. Close it when done.
type Store struct {
	mu      sync.Mutex
	buckets map[string]*blob.Bucket
}

func (s *Store) bucket(ctx context.Context, l loc) (*blob.Bucket, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if b, ok := s.buckets[l.bucket]; ok {
		return b, nil
	}
	var b *blob.Bucket
	var err error
	if l.scheme == "file" {
		if l.query != "" {
			return nil, fmt.Errorf("a file:// URL takes no query (%s)", l.query)
		}
		// Temporary files next to the target, so the rename that makes a
		// write visible stays on one file system; no .attrs sidecar files
		// beside the facts.
		b, err = fileblob.OpenBucket(l.root, &fileblob.Options{NoTempDir: true, Metadata: fileblob.MetadataDontWrite})
	} else {
		bu := l.scheme + "://" + l.host
		if l.query != "" {
			bu += "?" + l.query
		}
		b, err = blob.OpenBucket(ctx, bu)
	}
	if err != nil {
		return nil, fmt.Errorf("open bucket: %w", err)
	}
	if s.buckets == nil {
		s.buckets = map[string]*blob.Bucket{}
	}
	s.buckets[l.bucket] = b
	return b, nil
}

// Close closes every bucket opened.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for _, b := range s.buckets {
		errs = append(errs, b.Close())
	}
	s.buckets = nil
	return errors.Join(errs...)
}

// IsNotFound reports whether err says an object does not exist.
func IsNotFound(err error) bool { return gcerrors.Code(err) == gcerrors.NotFound }

// Stat returns the object raw names, or ok=false when there is no such
// object (raw may still be a prefix: List it).
func (s *Store) Stat(ctx context.Context, raw string) (obj Object, ok bool, err error) {
	l, err := parse(raw)
	if err != nil {
		return Object{}, false, err
	}
	if l.key == "" || strings.HasSuffix(l.key, "/") {
		return Object{}, false, nil
	}
	b, err := s.bucket(ctx, l)
	if err != nil {
		return Object{}, false, fmt.Errorf("stat %s: %w", raw, err)
	}
	a, err := b.Attributes(ctx, l.key)
	if IsNotFound(err) {
		return Object{}, false, nil
	}
	if err != nil {
		return Object{}, false, fmt.Errorf("stat %s: %w", raw, err)
	}
	return Object{URL: raw, Key: l.key, Size: a.Size}, true, nil
}

// List returns the objects below the prefix raw names (a "/" is added
// when missing, so s3://b/run lists s3://b/run/...), at any depth, whose
// base name keep accepts, sorted by key. Keys ending in "/" (the folder
// markers some consoles create) are left out.
func (s *Store) List(ctx context.Context, raw string, keep func(name string) bool) ([]Object, error) {
	l, err := parse(raw)
	if err != nil {
		return nil, err
	}
	prefix := l.key
	if prefix != "" && !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	b, err := s.bucket(ctx, l)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", raw, err)
	}
	var out []Object
	it := b.List(&blob.ListOptions{Prefix: prefix})
	for {
		o, err := it.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", raw, err)
		}
		if o.IsDir || strings.HasSuffix(o.Key, "/") || !keep(path.Base(o.Key)) {
			continue
		}
		out = append(out, Object{URL: l.url(o.Key), Key: o.Key, Size: o.Size})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

// Reader is an open object: it streams the object's bytes and tells its
// size (the trace reader sizes its event store from it).
type Reader struct {
	r *blob.Reader
}

func (r *Reader) Read(p []byte) (int, error) { return r.r.Read(p) }

// Size is the object's size in bytes.
func (r *Reader) Size() int64 { return r.r.Size() }

// Close releases the connection.
func (r *Reader) Close() error { return r.r.Close() }

// Open opens the object raw names for reading.
func (s *Store) Open(ctx context.Context, raw string) (*Reader, error) {
	l, err := parse(raw)
	if err != nil {
		return nil, err
	}
	b, err := s.bucket(ctx, l)
	if err != nil {
		return nil, err
	}
	r, err := b.NewReader(ctx, l.key, nil)
	if err != nil {
		return nil, err
	}
	return &Reader{r: r}, nil
}

// Write uploads what render writes as the object raw names, in one
// upload: the object appears whole when it completes, and when render or
// the upload fails no object is left (an existing one stays as it was).
func (s *Store) Write(ctx context.Context, raw string, render func(io.Writer) error) (err error) {
	l, err := parse(raw)
	if err != nil {
		return err
	}
	if l.key == "" || strings.HasSuffix(l.key, "/") {
		return fmt.Errorf("write %s: the URL names a prefix, not an object", raw)
	}
	b, err := s.bucket(ctx, l)
	if err != nil {
		return fmt.Errorf("write %s: %w", raw, err)
	}
	// Cancelling the writer's context before Close aborts the upload.
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := b.NewWriter(wctx, l.key, nil) // content type sniffed from the first bytes
	if err != nil {
		return fmt.Errorf("write %s: %w", raw, err)
	}
	if err := render(w); err != nil {
		cancel()
		_ = w.Close()
		return fmt.Errorf("write %s: %w", raw, err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("write %s: %w", raw, err)
	}
	return nil
}

// Same reports whether a and b name the same object or prefix (the same
// bucket, the same key), whatever their queries; inside reports whether
// a lies below the prefix b.
func Same(a, b string) (same, inside bool) {
	la, err1 := parse(a)
	lb, err2 := parse(b)
	if err1 != nil || err2 != nil || la.scheme != lb.scheme || la.host != lb.host || la.root != lb.root {
		return false, false
	}
	ka, kb := strings.TrimSuffix(la.key, "/"), strings.TrimSuffix(lb.key, "/")
	if ka == kb {
		return true, false
	}
	return false, kb == "" || strings.HasPrefix(ka, kb+"/")
}
