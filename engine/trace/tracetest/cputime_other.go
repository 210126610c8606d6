//go:build !unix

package tracetest

import "time"

// CPUTime returns 0 where getrusage is missing; ReportCPU then reports
// nothing.
func CPUTime() time.Duration { return 0 }
