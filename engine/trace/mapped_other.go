//go:build !linux

package trace

import (
	"errors"
	"os"
)

const canMap = false

var pageSize = os.Getpagesize()

func mapFile(*os.File, int) ([]byte, error) { return nil, errors.ErrUnsupported }

func unmapFile([]byte) {}

func releasePages([]byte) {}
