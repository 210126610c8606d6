package reports

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// ErrUnknownFormat is wrapped by FormatFor when a path's extension names no
// report format.
var ErrUnknownFormat = errors.New("unknown report format")

// FormatFor picks a report format from a path's extension, case-insensitively:
// ".md" and ".markdown" give "md", ".html" and ".htm" give "html", ".json"
// gives "json". Any other extension is an error naming the path.
func FormatFor(path string) (string, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".md", ".markdown":
		return "md", nil
	case ".html", ".htm":
		return "html", nil
	case ".json":
		return "json", nil
	}
	return "", fmt.Errorf("choose format for %q (want .md, .markdown, .html, .htm or .json): %w", path, ErrUnknownFormat)
}

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
