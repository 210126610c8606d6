package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/stepdoctor/stepdoctor/engine/trace/tracetest"
	"github.com/stepdoctor/stepdoctor/internal/objstore/fakes3"
)

// TestS3Inputs runs facts, analyze and diff on s3:// URLs against an
// S3-protocol server on 127.0.0.1: each rank's tensorboard_trace_handler
// prefix (one trace gzip-compressed, one not, and a file the listing
// leaves out) is reduced to a facts object written back with -o, and the
// report over the facts prefix equals the report over the traces.
func TestS3Inputs(t *testing.T) {
	srv := fakes3.Start(t, "runs")
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(tracetest.Rank(0, 2).JSON())
	zw.Close()
	srv.Put(t, "runs", "job/traces/rank0/node0_11.pt.trace.json.gz", gz.Bytes())
	srv.Put(t, "runs", "job/traces/rank1/node0_12.pt.trace.json", tracetest.Rank(1, 2).JSON())
	srv.Put(t, "runs", "job/traces/rank1/notes.txt", []byte("not a trace"))

	for _, r := range []string{"0", "1"} {
		if code, _, stderr := runCLI(t, "facts", srv.URL("runs", "job/traces/rank"+r+"/"), "-o", srv.URL("runs", "job/facts/rank"+r+".jsonl")); code != 0 {
			t.Fatalf("facts rank %s: exit %d: %s", r, code, stderr)
		}
	}
	if keys := srv.Keys(t, "runs", "job/facts/"); !reflect.DeepEqual(keys, []string{"job/facts/rank0.jsonl", "job/facts/rank1.jsonl"}) {
		t.Fatalf("facts objects %v", keys)
	}
	report := func(url string) map[string]any {
		t.Helper()
		code, stdout, stderr := runCLI(t, "analyze", "-q", "--format", "json", url)
		if code != 0 {
			t.Fatalf("analyze %s: exit %d: %s", url, code, stderr)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(stdout), &m); err != nil {
			t.Fatal(err)
		}
		delete(m, "stepdoctor")
		return m
	}
	merged, direct := report(srv.URL("runs", "job/facts/")), report(srv.URL("runs", "job/traces"))
	if !reflect.DeepEqual(merged, direct) {
		t.Errorf("the report over the facts prefix differs from the report over the traces")
	}
	traces, _ := direct["traces"].([]any)
	if len(traces) != 2 {
		t.Fatalf("%d traces read from the prefix, want 2", len(traces))
	}
	in, _ := traces[0].(map[string]any)["input"].(map[string]any)
	if in["compressed"] != true || !strings.Contains(in["path"].(string), "rank0/node0_11.pt.trace.json.gz") {
		t.Errorf("rank 0 input %v: want the gzip trace, detected as compressed", in)
	}
	if code, _, stderr := runCLI(t, "diff", "-q", srv.URL("runs", "job/facts/rank0.jsonl"), srv.URL("runs", "job/facts/rank1.jsonl")); code != 0 {
		t.Errorf("diff of two facts objects: exit %d: %s", code, stderr)
	}

	// -o into the prefix being read is refused; a missing prefix names its URL.
	if code, _, stderr := runCLI(t, "facts", srv.URL("runs", "job/traces/rank1/"), "-o", srv.URL("runs", "job/traces/rank1/x.jsonl")); code != 2 || !strings.Contains(stderr, "refuse output") {
		t.Errorf("facts -o into its input prefix: exit %d: %s", code, stderr)
	}
	missing := srv.URL("runs", "job/nothing/")
	if code, _, stderr := runCLI(t, "analyze", missing); code != 2 || !strings.Contains(stderr, missing) {
		t.Errorf("analyze of an empty prefix: exit %d: %s", code, stderr)
	}
}
