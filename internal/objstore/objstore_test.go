package objstore_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stepdoctor/stepdoctor/internal/objstore"
	"github.com/stepdoctor/stepdoctor/internal/objstore/fakes3"
)

func TestIsURL(t *testing.T) {
	for p, want := range map[string]bool{
		"s3://b/k": true, "gs://b/k": true, "azblob://c/k": true, "file:///tmp/x": true,
		"trace.json": false, "/abs/trace.json": false, "-": false, "http://host/x": false,
		"s3://": false, `C:\traces\x.json`: false, "dir/s3://x": false,
	} {
		if got := objstore.IsURL(p); got != want {
			t.Errorf("IsURL(%q) = %v, want %v", p, got, want)
		}
	}
	if got := objstore.Name("s3://b/run/rank3.jsonl?region=x"); got != "/run/rank3.jsonl" {
		t.Errorf("Name = %q", got)
	}
}

// storeCases runs the same checks on a store reached through url(key):
// stat, a prefix listed with the filter at any depth, reading, one-upload
// writes and aborted writes.
func storeCases(t *testing.T, url func(key string) string, put func(key string, data []byte), keys func(prefix string) []string) {
	ctx := context.Background()
	var s objstore.Store
	defer s.Close()
	put("run/rank0/host_1.pt.trace.json", []byte(`{"traceEvents":[]}`))
	put("run/rank0/sub/host_2.pt.trace.json.gz", []byte("gz"))
	put("run/rank0/notes.txt", []byte("x"))
	put("run/rank1/host_3.pt.trace.json", []byte("{}"))

	obj, ok, err := s.Stat(ctx, url("run/rank0/host_1.pt.trace.json"))
	if err != nil || !ok || obj.Size != int64(len(`{"traceEvents":[]}`)) {
		t.Fatalf("Stat = %+v, %v, %v", obj, ok, err)
	}
	if _, ok, err := s.Stat(ctx, url("run/rank0")); ok || err != nil {
		t.Fatalf("Stat of a prefix = %v, %v; want no object", ok, err)
	}
	list, err := s.List(ctx, url("run/rank0"), func(name string) bool { return strings.HasSuffix(name, ".json") || strings.HasSuffix(name, ".json.gz") })
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range list {
		got = append(got, o.URL)
	}
	if want := []string{url("run/rank0/host_1.pt.trace.json"), url("run/rank0/sub/host_2.pt.trace.json.gz")}; !reflect.DeepEqual(got, want) {
		t.Errorf("List = %v, want %v", got, want)
	}
	if len(list) != 2 || list[1].Size != 2 {
		t.Fatalf("listed %+v: want 2 objects, the second of size 2", list)
	}
	r, err := s.Open(ctx, list[0].URL)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(r)
	r.Close()
	if err != nil || string(b) != `{"traceEvents":[]}` || r.Size() != int64(len(b)) {
		t.Errorf("Open read %q (size %d), %v", b, r.Size(), err)
	}
	if _, err := s.Open(ctx, url("run/missing.json")); !objstore.IsNotFound(err) {
		t.Errorf("Open of a missing object: %v, want not found", err)
	}

	if err := s.Write(ctx, url("facts/rank0.jsonl"), func(w io.Writer) error {
		_, err := io.WriteString(w, "{\"a\":1}\n")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	r, err = s.Open(ctx, url("facts/rank0.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(r)
	r.Close()
	if string(b) != "{\"a\":1}\n" {
		t.Errorf("written object reads %q", b)
	}
	// A render that fails midway leaves no object.
	boom := errors.New("boom")
	err = s.Write(ctx, url("facts/rank1.jsonl"), func(w io.Writer) error {
		io.WriteString(w, "partial")
		return boom
	})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "rank1.jsonl") {
		t.Errorf("failed write: %v, want boom naming the URL", err)
	}
	if k := keys("facts/"); !reflect.DeepEqual(k, []string{"facts/rank0.jsonl"}) {
		t.Errorf("after an aborted write the store holds %v, want only facts/rank0.jsonl", k)
	}
	if err := s.Write(ctx, url("facts/"), func(io.Writer) error { return nil }); err == nil {
		t.Error("a write to a prefix succeeded")
	}
}

// TestS3 reads and writes through the AWS SDK against an S3-protocol
// server on 127.0.0.1 (path-style, static credentials from the
// environment).
func TestS3(t *testing.T) {
	srv := fakes3.Start(t, "traces")
	storeCases(t,
		func(key string) string { return srv.URL("traces", key) },
		func(key string, data []byte) { srv.Put(t, "traces", key, data) },
		func(prefix string) []string { return srv.Keys(t, "traces", prefix) })

	var s objstore.Store
	defer s.Close()
	_, err := s.List(context.Background(), srv.URL("no-such-bucket", "run/"), func(string) bool { return true })
	if err == nil || !strings.Contains(err.Error(), "s3://no-such-bucket/run/") {
		t.Errorf("List in a missing bucket: %v, want an error naming the URL", err)
	}
}

func TestFileURL(t *testing.T) {
	dir := t.TempDir()
	url := func(key string) string { return "file://" + filepath.ToSlash(filepath.Join(dir, key)) }
	put := func(key string, data []byte) {
		p := filepath.Join(dir, filepath.FromSlash(key))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	keys := func(prefix string) []string {
		var out []string
		filepath.WalkDir(filepath.Join(dir, prefix), func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				rel, _ := filepath.Rel(dir, p)
				out = append(out, filepath.ToSlash(rel))
			}
			return nil
		})
		return out
	}
	storeCases(t, url, put, keys)
	var s objstore.Store
	if _, _, err := s.Stat(context.Background(), "file://host/x"); err == nil {
		t.Error("file://host/x accepted")
	}
}

func TestSame(t *testing.T) {
	for _, c := range []struct {
		a, b         string
		same, inside bool
	}{
		{"s3://b/run/x.jsonl?region=x", "s3://b/run/x.jsonl", true, false},
		{"s3://b/run/x.jsonl", "s3://b/run", false, true},
		{"s3://b/run/x.jsonl", "s3://b/run/", false, true},
		{"s3://b/runx.jsonl", "s3://b/run", false, false},
		{"s3://b/x.jsonl", "s3://b", false, true},
		{"s3://b/x.jsonl", "s3://c/x.jsonl", false, false},
		{"gs://b/x.jsonl", "s3://b/x.jsonl", false, false},
	} {
		if s, i := objstore.Same(c.a, c.b); s != c.same || i != c.inside {
			t.Errorf("Same(%s, %s) = %v, %v; want %v, %v", c.a, c.b, s, i, c.same, c.inside)
		}
	}
}
