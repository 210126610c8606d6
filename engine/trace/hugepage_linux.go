package trace

import (
	"syscall"
	"unsafe"
)

// hugePageSize is the x86-64 and arm64 (4 KiB granule) transparent huge
// page size.
const hugePageSize = 2 << 20

// adviseHugePages asks the kernel to back the untouched store with
// transparent huge pages (madvise MADV_HUGEPAGE; honoured when
// /sys/kernel/mm/transparent_hugepage/enabled is "madvise" or "always").
// The store is written once, front to back, so 4 KiB pages would cost
// one page fault per 42 events; a 200 MB trace's store takes some 18,000
// faults, which a virtual machine makes expensive. Only whole 2 MiB pages
// inside the slice are advised. The advice changes no contents and its
// failure (an old kernel, THP off) is harmless, so errors are ignored.
func adviseHugePages(s []Event) {
	if cap(s) == 0 {
		return
	}
	size := uintptr(cap(s)) * unsafe.Sizeof(s[:1][0])
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), size)
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo := (hugePageSize - start%hugePageSize) % hugePageSize
	if lo >= size {
		return
	}
	hi := lo + (size-lo)&^(hugePageSize-1)
	if hi > lo {
		_ = syscall.Madvise(b[lo:hi], syscall.MADV_HUGEPAGE)
	}
}
