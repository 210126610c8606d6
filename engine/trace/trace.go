// Package trace reads the Chrome-trace JSON that torch.profiler (Kineto)
// writes and holds its events in a compact, typed store.
//
// The reader streams: it reads the file once through a fixed-size window,
// never holds the raw JSON, and never decodes into map[string]any. Times are
// exact int64 nanoseconds (the file's microseconds, converted from the
// number's text without float64). Strings (names, categories, string pids)
// are interned once. Damaged input is recovered where that is safe and every
// repair is listed in Health; otherwise Parse returns an error naming the file
// and byte offset. A repeated key takes its last value, as JSON parsers read
// it, except traceEvents, whose every array is read; a number JSON does not
// allow (030000, 30000.) is read as the decimal it spells. Either is listed
// as a repair (duplicate_key, duplicate_trace_events, bad_number).
package trace

import "math"

// Cat is an event's category, normalised across Kineto versions
// (docs/ARCHITECTURE.md "Fine print": kernel/Kernel, gpu_memcpy/Memcpy, ...).
type Cat uint8

const (
	CatOther             Cat = iota // a category not listed below (kept in CatName)
	CatNone                         // no "cat" key (legacy export, M events, 2021 [memory])
	CatKernel                       // kernel, Kernel
	CatMemcpy                       // gpu_memcpy, Memcpy
	CatMemset                       // gpu_memset, Memset
	CatRuntime                      // cuda_runtime, Runtime
	CatDriver                       // cuda_driver
	CatCPUOp                        // cpu_op, Operator
	CatUserAnnotation               // user_annotation
	CatGPUUserAnnotation            // gpu_user_annotation
	CatPythonFunction               // python_function
	CatTrace                        // Trace (profiler span)
	CatCPUInstant                   // cpu_instant_event
	CatFlow                         // ac2g, async, async_gpu, async_cpu_to_gpu, fwdbwd
	CatCudaSync                     // cuda_sync
)

var catByName = map[string]Cat{
	"kernel": CatKernel, "Kernel": CatKernel,
	"gpu_memcpy": CatMemcpy, "Memcpy": CatMemcpy,
	"gpu_memset": CatMemset, "Memset": CatMemset,
	"cuda_runtime": CatRuntime, "Runtime": CatRuntime,
	"cuda_driver": CatDriver,
	"cpu_op":      CatCPUOp, "Operator": CatCPUOp,
	"user_annotation":     CatUserAnnotation,
	"gpu_user_annotation": CatGPUUserAnnotation,
	"python_function":     CatPythonFunction,
	"Trace":               CatTrace,
	"cpu_instant_event":   CatCPUInstant,
	"ac2g":                CatFlow, "async": CatFlow, "async_gpu": CatFlow,
	"async_cpu_to_gpu": CatFlow, "fwdbwd": CatFlow,
	"cuda_sync": CatCudaSync,
}

// IsGPUActivity reports whether events of this category are GPU activity
// (kernel, memcpy, memset). gpu_user_annotation is never activity.
func (c Cat) IsGPUActivity() bool { return c == CatKernel || c == CatMemcpy || c == CatMemset }

// IsGPU reports whether the category lives on a device timeline.
func (c Cat) IsGPU() bool { return c.IsGPUActivity() || c == CatGPUUserAnnotation }

// IsRuntime reports whether the category is a CUDA/HIP runtime or driver call.
func (c Cat) IsRuntime() bool { return c == CatRuntime || c == CatDriver }

// Str is an index into the trace's string table (see Trace.Str).
type Str uint32

// ID is a pid or tid. Numbers and strings holding integer literals are the
// integer itself; other strings ("Spans", "stream 7", "") are mapped to
// values from StrIDBase upward, and Trace.IDString gives their text.
type ID int64

// StrIDBase is the first ID used for non-numeric pid/tid strings. No real
// process or thread id comes near it.
const StrIDBase ID = math.MinInt64 / 2

// Phase values stored in Event.Ph. B/E pairs are stored as one PhComplete.
const (
	PhComplete = 'X'
	PhInstant  = 'i' // 'i' and 'I'
	PhCounter  = 'C'
)

// Arg presence flags in Event.Has.
const (
	HasCorrelation uint16 = 1 << iota
	HasExternalID
	HasDevice
	HasStream
	HasBytes          // MemArgs.Bytes is set (see BytesOf)
	HasTotalAllocated // MemArgs.TotalAllocated is set
	HasDeviceID
	HasLeadDim // OpShapes.LeadDim is set
	HasShapes  // OpShapes has record_shapes text (Dims, Types or Concrete)
	HasComm    // the event has an entry in Trace.Comms
	HasDType   // OpShapes.DType is set
)

// hasShapeEntry: an event with any of these flags has an entry in
// Trace.Shapes.
const hasShapeEntry = HasShapes | HasLeadDim | HasDType

// Event is one kept trace event: complete events (X, and B/E pairs joined),
// instants and counters. Flows and metadata are counted, not stored.
// TS and Dur are nanoseconds on the file's own clock (see Trace.BaseTimeNS).
type Event struct {
	TS, Dur int64
	PID     ID
	TID     ID
	Name    Str
	CatName Str
	Cat     Cat
	Ph      byte
	Has     uint16
	Index   int32 // position among the file's events, in file order

	Correlation int64 // args.correlation (CUDA/HIP correlation id)
	ExternalID  int64 // args["External id"] (also "external id")
	Device      int32 // args.device (GPU events)
	Stream      int32 // args.stream (GPU events)
	// The args only some events carry live in side tables keyed by Index,
	// which keeps the store at 72 bytes an event: byte counts in
	// Trace.MemArgs (BytesOf, MemArgsOf), record_shapes args, their first
	// dtype and leading dimension in Trace.Shapes (ShapesOf).
}

// End returns TS + Dur.
func (e *Event) End() int64 { return e.TS + e.Dur }

// DeviceID returns the event's device: args.device, else pid.
func (e *Event) DeviceID() int64 {
	if e.Has&HasDevice != 0 {
		return int64(e.Device)
	}
	return int64(e.PID)
}

// StreamID returns the event's stream: args.stream, else tid.
func (e *Event) StreamID() int64 {
	if e.Has&HasStream != 0 {
		return int64(e.Stream)
	}
	return int64(e.TID)
}

// DeviceProps is one deviceProperties (or computeProperties) entry.
// Absent numbers are nil.
type DeviceProps struct {
	ID             int64
	Name           string
	ComputeMajor   *int64
	ComputeMinor   *int64
	NumSMs         *int64
	TotalGlobalMem *int64 // bytes
}

// DistributedInfo is the top-level distributedInfo object; Rank and
// WorldSize are nil when absent.
type DistributedInfo struct {
	Backend   string
	Rank      *int64
	WorldSize *int64
}

// Trace is one parsed trace file (one rank or worker).
type Trace struct {
	Path   string
	Bytes  int64 // uncompressed JSON bytes read
	Gzip   bool
	Events []Event

	Devices     []DeviceProps
	Distributed *DistributedInfo // nil when the trace has no distributedInfo
	BaseTimeNS  int64            // baseTimeNanoseconds (0 when absent)

	// Profiler options, from top-level flags or from what the events show.
	RecordShapes  bool // Input Dims args, or record_shapes set
	WithStack     bool // Call stack args or python_function events, or with_stack set
	ProfileMemory bool // [memory] events, or profile_memory set

	Health Health

	// Shapes holds the record_shapes args of the events that have them
	// (Event.Has&(HasShapes|HasLeadDim|HasDType)), one entry an event, in
	// file order; see ShapesOf.
	Shapes []OpShapes
	// MemArgs holds the byte counts of the events that have them: memcpy
	// and memset args.bytes, and the [memory] args. One entry an event, in
	// file order; see MemArgsOf and BytesOf.
	MemArgs []MemArgs

	// Comms holds the c10d collective args of the events that have them
	// (Event.Has&HasComm), in file order; see CommOf.
	Comms []CommArgs

	strs   []string
	ids    []string
	intern map[string]Str
	idOf   map[string]ID
}

// Str returns the text of an interned string.
func (t *Trace) Str(s Str) string { return t.strs[s] }

// Name returns the event's name.
func (t *Trace) Name(e *Event) string { return t.strs[e.Name] }

// IDString renders a pid or tid as it appeared in the file.
func (t *Trace) IDString(id ID) string {
	if id >= StrIDBase && id < StrIDBase+ID(len(t.ids)) {
		return t.ids[id-StrIDBase]
	}
	return itoa(int64(id))
}

// NumStrs returns the size of the string table; Str values are below it.
func (t *Trace) NumStrs() int { return len(t.strs) }
