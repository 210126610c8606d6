//go:build unix

package reports

import (
	"bufio"
	"errors"
	"io"
	"os"
	"os/exec"
	"os/signal"
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
		cmd, _, _ := startWriter(t, "TestSignalRemovesTempFile", "STEPDOCTOR_SIGNAL_CHILD="+dir)
		if tmps, _ := filepath.Glob(filepath.Join(dir, ".report.md.tmp-*")); len(tmps) != 1 {
			t.Fatalf("before the signal: temp files %v, want one", tmps)
		}
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		var err error
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

// TestIgnoredSignalStaysIgnored: a process whose SIGINT is ignored (nohup,
// a background job of a script) keeps ignoring it during a report write,
// and the write completes. Before, the write's handler turned SIGINT back
// on, removed the temporary file, and the rename then failed.
func TestIgnoredSignalStaysIgnored(t *testing.T) {
	if dir := os.Getenv("STEPDOCTOR_IGNORED_CHILD"); dir != "" {
		signal.Ignore(syscall.SIGINT)
		err := WriteFile(filepath.Join(dir, "report.md"), func(w io.Writer) error {
			os.Stdout.WriteString("ready\n")
			_, _ = bufio.NewReader(os.Stdin).ReadString('\n') // the parent has signalled
			_, err := io.WriteString(w, "whole report\n")
			return err
		})
		if err != nil {
			os.Stdout.WriteString(err.Error() + "\n")
			os.Exit(2)
		}
		os.Exit(0)
	}
	dir := t.TempDir()
	cmd, in, r := startWriter(t, "TestIgnoredSignalStaysIgnored", "STEPDOCTOR_IGNORED_CHILD="+dir)
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // let a handler, if any, run
	io.WriteString(in, "go on\n")
	rest, _ := io.ReadAll(r)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child: %v (%s), want a finished write", err, rest)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "report.md")); err != nil || string(b) != "whole report\n" {
		t.Errorf("report %q, %v; want the whole report", b, err)
	}
}

// startWriter re-runs the test binary as a child running only test, with
// env added, and returns once the child says "ready" (in the middle of its
// report write), with its stdin and the rest of its stdout.
func startWriter(t *testing.T, test, env string) (*exec.Cmd, io.WriteCloser, *bufio.Reader) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$")
	cmd.Env = append(os.Environ(), env)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(out)
	if line, err := r.ReadString('\n'); err != nil || line != "ready\n" {
		_ = cmd.Process.Kill()
		t.Fatalf("child: %q, %v", line, err)
	}
	return cmd, in, r
}
