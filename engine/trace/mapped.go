package trace

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sync/atomic"
	"unsafe"
)

// A plain (not gzip) trace file is read through a read-only memory mapping
// where the system allows it (mapped_linux.go): the lexer's window is the
// whole file and the parallel read's chunks are slices of it, so no byte
// is copied out of the page cache. Pages the read has passed are released
// as it goes (releaseStep), so the mapping adds at most a few chunks to the
// resident set. The result is the streamed read's in every case (tests
// compare both on every shared trace and the damage inputs).
//
// A file cut short while mapped faults on the lost pages. The reading
// goroutines run with debug.SetPanicOnFault, and the fault becomes an
// error naming the file and offset instead of a crash.

// mapping is a mapped file's contents.
type mapping struct {
	data     []byte
	released int // bytes from the start already released
}

// releaseStep is how far the read moves past the last release before the
// pages behind it are released again.
const releaseStep = 16 << 20

// mapInput maps r's contents when r is a plain regular file that can be
// mapped; ok is false otherwise (the input is then streamed).
func mapInput(r io.Reader) (m *mapping, ok bool) {
	f, isFile := r.(*os.File)
	if !isFile || !canMap {
		return nil, false
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() < 2 || int64(int(st.Size())) != st.Size() {
		return nil, false
	}
	var magic [2]byte
	if n, _ := f.ReadAt(magic[:], 0); n == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		return nil, false // gzip is inflated as a stream
	}
	// Only a file read from its start: a reader that has moved on reads
	// from where it is.
	if off, err := f.Seek(0, io.SeekCurrent); err != nil || off != 0 {
		return nil, false
	}
	data, err := mapFile(f, int(st.Size()))
	if err != nil {
		return nil, false
	}
	mappedReads.Add(1)
	if afterMap != nil {
		afterMap(f)
	}
	return &mapping{data: data[:len(data):len(data)]}, true
}

// mappedReads counts the files read through a mapping, and afterMap runs
// once a file is mapped (for the tests: the mapped read is taken, and a
// file cut short while mapped is an error).
var (
	mappedReads atomic.Int64
	afterMap    func(*os.File)
)

// release gives back the pages before off that are not released yet.
func (m *mapping) release(off int64) {
	end := int(off) &^ (pageSize - 1)
	if end <= m.released {
		return
	}
	releasePages(m.data[m.released:end])
	m.released = end
}

func (m *mapping) close() { unmapFile(m.data) }

// readMapped runs read with memory faults turned into panics, and a fault
// on m (the file was cut short while it was read) into an error naming the
// first byte lost; any other panic goes on.
func readMapped(name string, m *mapping, read func() (*Trace, error)) (t *Trace, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			f, ok := r.(interface{ Addr() uintptr })
			base := uintptr(unsafe.Pointer(unsafe.SliceData(m.data)))
			if !ok || f.Addr() < base || f.Addr()-base >= uintptr(len(m.data)) {
				panic(r)
			}
			t, err = nil, fmt.Errorf("parse trace %s: byte %d: the file changed while it was read (%d bytes when the read began, now shorter): read it again once it is complete", name, f.Addr()-base, len(m.data))
		}
	}()
	return read()
}
