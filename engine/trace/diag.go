package trace

import "fmt"

// DiagKind classifies a reader diagnostic.
type DiagKind string

const (
	// DiagRepair: the input was damaged and the reader changed how it read
	// it (skipped a token, closed a truncated array). Facts may be partial.
	DiagRepair DiagKind = "repair"
	// DiagDropped: well-formed events excluded from every fact (sentinel
	// timestamps, negative or absurd durations). Count says how many.
	DiagDropped DiagKind = "dropped"
	// DiagWarning: the data is odd but was used (clock skew, unmatched E).
	DiagWarning DiagKind = "warning"
)

// Diagnostic is one thing the reader noticed. Offset is the byte offset in
// the uncompressed JSON of the first occurrence (-1 when not tied to a
// position). Count aggregates repeated occurrences of the same Reason.
type Diagnostic struct {
	Kind    DiagKind `json:"kind"`
	Reason  string   `json:"reason"` // stable machine key, e.g. "negative_dur"
	Message string   `json:"message"`
	Offset  int64    `json:"offset"`
	Count   int      `json:"count"`
}

func (d Diagnostic) String() string {
	if d.Offset >= 0 {
		return fmt.Sprintf("%s at byte %d: %s (x%d)", d.Kind, d.Offset, d.Message, d.Count)
	}
	return fmt.Sprintf("%s: %s (x%d)", d.Kind, d.Message, d.Count)
}

// Health summarises a read: how many events were read, kept and dropped,
// and every diagnostic. Repaired is true when any DiagRepair was issued:
// the trace was damaged and reports must say so.
type Health struct {
	EventsRead  int          `json:"events_read"`
	EventsKept  int          `json:"events_kept"`
	Dropped     int          `json:"events_dropped"`
	Repaired    bool         `json:"repaired"`
	Diagnostics []Diagnostic `json:"diagnostics"`
}
