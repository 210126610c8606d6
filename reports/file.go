package reports

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// WriteFile writes a report atomically: render writes into a temporary file
// in the same directory as path, which is flushed, fsynced and renamed over
// path. If render or any step fails, the temporary file is removed and path
// is left as it was, so no partial report is ever visible. A new file gets
// mode 0644; an existing file keeps its mode.
func WriteFile(path string, render func(io.Writer) error) (err error) {
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
