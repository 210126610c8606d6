//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOutputThroughLinksAndDevices: -o onto a symbolic link replaces the
// file it points to and keeps the link; onto a FIFO (as onto a character
// device such as /dev/null, which a test run as root must not risk) it
// writes through and leaves the node as it was; onto a directory it fails
// naming it. Before, the rename replaced the link, the FIFO and even
// /dev/null with a regular file.
func TestOutputThroughLinksAndDevices(t *testing.T) {
	d := t.TempDir()
	trace := filepath.Join(d, "x.json")
	copyTrace(t, "dataloader_bound.pt.trace.json", trace)

	target, link := filepath.Join(d, "target.md"), filepath.Join(d, "link.md")
	os.WriteFile(target, []byte("old\n"), 0o644)
	if err := os.Symlink("target.md", link); err != nil {
		t.Skip("symlink:", err)
	}
	if code, _, stderr := runCLI(t, "analyze", "-q", "-o", link, trace); code != 0 {
		t.Fatalf("analyze -o link: exit %d: %s", code, stderr)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v %v", st, err)
	}
	if b, _ := os.ReadFile(target); !strings.Contains(string(b), "dataloader") {
		t.Errorf("the link's target holds %q, want the report", b)
	}

	fifo := filepath.Join(d, "pipe")
	mkfifo(t, fifo)
	got := make(chan []byte)
	go func() {
		b, _ := os.ReadFile(fifo) // opens the read end; returns at the writer's close
		got <- b
	}()
	if code, _, stderr := runCLI(t, "facts", "-o", fifo, trace); code != 0 {
		t.Fatalf("facts -o fifo: exit %d: %s", code, stderr)
	}
	if b := <-got; !strings.Contains(string(b), "gpu_idle_ratio") {
		t.Errorf("read %q from the FIFO, want the facts", b)
	}
	if st, err := os.Lstat(fifo); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced: %v %v", st, err)
	}

	if code, _, stderr := runCLI(t, "analyze", "-q", "--format", "md", "-o", d, trace); code != 2 || !strings.Contains(stderr, "is a directory") {
		t.Errorf("analyze -o DIR: exit %d, %q; want exit 2 and 'is a directory'", code, stderr)
	}
}
