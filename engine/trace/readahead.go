package trace

import (
	"io"
	"sync"
	"sync/atomic"
)

// readAhead runs a reader (the gzip decompressor) in its own goroutine,
// blockSize bytes at a time and up to depth blocks ahead, so decompression
// on one core overlaps parsing on another. Close stops it early.
type readAhead struct {
	blocks chan []byte
	free   chan []byte
	cur    []byte // unread part of block
	block  []byte // the block being read, returned to free when done
	err    error  // final error, valid once blocks is closed
	done   chan struct{}
	once   sync.Once
	// out counts the bytes src has produced (the uncompressed bytes the
	// inflater wrote), read beside the raw counter to tell how many
	// compressed bytes a stream offset took.
	out atomic.Int64
}

const (
	readAheadBlock = 1 << 20
	readAheadDepth = 4
)

func newReadAhead(src io.Reader) *readAhead {
	ra := &readAhead{
		blocks: make(chan []byte, readAheadDepth),
		free:   make(chan []byte, readAheadDepth+1),
		done:   make(chan struct{}),
	}
	for i := 0; i < readAheadDepth+1; i++ {
		ra.free <- make([]byte, readAheadBlock)
	}
	go ra.fill(src)
	return ra
}

func (ra *readAhead) fill(src io.Reader) {
	defer close(ra.blocks)
	for {
		var buf []byte
		select {
		case buf = <-ra.free:
		case <-ra.done:
			return
		}
		n, err := io.ReadFull(src, buf[:cap(buf)])
		ra.out.Add(int64(n))
		if n > 0 {
			select {
			case ra.blocks <- buf[:n]:
			case <-ra.done:
				return
			}
		}
		if err == io.ErrUnexpectedEOF && n > 0 {
			err = nil // a short block; the next read tells EOF from a cut stream
		}
		if err != nil {
			if err != io.EOF {
				ra.err = err
			} else {
				ra.err = io.EOF
			}
			return
		}
	}
}

// Read implements io.Reader.
func (ra *readAhead) Read(p []byte) (int, error) {
	for len(ra.cur) == 0 {
		if ra.block != nil {
			ra.free <- ra.block
			ra.block = nil
		}
		b, ok := <-ra.blocks
		if !ok {
			return 0, ra.err
		}
		ra.cur, ra.block = b, b
	}
	n := copy(p, ra.cur)
	ra.cur = ra.cur[n:]
	return n, nil
}

// Close stops the read-ahead goroutine.
func (ra *readAhead) Close() { ra.once.Do(func() { close(ra.done) }) }
