//go:build unix

package reports

import (
	"bufio"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSignalRemovesTempFile re-runs the test binary as a child that stops
// in the middle of a report write; SIGTERM or SIGINT to the child must end
// it of that signal and leave no temporary file and no report behind.
func TestSignalRemovesTempFile(t *testing.T) {
	if dir := os.Getenv("STEPDOCTOR_SIGNAL_CHILD"); dir != "" {
		_ = WriteFile(filepath.Join(dir, "report.md"), func(w io.Writer) error {
			if _, err := io.WriteString(w, strings.Repeat("partial report\n", 10000)); err != nil {
				return err
			}
			os.Stdout.WriteString("ready\n")
			select {} // the signal ends the write
		})
		os.Exit(0)
	}
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		dir := t.TempDir()
		cmd := exec.Command(os.Args[0], "-test.run=^TestSignalRemovesTempFile$")
		cmd.Env = append(os.Environ(), "STEPDOCTOR_SIGNAL_CHILD="+dir)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		line, err := bufio.NewReader(out).ReadString('\n')
		if err != nil || line != "ready\n" {
			_ = cmd.Process.Kill()
			t.Fatalf("child: %q, %v", line, err)
		}
		if tmps, _ := filepath.Glob(filepath.Join(dir, ".report.md.tmp-*")); len(tmps) != 1 {
			t.Fatalf("before the signal: temp files %v, want one", tmps)
		}
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err = <-done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			t.Fatalf("%v: child did not end", sig)
		}
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("%v: child ended with %v, want the signal", sig, err)
		}
		if ws, ok := ee.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != sig {
			t.Errorf("%v: child status %v, want killed by the signal", sig, ee)
		}
		left, _ := os.ReadDir(dir)
		if len(left) != 0 {
			t.Errorf("%v: files left behind: %v", sig, left)
		}
	}
}

// TestRemoveTemps checks the cleanup itself: it removes the files of the
// writes in progress, and a finished write is no longer tracked.
func TestRemoveTemps(t *testing.T) {
	dir := t.TempDir()
	entered, release := make(chan struct{}), make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		errc <- WriteFile(filepath.Join(dir, "r.md"), func(w io.Writer) error {
			close(entered)
			<-release
			_, err := io.WriteString(w, "x")
			return err
		})
	}()
	<-entered
	if n := RemoveTemps(); n != 1 {
		t.Errorf("RemoveTemps removed %d files, want 1", n)
	}
	close(release)
	if err := <-errc; err == nil {
		t.Error("the write whose temp file was removed succeeded")
	}
	if err := WriteFile(filepath.Join(dir, "r.md"), func(w io.Writer) error { _, err := io.WriteString(w, "ok"); return err }); err != nil {
		t.Fatal(err)
	}
	if n := RemoveTemps(); n != 0 {
		t.Errorf("after a finished write RemoveTemps removed %d files", n)
	}
	if left, _ := os.ReadDir(dir); len(left) != 1 {
		t.Errorf("files: %v, want only r.md", left)
	}
}
