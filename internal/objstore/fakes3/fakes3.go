// Package fakes3 serves the S3 protocol on 127.0.0.1 from memory
// (github.com/johannesboyne/gofakes3 with its s3mem backend), for tests
// that read and write s3:// URLs through the real AWS SDK client.
package fakes3

import (
	"bytes"
	"net"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// Region is the region the server's URLs name.
const Region = "us-east-1"

// Server is a running S3-protocol server.
type Server struct {
	Endpoint string // http://127.0.0.1:PORT
	backend  *s3mem.Backend
}

// Start starts a server with the given buckets, stopped when the test
// ends, and points the AWS SDK's standard environment at static
// credentials (and away from the machine's own AWS configuration). It
// skips the test, saying why, when no port on 127.0.0.1 can be had.
func Start(t testing.TB, buckets ...string) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skipf("skipping: cannot listen on 127.0.0.1 for the S3-protocol test server: %v", err)
	}
	backend := s3mem.New()
	for _, b := range buckets {
		if err := backend.CreateBucket(b); err != nil {
			t.Fatalf("create bucket %s: %v", b, err)
		}
	}
	faker := gofakes3.New(backend, gofakes3.WithTimeSkewLimit(time.Hour), gofakes3.WithLogger(gofakes3.DiscardLog()))
	srv := httptest.NewUnstartedServer(faker.Server())
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	for k, v := range map[string]string{
		"AWS_ACCESS_KEY_ID":           "stepdoctor-test",
		"AWS_SECRET_ACCESS_KEY":       "stepdoctor-test-secret",
		"AWS_SESSION_TOKEN":           "",
		"AWS_PROFILE":                 "",
		"AWS_REGION":                  Region,
		"AWS_CONFIG_FILE":             filepath.Join(dir, "config"),
		"AWS_SHARED_CREDENTIALS_FILE": filepath.Join(dir, "credentials"),
		"AWS_EC2_METADATA_DISABLED":   "true",
		"AWS_ENDPOINT_URL":            "",
		"AWS_ENDPOINT_URL_S3":         "",
	} {
		t.Setenv(k, v)
	}
	return &Server{Endpoint: srv.URL, backend: backend}
}

// Query is the s3:// URL query that reaches the server: its endpoint,
// path-style addressing (no bucket.host names), the region, and response
// checksums validated only where required (the server sends none, which
// the SDK would log on every read).
func (s *Server) Query() string {
	return "endpoint=" + url.QueryEscape(s.Endpoint) + "&use_path_style=true&region=" + Region + "&response_checksum_validation=when_required"
}

// URL is the s3:// URL of key (an object or a prefix) in bucket.
func (s *Server) URL(bucket, key string) string {
	return "s3://" + bucket + "/" + key + "?" + s.Query()
}

// Put stores data as bucket/key.
func (s *Server) Put(t testing.TB, bucket, key string, data []byte) {
	t.Helper()
	if _, err := s.backend.PutObject(bucket, key, map[string]string{}, bytes.NewReader(data), int64(len(data)), nil); err != nil {
		t.Fatalf("put %s/%s: %v", bucket, key, err)
	}
}

// Get returns the object bucket/key, or ok=false when there is none.
func (s *Server) Get(t testing.TB, bucket, key string) (data []byte, ok bool) {
	t.Helper()
	obj, err := s.backend.GetObject(bucket, key, nil)
	if err != nil {
		return nil, false
	}
	defer obj.Contents.Close()
	var b bytes.Buffer
	if _, err := b.ReadFrom(obj.Contents); err != nil {
		t.Fatalf("get %s/%s: %v", bucket, key, err)
	}
	return b.Bytes(), true
}

// Keys lists the keys in bucket below prefix.
func (s *Server) Keys(t testing.TB, bucket, prefix string) []string {
	t.Helper()
	list, err := s.backend.ListBucket(bucket, &gofakes3.Prefix{Prefix: prefix, HasPrefix: true}, gofakes3.ListBucketPage{})
	if err != nil {
		t.Fatalf("list %s/%s: %v", bucket, prefix, err)
	}
	var keys []string
	for _, c := range list.Contents {
		keys = append(keys, c.Key)
	}
	return keys
}
