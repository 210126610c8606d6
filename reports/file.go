package reports

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// WriteFile writes a report atomically: render writes into a temporary file
// in the same directory as path, which is flushed, fsynced and renamed over
// path. If render or any step fails, the temporary file is removed and path
// is left as it was, so no partial report is ever visible. A new file gets
// mode 0644; an existing file keeps its mode. SIGINT or SIGTERM while a
// report is being written removes the temporary file before the process
// ends of the signal (see RemoveTemps).
//
// A symbolic link at path is followed: the report replaces the file it
// points to, and the link stays. A path that is a character device or a
// FIFO (/dev/stdout, /dev/null, a named pipe) is written straight through,
// where a rename would replace the device node with a regular file. A
// directory is refused.
func WriteFile(path string, render func(io.Writer) error) (err error) {
	// A device or pipe reached through links the kernel resolves itself
	// (/dev/stdout -> /proc/self/fd/1 -> pipe:[N], which readlink cannot
	// follow as a path) is written through.
	if st, statErr := os.Stat(path); statErr == nil && st.Mode()&(os.ModeDevice|os.ModeNamedPipe) != 0 {
		return writeThrough(path, render)
	}
	if path, err = writeTarget(path); err != nil {
		return err
	}
	if st, statErr := os.Stat(path); statErr == nil && st.Mode()&(os.ModeDevice|os.ModeNamedPipe) != 0 {
		return writeThrough(path, render)
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	mode := os.FileMode(0o644)
	if st, statErr := os.Stat(path); statErr == nil && st.Mode().IsRegular() {
		mode = st.Mode().Perm()
	}
	tmp, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return fmt.Errorf("create temp file: %w", err)
	}
	tmpName := tmp.Name()
	untrack := trackTemp(tmpName)
	defer untrack()
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmpName)
		}
	}()
	bw := bufio.NewWriterSize(tmp, 64<<10)
	if err = render(bw); err != nil {
		return fmt.Errorf("render report: %w", err)
	}
	if err = bw.Flush(); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	if err = tmp.Chmod(mode); err != nil {
		return fmt.Errorf("set report mode: %w", err)
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("sync report: %w", err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("close report: %w", err)
	}
	if err = os.Rename(tmpName, path); err != nil {
		return fmt.Errorf("rename report: %w", err)
	}
	// Best effort: persist the rename itself.
	if d, openErr := os.Open(dir); openErr == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}

// writeTarget is the path a write to path replaces: path itself, or the
// end of the chain of symbolic links at path (which need not exist yet).
// It fails for a directory.
func writeTarget(path string) (string, error) {
	for hops := 0; ; hops++ {
		st, err := os.Lstat(path)
		if err != nil {
			return path, nil // a new file: created by the rename
		}
		switch {
		case st.IsDir():
			return "", fmt.Errorf("write %s: is a directory", path)
		case st.Mode()&os.ModeSymlink == 0:
			return path, nil
		case hops == 40: // as the kernel's ELOOP limit
			return "", fmt.Errorf("write %s: too many levels of symbolic links", path)
		}
		to, err := os.Readlink(path)
		if err != nil {
			return "", fmt.Errorf("write %s: %w", path, err)
		}
		if !filepath.IsAbs(to) {
			to = filepath.Join(filepath.Dir(path), to)
		}
		path = to
	}
}

// writeThrough writes a report into a device or a FIFO as it is rendered:
// there is no file to replace atomically.
func writeThrough(path string, render func(io.Writer) error) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	bw := bufio.NewWriterSize(f, 64<<10)
	if err := render(bw); err != nil {
		_ = f.Close()
		return fmt.Errorf("render report: %w", err)
	}
	if err := bw.Flush(); err != nil {
		_ = f.Close()
		return fmt.Errorf("write report: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close report: %w", err)
	}
	return nil
}

// temps are the temporary files of the reports being written, removed when
// SIGINT or SIGTERM arrives. While none is being written the signals keep
// their default action.
var temps struct {
	sync.Mutex
	files map[string]bool
	ch    chan os.Signal
}

// trackTemp registers a temporary file for removal on a signal; the
// returned function unregisters it.
func trackTemp(name string) func() {
	temps.Lock()
	defer temps.Unlock()
	if temps.files == nil {
		temps.files = map[string]bool{}
		temps.ch = make(chan os.Signal, 1)
		go onSignal(temps.ch)
	}
	if sigs := catchable(); len(temps.files) == 0 && len(sigs) > 0 {
		// Notify with no signal would relay every signal.
		signal.Notify(temps.ch, sigs...)
	}
	temps.files[name] = true
	return func() {
		temps.Lock()
		defer temps.Unlock()
		delete(temps.files, name)
		if len(temps.files) == 0 {
			signal.Stop(temps.ch)
		}
	}
}

// catchable are the signals a write removes its temporary file on: SIGINT
// and SIGTERM, except one the process was started with ignored (nohup, a
// background job of a shell script). Notify would turn an ignored signal
// back on (os/signal: "it will no longer be ignored"), and the handler's
// re-raise would then do nothing: the write went on without its file.
func catchable() []os.Signal {
	var sigs []os.Signal
	for _, s := range []os.Signal{os.Interrupt, syscall.SIGTERM} {
		if !signal.Ignored(s) {
			sigs = append(sigs, s)
		}
	}
	return sigs
}

// RemoveTemps removes the temporary files of every report being written
// and reports how many it removed. The signal handler calls it; a program
// that ends itself in the middle of a write may too.
func RemoveTemps() int {
	temps.Lock()
	defer temps.Unlock()
	n := 0
	for name := range temps.files {
		if os.Remove(name) == nil {
			n++
		}
		delete(temps.files, name)
	}
	return n
}

// onSignal removes the temporary files, then ends the process of the same
// signal (the default action restored), so the exit status still says
// which signal stopped it.
func onSignal(ch chan os.Signal) {
	for sig := range ch {
		RemoveTemps()
		signal.Reset(sig)
		if p, err := os.FindProcess(os.Getpid()); err == nil && p.Signal(sig) == nil {
			time.Sleep(time.Second) // the default action ends the process
		}
		code := 130 // SIGINT
		if sig == syscall.SIGTERM {
			code = 143
		}
		os.Exit(code)
	}
}
