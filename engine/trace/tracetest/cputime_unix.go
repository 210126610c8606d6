//go:build unix

package tracetest

import (
	"syscall"
	"time"
)

// CPUTime returns the process's user+system CPU time so far: every
// thread's, so GC workers and the gzip read-ahead count too.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
