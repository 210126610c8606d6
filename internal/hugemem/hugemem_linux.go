package hugemem

import (
	"bytes"
	"os"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unsafe"
)

// hugePageSize is the x86-64 and arm64 (4 KiB granule) transparent huge
// page size.
const hugePageSize = 2 << 20

// advise asks the kernel to back the whole 2 MiB pages inside s's backing
// array with transparent huge pages (madvise MADV_HUGEPAGE, honoured when
// /sys/kernel/mm/transparent_hugepage/enabled is "madvise" or "always"),
// then the rest of the Go heap (adviseHeap). Errors (an old kernel, THP
// off) are harmless and ignored; where the array's own advice is refused,
// the heap's is not tried. GODEBUG=disablethp=1, the Go runtime's switch
// for huge pages on the heap, turns all of it off.
//
// Advising a part of a mapping splits it (the advised range gets its own
// VMA); only arrays of 4 MiB or more are advised, about 20 per trace read,
// and advising the heap's whole mappings lets them merge again, so the
// mapping count stays far below vm.max_map_count (65530 by default) even
// for a directory of many ranks.
func advise[T any](s []T) {
	size := uintptr(cap(s)) * unsafe.Sizeof(*new(T))
	if size < minAdvised || thpDisabled {
		return
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s[:1]))), size)
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo := (hugePageSize - start%hugePageSize) % hugePageSize
	if lo >= size {
		return
	}
	if hi := lo + (size-lo)&^(hugePageSize-1); hi > lo {
		if syscall.Madvise(b[lo:hi], syscall.MADV_HUGEPAGE) != nil {
			return
		}
	}
	adviseHeap(start)
}

// thpDisabled reports GODEBUG=disablethp=1, with which the Go runtime marks
// its heap mappings MADV_NOHUGEPAGE: a user who turned huge pages off
// keeps them off.
var thpDisabled = slices.Contains(strings.Split(os.Getenv("GODEBUG"), ","), "disablethp=1")

// adviseHeap asks for huge pages on the Go heap's mapped memory around
// addr: each mapping heapMappings finds. The Go runtime does not advise
// heap memory (Go 1.21.0 did, for all of it, and backed that out for
// allocation stalls and memory growth: golang/go#61718, #64332), so
// without this only the large arrays were huge-page backed, and each
// 4 KiB page of everything else the parse and facts first touch (smaller
// arrays, appended lists, the heads and tails of the advised arrays) cost
// a page fault, about 13 us on a virtual machine here. This process is
// short-lived, so khugepaged's later growth of the heap does not arise;
// a stall in direct compaction can, and GODEBUG=disablethp=1 avoids it.
//
// It runs when a large array was just allocated, and only when the
// runtime has mapped more memory since the last time (a large array that
// reuses freed heap adds nothing to advise); it covers what is mapped
// then, later first touches included, and skips mappings it advised
// before. Memory mapped afterwards waits for the next large array.
//
// Measured with stepdoctor facts, GOMAXPROCS=1, ten rounds run in turn
// with and without (paired medians): on a 200 MB trace CPU time 0.84x and
// 0.90x in two batches, minor page faults 10,500 -> 5,100, peak RSS about
// 150 -> 167 MiB; on a 532 MB trace CPU time 0.87x, faults 17,000 ->
// 9,300, peak RSS 279 -> 305 MiB; analyze on it with GOMAXPROCS=2, 0.83x
// and 334 -> 372 MiB. (Smaller temporaries in the facts then took peak
// memory back to where it was: analyze 344 MiB on both.) A call reads /proc/self/maps (80 us alone, more while other
// threads fault) and makes a madvise call per new mapping, which holds
// the process's mapping lock; a 500 MB trace makes about 20 calls.
func adviseHeap(addr uintptr) {
	heapAdvice.Lock()
	defer heapAdvice.Unlock()
	mapped := runtimeMapped()
	if mapped != 0 && mapped <= heapAdvice.mapped {
		return
	}
	heapAdvice.mapped = mapped
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return // no procfs: nothing more than the arrays is advised
	}
	heap := heapMappings(maps, addr)
	for _, m := range heap {
		if slices.ContainsFunc(heapAdvice.done, func(d [2]uintptr) bool { return d[0] <= m[0] && m[1] <= d[1] }) {
			continue
		}
		// The range is mapped memory of this process (just read from
		// maps); madvise changes no contents.
		_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, m[0], m[1]-m[0], syscall.MADV_HUGEPAGE)
	}
	heapAdvice.done = heap
}

// heapAdvice is what adviseHeap did last: the runtime's mapped memory
// then, and the heap's mappings, all advised by then (only the last
// read's, so the list stays as long as the heap has mappings).
var heapAdvice struct {
	sync.Mutex
	mapped uint64
	done   [][2]uintptr
}

// runtimeMapped returns the bytes of memory the Go runtime has mapped
// (runtime/metrics /memory/classes/total:bytes), or 0 when unknown.
func runtimeMapped() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// heapMappings returns the [start, end) of the Go heap mappings in the
// run of adjacent mappings of maps (the text of /proc/self/maps) that
// holds addr: private anonymous read-write mappings (no path, or a name
// "[anon:...]") whose both ends fall on 2 MiB boundaries. The Go heap
// arena is such a run, its reserved parts (PROT_NONE) joining the mapped
// ones; the runtime maps it in 4 MiB-aligned steps, and the array advice
// splits it at 2 MiB boundaries, while thread stacks (a guard page
// apart), malloc arenas and a binary's bss do not end on such boundaries.
// Lines it cannot read are skipped; an address gap ends the run.
func heapMappings(maps []byte, addr uintptr) [][2]uintptr {
	type mapping struct {
		lo, hi uintptr
		heap   bool
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
		anon := string(f[4]) == "0" && (len(f) == 5 || bytes.HasPrefix(f[5], []byte("[anon:")))
		aligned := l%hugePageSize == 0 && h%hugePageSize == 0
		m := mapping{uintptr(l), uintptr(h), anon && aligned && string(f[1]) == "rw-p"}
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
		if m.heap {
			out = append(out, [2]uintptr{m.lo, m.hi})
		}
	}
	return out
}
