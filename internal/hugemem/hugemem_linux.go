package hugemem

import (
	"bytes"
	"os"
	"strconv"
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
//
// It then advises the rest of the Go heap as well (adviseHeap).
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
	adviseHeap(start)
}

// adviseHeap asks for huge pages on the Go heap's mapped memory around
// addr: each private anonymous read-write mapping in the run of adjacent
// mappings that holds addr (heapMappings). The runtime maps the heap in
// 4 MiB steps and never advises it, so without this only the large arrays
// were huge-page backed, and each 4 KiB page of everything else the parse
// and facts first touch (the smaller arrays, appended lists, the heads and
// tails of the advised arrays) cost a page fault: on a virtual machine a
// fault is expensive, about 13 us here. Advising is done when a large
// array was just allocated (the heap has just grown) and covers what is
// mapped then, later first touches included; memory mapped afterwards
// waits for the next large array.
//
// Measured with stepdoctor facts on a 200 MB trace, GOMAXPROCS=1, ten
// rounds run in turn with and without: CPU time 0.84x and wall time 0.85x
// (paired medians), minor page faults 10,500 -> 5,100, peak RSS 157 ->
// 167 MiB. Reading /proc/self/maps takes about 55 us a call, some 20
// calls per large trace. Advising
// whole mappings also lets the split ones merge back, so the mapping count
// does not grow with the arrays advised.
func adviseHeap(addr uintptr) {
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return // no procfs: nothing more than the arrays is advised
	}
	for _, m := range heapMappings(maps, addr) {
		lo := (m[0] + hugePageSize - 1) &^ (hugePageSize - 1)
		hi := m[1] &^ (hugePageSize - 1)
		if hi > lo {
			// The range is mapped memory of this process (just read from
			// maps); madvise does not change its contents.
			_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, lo, hi-lo, syscall.MADV_HUGEPAGE)
		}
	}
}

// heapMappings returns the [start, end) of each private anonymous
// read-write mapping in the run of adjacent mappings of maps (the text of
// /proc/self/maps) that holds addr: the Go heap arena, whose mapped parts
// are such mappings and whose reserved parts (PROT_NONE) join them into
// one run. Lines it cannot read end the run there.
func heapMappings(maps []byte, addr uintptr) [][2]uintptr {
	type mapping struct {
		lo, hi uintptr
		anonRW bool
	}
	var all []mapping
	at := -1
	for line := range bytes.Lines(maps) {
		f := bytes.Fields(line)
		if len(f) < 5 {
			continue
		}
		lo, hi, ok := bytes.Cut(f[0], []byte("-"))
		if !ok {
			continue
		}
		l, err1 := strconv.ParseUint(string(lo), 16, 64)
		h, err2 := strconv.ParseUint(string(hi), 16, 64)
		if err1 != nil || err2 != nil || h <= l {
			continue
		}
		// Anonymous: inode 0 and no path, or a name the kernel gives
		// anonymous memory ("[anon:...]"); not the brk heap or a stack.
		anon := string(f[4]) == "0" && (len(f) == 5 || bytes.HasPrefix(f[5], []byte("[anon:")))
		m := mapping{uintptr(l), uintptr(h), anon && string(f[1]) == "rw-p"}
		if m.lo <= addr && addr < m.hi {
			at = len(all)
		}
		all = append(all, m)
	}
	if at < 0 {
		return nil
	}
	first, last := at, at
	for first > 0 && all[first-1].hi == all[first].lo {
		first--
	}
	for last+1 < len(all) && all[last].hi == all[last+1].lo {
		last++
	}
	var out [][2]uintptr
	for _, m := range all[first : last+1] {
		if m.anonRW {
			out = append(out, [2]uintptr{m.lo, m.hi})
		}
	}
	return out
}
