package rules

import (
	"fmt"
	"io"
	"io/fs"
	"os"
)

// MaxFileSize caps a config, rule, case or case script file: such files
// are a few KB, and reading stops past the cap, so /dev/zero or a huge
// file given as one cannot exhaust memory.
const MaxFileSize = 4 << 20

// errTooLarge is the reason a file over MaxFileSize is refused.
var errTooLarge = fmt.Errorf("file is larger than %d MiB (config, rule and case files are a few KB)", MaxFileSize>>20)

// readCapped reads r to its end, refusing more than MaxFileSize bytes.
func readCapped(r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxFileSize {
		return nil, errTooLarge
	}
	return b, nil
}

// readFileCapped is os.ReadFile with the MaxFileSize cap.
func readFileCapped(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readCapped(f)
}

// readFSCapped is fs.ReadFile with the MaxFileSize cap.
func readFSCapped(fsys fs.FS, name string) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readCapped(f)
}
