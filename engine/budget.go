package engine

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/stepdoctor/stepdoctor/internal/objstore"
)

// Memory estimates for the parallel-read budget. The reader keeps 0.11 to
// 0.21 bytes of events per byte of JSON (72-byte Event), 0.12 to 0.28 with
// the shape and byte-count tables, on the shared traces of 1 MB or more
// (0.19 and 0.23 on the repeated ResNet50 benchmark trace), and with the
// facts' temporaries the process peaks at 0.47x (2 GB) to 0.6x (200 MB)
// of the file plus its fixed ~35 MB (measured with the 96-byte Event of
// before). With the whole heap on huge pages (internal/hugemem) and the
// facts' smaller temporaries: stepdoctor facts at 0.50x (532 MB) and
// 0.55x (200 MB) plus 35 MB, analyze on two cores at 0.61x (532 MB).
// gzip traces inflate 1 to 26 times, 14 the median of the shared traces.
const (
	memPerJSONByte = 0.5
	gzipInflation  = 14 // typical, for an estimate; the reader's bound on it (trace.inflatedSize) is 32
	fallbackBudget = 4 << 30
)

// estimateMemory is the expected peak memory of reading in, in bytes,
// from its size on disk or in its object store.
func estimateMemory(in inputFile) int64 {
	if in.size < 0 {
		return 64 << 20
	}
	size := float64(in.size)
	if strings.HasSuffix(objstore.Name(in.path), ".gz") {
		size *= gzipInflation
	}
	return int64(size*memPerJSONByte) + 64<<20
}

// defaultBudget is half of MemAvailable from /proc/meminfo, or 4 GiB.
func defaultBudget() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return fallbackBudget
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemAvailable:" {
			if kb, err := strconv.ParseInt(fields[1], 10, 64); err == nil && kb > 0 {
				return kb << 10 / 2
			}
		}
	}
	return fallbackBudget
}

// progress aggregates bytes read over all inputs.
type progress struct {
	read, total atomic.Int64
	report      func(read, total int64)
}

func newProgress(files []inputFile, report func(read, total int64)) *progress {
	if report == nil {
		return nil
	}
	p := &progress{report: report}
	for _, f := range files {
		if f.size > 0 {
			p.total.Add(f.size)
		}
	}
	return p
}

// countingReader reports progress every 4 MiB read.
type countingReader struct {
	r       sizedReader
	p       *progress
	pending int64
}

// Size is the input's size, so the reader can size its event store.
func (c *countingReader) Size() int64 { return c.r.Size() }

func (c *countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.pending += int64(n)
	if c.pending >= 4<<20 || err != nil {
		read := c.p.read.Add(c.pending)
		c.pending = 0
		c.p.report(read, c.p.total.Load())
	}
	return n, err
}
