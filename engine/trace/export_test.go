package trace

import (
	"context"
	"io"
)

// ParseWith is Parse with the parallel read's workers and chunk size set
// (workers 1: the serial read; chunk 0: the default), for the tests that
// compare the parallel read with the serial one.
func ParseWith(r io.Reader, name string, workers, chunk int) (*Trace, error) {
	return parseOpts(context.Background(), r, name, parOptions{workers: workers, chunk: chunk})
}

// ParallelJoined is the number of events parallel reads have joined so far.
func ParallelJoined() int64 { return parJoined.Load() }

// RaceOn is whether the tests run under the race detector: the heavy
// comparisons then take one setting.
const RaceOn = raceOn

// ParseGeneral is ParseWith without the fast path (fast.go): the
// reference the fast path is compared with.
func ParseGeneral(r io.Reader, name string, workers, chunk int) (*Trace, error) {
	return parseOpts(context.Background(), r, name, parOptions{workers: workers, chunk: chunk, general: true})
}

// FastRead is the number of events fast paths have read so far.
func FastRead() int64 { return fastRead.Load() }

// ParseWithContext is ParseWith under ctx (ParseContext).
func ParseWithContext(ctx context.Context, r io.Reader, name string, workers, chunk int) (*Trace, error) {
	return parseOpts(ctx, r, name, parOptions{workers: workers, chunk: chunk})
}
