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

// Mappable is an input that is a local file the reader may map instead
// of reading it, when Parse is given it rather than the *os.File itself
// (a wrapper that adds a Size or counts progress). MappedFile returns the
// file, not yet read from; Passed is told the bytes the read has moved
// past since its last call, every 16 MiB or so and at the end, so that
// progress can still be shown.
type Mappable interface {
	MappedFile() *os.File
	Passed(n int64)
}

// mapping is a mapped file's contents.
type mapping struct {
	data     []byte
	f        *os.File
	released int         // bytes from the start already released
	passed   func(int64) // Mappable.Passed, or nil
	told     int64       // bytes passed told so far
}

// releaseStep is how far the read moves past the last release before the
// pages behind it are released again.
const releaseStep = 16 << 20

// mapInput maps r's contents when r is a plain regular file that can be
// mapped; ok is false otherwise (the input is then streamed).
func mapInput(r io.Reader) (m *mapping, ok bool) {
	var passed func(int64)
	f, isFile := r.(*os.File)
	if mf, ok := r.(Mappable); ok {
		f, isFile, passed = mf.MappedFile(), true, mf.Passed
	}
	if !isFile || f == nil || !canMap {
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
	return &mapping{data: data[:len(data):len(data)], f: f, passed: passed}, true
}

// mappedReads counts the files read through a mapping, and afterMap runs
// once a file is mapped (for the tests: the mapped read is taken, and a
// file cut short while mapped is an error).
var (
	mappedReads atomic.Int64
	afterMap    func(*os.File)
)

// release gives back the pages before off that are not released yet, and
// tells Passed how far the read has come.
func (m *mapping) release(off int64) {
	m.tell(off)
	end := int(off) &^ (pageSize - 1)
	if end <= m.released {
		return
	}
	releasePages(m.data[m.released:end])
	m.released = end
}

// tell tells Passed the bytes up to off not told yet.
func (m *mapping) tell(off int64) {
	if m.passed != nil && off > m.told {
		m.passed(off - m.told)
		m.told = off
	}
}

func (m *mapping) close() {
	m.tell(int64(len(m.data)))
	unmapFile(m.data)
}

// readMapped runs read with memory faults turned into panics. A fault on
// m, or a file found shorter than m once read (a cut inside the last page
// reads as zero bytes, not a fault), means the file was cut short while
// it was read: that is the error, naming where the read was and the
// sizes. Any other panic goes on.
func readMapped(name string, m *mapping, read func() (*Trace, error)) (t *Trace, err error) {
	changed := func(at int64) error {
		now := "shorter"
		if st, err := m.f.Stat(); err == nil {
			now = fmt.Sprintf("%d now", st.Size())
		}
		return fmt.Errorf("parse trace %s: byte %d: the file changed while it was read (%d bytes when the read began, %s): read it again once it is complete", name, at, len(m.data), now)
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			f, ok := r.(interface{ Addr() uintptr })
			base := uintptr(unsafe.Pointer(unsafe.SliceData(m.data)))
			if !ok || f.Addr() < base || f.Addr()-base >= uintptr(len(m.data)) {
				panic(r)
			}
			t, err = nil, changed(int64(f.Addr()-base))
		}
	}()
	t, err = read()
	if st, serr := m.f.Stat(); serr == nil && st.Size() < int64(len(m.data)) {
		return nil, changed(st.Size())
	}
	return t, err
}
