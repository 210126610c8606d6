// Package hugemem allocates the large arrays of the reader and the facts
// (the event store, sort keys, interval lists) so that, where the kernel
// allows, transparent huge pages back them.
//
// Such an array is written once, front to back, into memory the process
// has not touched yet, and with 4 KiB pages every 4 KiB costs a page
// fault. On a 2 GB trace that was some 110,000 faults and a quarter of
// the CPU time on a virtual machine, where faults are expensive. With 2 MiB
// pages it is 512 times fewer. On Linux the rest of the Go heap is advised
// along with each such array (adviseHeap). The advice changes no
// contents, and where it is refused (another OS, transparent huge pages
// off) nothing changes.
package hugemem

// minAdvised is the smallest allocation worth advising: below two huge
// pages the aligned interior is often empty.
const minAdvised = 4 << 20

// Make returns make([]T, n, capacity), advised for huge pages when it is
// large.
func Make[T any](n, capacity int) []T {
	s := make([]T, n, capacity)
	advise(s)
	return s
}
