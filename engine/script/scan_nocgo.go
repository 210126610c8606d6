//go:build !cgo

package script

// Available is false: this build has no Python parser (tree-sitter needs
// cgo), so Scan and ScanFile return ErrNoParser.
const Available = false

// ScanFile returns ErrNoParser: this build cannot parse Python.
func ScanFile(path string) (*Facts, error) { return nil, ErrNoParser }

// Scan returns ErrNoParser: this build cannot parse Python.
func Scan(file string, src []byte) (*Facts, error) { return nil, ErrNoParser }
