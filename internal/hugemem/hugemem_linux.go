package hugemem

import (
	"syscall"
	"unsafe"
)

// hugePageSize is the x86-64 and arm64 (4 KiB granule) transparent huge
// page size.
const hugePageSize = 2 << 20

// advise asks the kernel to back the whole 2 MiB pages inside s's backing
// array with transparent huge pages (madvise MADV_HUGEPAGE, honoured when
// /sys/kernel/mm/transparent_hugepage/enabled is "madvise" or "always").
// Errors (an old kernel, THP off) are harmless and ignored.
//
// Each call may split one of the Go heap's mappings in two (the advised
// range gets its own VMA). Go 1.21.0 advised every heap span this way and
// ran into the kernel's mapping limit (golang/go#61718); here only arrays
// of 4 MiB or more are advised, about 20 per trace read, so the mapping
// count stays far below vm.max_map_count (65530 by default) even for a
// directory of many ranks.
func advise[T any](s []T) {
	size := uintptr(cap(s)) * unsafe.Sizeof(*new(T))
	if size < minAdvised {
		return
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s[:1]))), size)
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo := (hugePageSize - start%hugePageSize) % hugePageSize
	if lo >= size {
		return
	}
	if hi := lo + (size-lo)&^(hugePageSize-1); hi > lo {
		_ = syscall.Madvise(b[lo:hi], syscall.MADV_HUGEPAGE)
	}
}
