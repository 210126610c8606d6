package trace

import (
	"os"
	"syscall"
)

const canMap = true

var pageSize = os.Getpagesize()

func mapFile(f *os.File, size int) ([]byte, error) {
	data, err := syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ, syscall.MAP_PRIVATE)
	if err != nil {
		return nil, err
	}
	_ = syscall.Madvise(data, syscall.MADV_SEQUENTIAL)
	return data, nil
}

func unmapFile(b []byte) { _ = syscall.Munmap(b[:cap(b)]) }

// releasePages drops the pages of b from the resident set (MADV_DONTNEED);
// they stay in the page cache, and a later read of them maps them again.
func releasePages(b []byte) {
	if len(b) > 0 {
		_ = syscall.Madvise(b, syscall.MADV_DONTNEED)
	}
}
