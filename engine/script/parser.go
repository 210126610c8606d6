package script

import "errors"

// ErrNoParser is returned by Scan and ScanFile in a build without cgo,
// which has no Python parser: the trace subcommands work, lint does not.
var ErrNoParser = errors.New("stepdoctor was built without the Python parser (tree-sitter needs cgo): script checks need a build with CGO_ENABLED=1 and a C compiler")
