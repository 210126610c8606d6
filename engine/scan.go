package engine

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// scanDir walks dir for the files a directory input reads: those whose name
// keep accepts, below the subdirectories descend accepts (nil: all).
// Entries that are not regular files (named pipes, sockets, devices, and
// symlinks to them) and subdirectories that cannot be read are skipped and
// listed, so that one such entry neither hangs the run (opening a FIFO
// blocks until a writer comes) nor aborts it. An unreadable dir itself is
// an error.
func scanDir(dir string, descend func(path string, d fs.DirEntry) bool, keep func(name string) bool) (found []string, skipped []Skipped, err error) {
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == dir {
				return err
			}
			skipped = append(skipped, Skipped{Path: path, Reason: fmt.Sprintf("unreadable: %v", err)})
			if d != nil && d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if path != dir && descend != nil && !descend(path, d) {
				return filepath.SkipDir
			}
			return nil
		}
		if !keep(d.Name()) {
			return nil
		}
		mode := d.Type()
		if mode&fs.ModeSymlink != 0 {
			st, err := os.Stat(path)
			if err != nil {
				found = append(found, path) // reading it reports the error
				return nil
			}
			mode = st.Mode().Type()
		}
		if !mode.IsRegular() {
			skipped = append(skipped, Skipped{Path: path, Reason: "not a regular file: " + describeMode(mode)})
			return nil
		}
		found = append(found, path)
		return nil
	})
	return found, skipped, err
}

func describeMode(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0 || m&fs.ModeCharDevice != 0:
		return "a device"
	case m.IsDir():
		return "a directory"
	}
	return "mode " + m.String()
}
