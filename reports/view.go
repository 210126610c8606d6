package reports

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/stepdoctor/stepdoctor/engine"
	"github.com/stepdoctor/stepdoctor/engine/facts"
	"github.com/stepdoctor/stepdoctor/engine/trace"
	"github.com/stepdoctor/stepdoctor/rules"
)

// errNilResult is returned by every renderer when given a nil *engine.Result.
var errNilResult = errors.New("nil result")

// nullMark is how every renderer shows a fact that could not be measured.
const nullMark = "—"

// noFactsVerdict is the verdict of a trace without facts.
const noFactsVerdict = "no facts were derived from this trace"

// nullNote explains nullMark next to the facts table.
const nullNote = "could not be measured from this trace"

// traceView is the render-ready form of one engine.TraceResult. Strings are
// raw (unescaped); each renderer escapes them for its format.
type traceView struct {
	Index  int // 0-based position in Result.Traces
	Path   string
	Size   string // "12.34 MiB, gzip" or ""
	Device string // device name, "" when unknown
	// DeviceLabel is what every report shows for the device: the name,
	// else "unknown GPU", "no GPU events", "CPU only" or, for the legacy
	// autograd-profiler export, "CPU only, legacy export of a PyTorch without Kineto".
	DeviceLabel string
	HasGPU      bool
	// GPUActivityMissing: the trace shows a GPU job but no GPU events;
	// GPUMissingReason says what showed it.
	GPUActivityMissing bool
	GPUMissingReason   string
	// LegacyExport: the legacy autograd-profiler export (PyTorch without
	// Kineto, facts.Facts.LegacyExport).
	LegacyExport bool
	// Accelerator names an unsupported accelerator the trace comes from
	// (facts.Facts.UnsupportedAccelerator: "MTIA"); "" otherwise.
	Accelerator string
	Rank        string // "rank 0 of 8", "" when unknown
	Steps       int
	HasSteps    bool
	// StepsLabel says how many steps there are and what marked them, or
	// that there are none (and the marker --step-marker auto would use).
	StepsLabel string
	OfTime     string // "of step time", or "of the window" without steps
	Window     string // "812.40 ms"
	Verdict    string
	Repaired   bool
	// AnnotateHint: the report may suggest --annotate (one trace read;
	// false: several were, and --annotate is per trace); Annotated is the
	// annotated trace written beside it ("" when none).
	AnnotateHint bool
	Annotated    string

	GPUBusy *float64 // 0..1
	GPUIdle *float64 // 0..1
	Step    *facts.StepStats
	StepCV  *float64

	Findings []findingView
	// Minor are findings under MinorImpact that are not about the
	// measurement itself (profiling-setup) nor tied to a script line:
	// listed on one line, not as numbered cards. The JSON keeps them all.
	Minor        []findingView
	Facts        []factRow
	FactsMissing bool // Facts was nil
	NullFacts    int
	NotEvaluated []rules.NotEvaluated
	Health       trace.Health
	Series       seriesView
}

type findingView struct {
	Rank        int // 1-based
	Rule        string
	Title       string
	Severity    string
	Category    string
	Confidence  string
	Message     string
	Impact      string  // "24.0%"
	ImpactRatio float64 // 0..1 as given (may be out of range or NaN)
	Evidence    []evidenceRow
	Examples    []exampleRow
	Doc         string
	References  []string
	// FixLang and Fix are the code change shown with the finding: the doc's
	// fix variant the finding chose (rules.Finding.Fix), else its first code
	// block.
	FixLang, Fix string
}

type evidenceRow struct {
	Name  string
	Value string
}

type exampleRow struct {
	Name   string
	Start  string // ts on the trace clock, µs with 3 decimals
	Offset string // from window start
	Dur    string
	PID    string
	TID    string
}

type factRow struct {
	Name  string
	Value string // nullMark when Null
	Null  bool
}

// buildViews converts a Result into views; nil traces are skipped.
func buildViews(r *engine.Result) []traceView {
	var out []traceView
	for i, tr := range r.Traces {
		if tr == nil {
			continue
		}
		v := buildView(i, tr)
		// --annotate writes one trace: a directory of ranks is refused.
		v.AnnotateHint = len(r.Traces) == 1
		if v.AnnotateHint && r.About != nil {
			v.Annotated = r.About.Annotated
		}
		out = append(out, v)
	}
	return out
}

func buildView(i int, tr *engine.TraceResult) traceView {
	v := traceView{
		Index:        i,
		Path:         tr.Input.Path,
		NotEvaluated: tr.NotEvaluated,
		Health:       tr.Health,
		Repaired:     tr.Health.Repaired,
	}
	// Input.Bytes is the JSON read: for a gzip file, its uncompressed size.
	switch {
	case tr.Input.Compressed && tr.Input.Bytes > 0:
		v.Size = "gzip, " + fmtBytes(float64(tr.Input.Bytes)) + " uncompressed"
	case tr.Input.Compressed:
		v.Size = "gzip"
	case tr.Input.Bytes > 0:
		v.Size = fmtBytes(float64(tr.Input.Bytes))
	}
	f := tr.Facts
	if f == nil {
		v.FactsMissing = true
		v.Verdict = noFactsVerdict
		v.Window = nullMark
	} else {
		if f.Device != nil {
			v.Device = f.Device.Name
		}
		if v.Device == "" && f.DevicePeak != nil {
			// deviceProperties without a name, matched by architecture and
			// compute-unit count (facts.LookupDeviceProps)
			v.Device = f.DevicePeak.Name + " (by its properties)"
		}
		if d := f.Device; v.Device == "" && d != nil && d.ComputeFrom != "" && d.ComputeMajor != nil && d.ComputeMinor != nil {
			// no deviceProperties: the bound the kernel names give
			v.Device = fmt.Sprintf("unknown GPU, compute capability %d.%d or newer by its %s kernels", *d.ComputeMajor, *d.ComputeMinor, d.ComputeFrom)
		}
		v.HasGPU = f.HasGPU
		v.GPUActivityMissing = f.GPUActivityMissing
		if r := f.GPUActivityMissingReason; r != nil {
			v.GPUMissingReason = clean(*r)
		}
		v.LegacyExport = f.LegacyExport
		if f.UnsupportedAccelerator != nil {
			v.Accelerator = clean(*f.UnsupportedAccelerator)
		}
		switch {
		case f.Rank != nil && f.WorldSize != nil:
			v.Rank = fmt.Sprintf("rank %d of %d", *f.Rank, *f.WorldSize)
		case f.Rank != nil:
			v.Rank = fmt.Sprintf("rank %d", *f.Rank)
		case f.WorldSize != nil:
			v.Rank = fmt.Sprintf("world size %d", *f.WorldSize)
		}
		v.Steps = f.StepsCount
		v.HasSteps = f.HasSteps
		v.StepsLabel = stepsLabel(f)
		v.OfTime = ofTime(f)
		v.Window = fmtMS(f.WindowUS)
		v.GPUBusy = f.GPUBusyRatio
		v.GPUIdle = f.GPUIdleRatio
		v.Step = f.StepTimeUS
		v.StepCV = f.StepTimeCV
		v.Verdict = verdict(f)
		v.Facts = factRows(f)
		v.Series = buildSeries(f)
		for _, row := range v.Facts {
			if row.Null {
				v.NullFacts++
			}
		}
	}
	for _, fd := range tr.Findings {
		if isMinor(fd) {
			v.Minor = append(v.Minor, buildFinding(0, fd))
			continue
		}
		v.Findings = append(v.Findings, buildFinding(len(v.Findings)+1, fd))
	}
	v.DeviceLabel = deviceLabel(v)
	return v
}

// deviceLabel names the device for the report header.
func deviceLabel(v traceView) string {
	switch {
	case v.Device != "":
		return clean(v.Device)
	case v.HasGPU:
		return "unknown GPU"
	case v.GPUActivityMissing && v.GPUMissingReason != "":
		return "GPU activity not recorded (" + v.GPUMissingReason + ")"
	case v.GPUActivityMissing:
		return "GPU activity not recorded"
	case v.Accelerator != "":
		return v.Accelerator + " accelerator (not supported)"
	case v.LegacyExport:
		return "CPU only, legacy export of a PyTorch without Kineto"
	}
	return "CPU only"
}

func buildFinding(rank int, fd rules.Finding) findingView {
	fv := findingView{
		Rank:        rank,
		Rule:        fd.Rule,
		Title:       fd.Title,
		Severity:    string(fd.Severity),
		Category:    fd.Category,
		Confidence:  string(fd.Confidence),
		Message:     fd.Message,
		Impact:      fmtPct(fd.Impact),
		ImpactRatio: fd.Impact,
		Doc:         fd.Doc,
		References:  fd.References,
	}
	if fv.Title == "" {
		fv.Title = fd.Rule
	}
	fv.FixLang, fv.Fix = fixSnippet(fd.Doc, fd.Fix)
	for _, e := range fd.Evidence {
		fv.Evidence = append(fv.Evidence, evidenceRow{Name: e.Name, Value: fmtUnit(e.Value, e.Unit)})
	}
	for _, ex := range fd.Examples {
		fv.Examples = append(fv.Examples, buildExample(ex))
	}
	return fv
}

func buildExample(ex facts.EventRef) exampleRow {
	return exampleRow{
		Name:   ex.Name,
		Start:  fixed(ex.TSUS, 3) + " µs",
		Offset: "+" + fmtDur(ex.OffsetUS),
		Dur:    fmtDur(ex.DurUS),
		PID:    ex.PID,
		TID:    ex.TID,
	}
}

// verdict builds the one-line summary from the facts that are non-null.
func verdict(f *facts.Facts) string {
	var parts []string
	switch {
	case f.GPUActivityMissing:
		shows := "the trace shows a GPU job"
		if r := f.GPUActivityMissingReason; r != nil && *r != "" {
			shows += " (" + clean(*r) + ")"
		}
		parts = append(parts, "no GPU events although "+shows+": GPU activity not recorded (profile with ProfilerActivity.CUDA), or the file was cut")
	case !f.HasGPU && f.UnsupportedAccelerator != nil && *f.UnsupportedAccelerator != "":
		parts = append(parts, clean(*f.UnsupportedAccelerator)+" accelerator trace: its device activity is not read (GPU facts need CUDA or ROCm)")
	case !f.HasGPU:
		parts = append(parts, "no GPU activity (CPU-only trace)")
	case f.GPUIdleRatio != nil:
		idle := "GPU idle " + fmtPct(*f.GPUIdleRatio) + " of the window"
		// Time before the first GPU activity, with work already queued, is
		// the queue the trace began in, not idle the run can give back.
		if lead := f.GPUIdleQueuedLeadingRatio; lead != nil && *lead >= 0.05 {
			// before is all the idle before the first activity; the queued
			// lead is the part of it with work already queued.
			before := *lead
			if g := f.GPUIdleLeadingRatio; g != nil {
				before = max(before, *g)
			}
			if before-*lead < 0.005 {
				idle += " (" + fmtPct(*lead) + " before its first recorded activity: launched work queued behind GPU work the trace did not record"
			} else {
				idle += " (" + fmtPct(before) + " before its first recorded activity, " + fmtPct(*lead) + " of the window with launched work queued behind GPU work the trace did not record"
			}
			if f.GPUBusyRatio != nil && before < 1 {
				// From the first activity on, the share that is busy: a
				// GPU-bound replay reads as such, not as 44% idle.
				idle += "; busy " + fmtPct(min(1, *f.GPUBusyRatio/(1-before))) + " from then on"
			}
			idle += ")"
		}
		if note := startupNote(f); note != "" {
			idle += " (" + note + ")"
		}
		parts = append(parts, idle)
	}
	if f.DataloaderTimeRatio != nil && *f.DataloaderTimeRatio >= 0.0005 { // a 0.0% share is not a headline
		parts = append(parts, "DataLoader takes "+fmtPct(*f.DataloaderTimeRatio)+" "+ofTime(f))
	}
	if f.SyncPerStep != nil && *f.SyncPerStep > 0 && f.HasGPU { // without a GPU, .item() reads host memory
		parts = append(parts, syncHeadline(*f.SyncPerStep, f.DeviceSyncPerStep))
	}
	if f.MemcpyPageableCount != nil && *f.MemcpyPageableCount > 0 && len(parts) < 3 {
		parts = append(parts, strconv.FormatInt(*f.MemcpyPageableCount, 10)+" pageable memcpys")
	}
	if f.StepTimeUS != nil && len(parts) < 3 {
		parts = append(parts, stepHeadline(f.StepsCount, *f.StepTimeUS, f.Steps))
	}
	if len(parts) == 0 {
		return "no headline facts could be measured"
	}
	return strings.Join(parts, "; ")
}

// syncHeadline is the headline's host syncs per step: those that wait on
// the device when the trace tells them (device_sync_per_step), with the
// .item() reads of CPU tensors, which wait on nothing, counted apart.
func syncHeadline(all float64, device *float64) string {
	if device == nil || all-*device < 1 {
		return fixed(all, 1) + " host syncs per step"
	}
	return fixed(*device, 1) + " host syncs per step (and " + fixed(all-*device, 1) + " .item() reads of CPU tensors)"
}

// startupHeadline is the GPU idle in one-off start-up (a share of the
// window) from which the headline names it (a stepdoctor default): a
// window mostly start-up measures the start, not the run, even where
// warmup-in-window stays quiet (a snippet of a few kernels).
const startupHeadline = 0.2

// startupNote names the GPU idle in one-off start-up, runtime calls
// (gpu_idle_warmup_ratio) and operators (gpu_idle_cpu_op_oneoff_ratio),
// with its largest culprit, when it is startupHeadline of the window or
// more; else "".
func startupNote(f *facts.Facts) string {
	var w float64
	if f.GPUIdleWarmupRatio != nil {
		w += *f.GPUIdleWarmupRatio
	}
	if f.GPUIdleCPUOpOneOffRatio != nil {
		w += *f.GPUIdleCPUOpOneOffRatio
	}
	if w < startupHeadline {
		return ""
	}
	var top *facts.Culprit
	for _, key := range []string{"warmup", facts.OneOffOpCulprits} {
		if cs := f.IdleCulprits[key]; len(cs) > 0 && (top == nil || cs[0].IdleUS > top.IdleUS) {
			top = &cs[0]
		}
	}
	note := fmtPct(w) + " of the window in one-off start-up"
	if top != nil {
		note += ", most in " + clean(top.Name)
	}
	return note
}

// ofTime is what a ratio of the trace's time is of: "of step time", or
// "of the window" without steps.
func ofTime(f *facts.Facts) string {
	if !f.HasSteps {
		return "of the window"
	}
	return "of step time"
}

// skewedStep is how far the mean step may sit from the median before the
// headline gives the median first (a stepdoctor default): a few short
// steps (the CPU running ahead of a deep GPU queue before it fills, a
// step cut by the record window) pull the mean away from the typical step.
const skewedStep = 0.10

// stepHeadline is the headline's step time: the mean, or with three steps
// or more and a mean more than skewedStep off the median, the median with
// the mean beside it. A last step that is a stub (stubStep: the recording
// stopped just after prof.step() began it) is named, with the mean of the
// others.
func stepHeadline(steps int, s facts.StepStats, per []facts.StepBreakdown) string {
	h := "mean step " + fmtDur(s.Mean)
	if steps >= 3 && s.P50 > 0 && math.Abs(s.Mean-s.P50) > skewedStep*s.P50 {
		h = "median step " + fmtDur(s.P50) + " (mean " + fmtDur(s.Mean) + ")"
	}
	if n := len(per); n >= 2 && n == steps {
		others := 0.0
		for _, st := range per[:n-1] {
			others += st.DurUS
		}
		others /= float64(n - 1)
		if last := per[n-1].DurUS; last < stubStep*others {
			rest := fmt.Sprintf("the other %d average %s", n-1, fmtDur(others))
			if n == 2 {
				rest = "the other lasts " + fmtDur(others)
			}
			h += fmt.Sprintf("; the last of %d steps lasts %s, a stub the recording ended in (%s)", n, fmtDur(last), rest)
		}
	}
	return h
}

// stubStep: a last step shorter than this share of the others' mean is a
// stub (a stepdoctor default): profiling stopped right after prof.step()
// opened ProfilerStep#N, so the step holds almost nothing, and the step
// statistics (which count every ProfilerStep#N) are pulled down by it.
const stubStep = 0.05

// factRows flattens every fact (json tag order, nested structs as
// "parent.child") except schema_version and examples.
func factRows(f *facts.Facts) []factRow {
	var rows []factRow
	walkFacts(reflect.ValueOf(f).Elem(), "", func(name, unit string, v reflect.Value, null bool) {
		if name == "schema_version" || name == "examples" {
			return
		}
		if null {
			rows = append(rows, factRow{Name: name, Value: nullMark, Null: true})
			return
		}
		if name == "collective_stats" && v.Kind() == reflect.Slice && v.Len() > 0 {
			rows = append(rows, factRow{Name: name, Value: fmt.Sprintf("%d row(s), in the Collectives table", v.Len())})
			return
		}
		// Lists and maps of records (culprits, roofline ops, host
		// collectives) do not fit a cell: the JSON report has them whole.
		if unit == string(facts.UnitObject) && (v.Kind() == reflect.Slice || v.Kind() == reflect.Map) {
			val := fmt.Sprintf("%d entries, in the JSON report", v.Len())
			if v.Len() == 0 {
				val = "none"
			}
			rows = append(rows, factRow{Name: name, Value: val})
			return
		}
		rows = append(rows, factRow{Name: name, Value: fmtValue(v, unit)})
	})
	return rows
}

// walkFacts visits the leaves of a facts struct by json tag, each with its
// unit from the fact catalogue (facts.UnitOf). Nil pointers
// are reported as null leaves; non-nil pointers to structs are descended.
func walkFacts(v reflect.Value, prefix string, visit func(name, unit string, v reflect.Value, null bool)) {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		tag := jsonName(sf)
		if tag == "" || sf.Tag.Get("expr") == "-" {
			continue // tables and series (examples, steps, top ops) render elsewhere
		}
		name := tag
		if prefix != "" {
			name = prefix + "." + tag
		}
		u := string(facts.UnitOf(name))
		fv := v.Field(i)
		if strings.Contains(sf.Tag.Get("json"), ",omitempty") && fv.IsZero() {
			continue // absent from the JSON too (device.compute_from)
		}
		if fv.Kind() == reflect.Pointer {
			if fv.IsNil() {
				visit(name, u, fv, true)
				continue
			}
			fv = fv.Elem()
		}
		if fv.Kind() == reflect.Struct {
			walkFacts(fv, name, visit)
			continue
		}
		visit(name, u, fv, false)
	}
}

func jsonName(sf reflect.StructField) string {
	tag := sf.Tag.Get("json")
	if tag == "-" {
		return ""
	}
	name, _, _ := strings.Cut(tag, ",")
	if name == "" {
		return sf.Name
	}
	return name
}

func fmtValue(v reflect.Value, unit string) string {
	switch v.Kind() {
	case reflect.Bool:
		if v.Bool() {
			return "yes"
		}
		return "no"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if unit == "bytes" || unit == "us" || unit == "ratio" {
			return fmtUnit(float64(v.Int()), unit)
		}
		return strconv.FormatInt(v.Int(), 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return strconv.FormatUint(v.Uint(), 10)
	case reflect.Float32, reflect.Float64:
		return fmtUnit(v.Float(), unit)
	case reflect.String:
		return v.String()
	case reflect.Slice, reflect.Array:
		parts := make([]string, v.Len())
		for i := range parts {
			parts[i] = fmtValue(v.Index(i), unit)
		}
		return strings.Join(parts, ", ")
	case reflect.Map:
		keys := v.MapKeys()
		sort.Slice(keys, func(i, j int) bool { return fmt.Sprint(keys[i]) < fmt.Sprint(keys[j]) })
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = fmt.Sprint(k) + ": " + fmtValue(v.MapIndex(k), unit)
		}
		return strings.Join(parts, ", ")
	case reflect.Interface, reflect.Pointer:
		if v.IsNil() {
			return nullMark
		}
		return fmtValue(v.Elem(), unit)
	}
	return fmt.Sprint(v.Interface())
}

// fmtUnit formats a number with its unit (a facts.Unit, or a unit a rule
// gave its evidence): ratio as a percentage with one decimal, us as a
// duration, bytes in binary units, count and id as an integer.
func fmtUnit(x float64, unit string) string {
	switch unit {
	case "ratio":
		return fmtPct(x)
	case "us":
		return fmtDur(x)
	case "bytes":
		return fmtBytes(x)
	case "bytes_per_step":
		return fmtBytes(x) + " / step"
	case "count", "id":
		if x == math.Trunc(x) && math.Abs(x) < 1e15 {
			return fixed(x, 0)
		}
		return fixed(x, 2)
	case "per_step":
		return fixed(x, 2) + " / step"
	case "per_ms":
		return fixed(x, 2) + " / ms"
	case "flops_per_s":
		return fmtFLOPS(x)
	case "bytes_per_s":
		return fixed(x/1e9, 1) + " GB/s" // 1e9 bytes, as the NCCL tests' GB/s
	case "":
		return fixed(x, 3)
	}
	return fixed(x, 3) + " " + unit
}

// fmtFLOPS formats FLOP/s with an SI prefix: "298.6 TFLOP/s".
func fmtFLOPS(x float64) string {
	for _, p := range []struct {
		v float64
		s string
	}{{1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}} {
		if math.Abs(x) >= p.v {
			return fixed(x/p.v, 1) + " " + p.s + "FLOP/s"
		}
	}
	return fixed(x, 0) + " FLOP/s"
}

// fmtPct formats a 0..1 ratio as a percentage with one decimal.
func fmtPct(r float64) string { return fixed(r*100, 1) + "%" }

// fmtDur formats microseconds: "12.3 µs" below 1 ms, "12.34 ms" above.
func fmtDur(us float64) string {
	if math.Abs(us) < 1000 || isBad(us) {
		return fixed(us, 1) + " µs"
	}
	return fixed(us/1000, 2) + " ms"
}

// fmtMS formats microseconds as milliseconds with two decimals.
func fmtMS(us float64) string { return fixed(us/1000, 2) + " ms" }

// fmtBytes formats a byte count in binary units with two decimals.
func fmtBytes(b float64) string {
	if isBad(b) {
		return fixed(b, 0) + " B"
	}
	if math.Abs(b) < 1024 {
		return fixed(b, 0) + " B"
	}
	units := []string{"KiB", "MiB", "GiB", "TiB", "PiB"}
	x := b
	u := ""
	for _, u = range units {
		x /= 1024
		if math.Abs(x) < 1024 {
			break
		}
	}
	return fixed(x, 2) + " " + u
}

func isBad(x float64) bool { return math.IsNaN(x) || math.IsInf(x, 0) }

// fixed formats x with prec decimals and never prints "-0".
func fixed(x float64, prec int) string {
	switch {
	case math.IsNaN(x):
		return "NaN"
	case math.IsInf(x, 1):
		return "+Inf"
	case math.IsInf(x, -1):
		return "-Inf"
	}
	s := strconv.FormatFloat(x, 'f', prec, 64)
	if strings.HasPrefix(s, "-") && strings.Trim(s[1:], "0.") == "" {
		s = s[1:]
	}
	return s
}

// shorten cuts s to at most n runes, ending in "…" when cut.
func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// shortenWords cuts s to at most n runes like shorten, but at the last
// space before the limit (when that keeps at least half of it), so no word
// is cut in two.
func shortenWords(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	cut := n - 1
	for i := cut; i > n/2; i-- {
		if r[i] == ' ' {
			return strings.TrimRight(string(r[:i]), " ,;:") + " …"
		}
	}
	return string(r[:cut]) + "…"
}

// clean removes control characters (terminal escapes, NUL, newlines) from a
// string taken from a trace and replaces invalid UTF-8, so it is safe on a
// single line of any output.
func clean(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if strings.IndexFunc(s, isCtl) < 0 {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n' || r == '\r' || r == '\t':
			b.WriteByte(' ')
		case isCtl(r):
			// dropped
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func isCtl(r rune) bool {
	return unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || (r >= '\u202A' && r <= '\u202E') || (r >= '\u2066' && r <= '\u2069')
}

// offsetText renders a diagnostic byte offset; -1 means no position.
func offsetText(off int64) string {
	if off < 0 {
		return nullMark
	}
	return strconv.FormatInt(off, 10)
}

// severityLabel is the upper-case severity used in headings and text.
// Unknown severities are shown cleaned, as given.
func severityLabel(s string) string {
	switch s {
	case "high", "medium", "low", "info":
		return strings.ToUpper(s)
	case "":
		return "UNKNOWN"
	}
	return clean(s)
}

// MinorImpact is the impact under which a finding is folded into the
// report's "minor" line (0.5% of the window).
const MinorImpact = 0.005

// isMinor reports whether a finding is folded into the minor line. Findings
// whose impact is not a share of this trace's time by design stay whole:
// profiling setup, memory risks (an OOM is not a time share), and the
// straggler rank (its cost is the other ranks' wait, claimed there).
func isMinor(fd rules.Finding) bool {
	switch fd.Category {
	case "profiling-setup", "memory", "distributed":
		return false
	}
	return fd.Impact < MinorImpact && fd.Location == nil
}

// ruleErrorView is one failed rule as every report shows it (raw strings;
// each renderer escapes them).
type ruleErrorView struct {
	Trace, Rule, Source, Message string
	Line                         string // the one-line form stderr shows
}

// ruleErrorViews lists the failed rules of r in result order.
func ruleErrorViews(r *engine.Result) []ruleErrorView { return ruleErrorViewsOf(r.RuleErrors) }

// ruleErrorViewsOf lists the failed rules errs, in order.
func ruleErrorViewsOf(errs []engine.RuleError) []ruleErrorView {
	out := make([]ruleErrorView, 0, len(errs))
	for _, e := range errs {
		out = append(out, ruleErrorView{Trace: e.Trace, Rule: e.Rule, Source: e.Source, Message: e.Message, Line: e.String()})
	}
	return out
}

// ruleErrorsHeading introduces the failed rules in every format.
func ruleErrorsHeading(n int) string {
	return fmt.Sprintf("%d rule evaluation(s) failed, so findings may be missing from the traces named (this is about the rules, not the traces):", n)
}

// RuleErrorLines returns one line per failed rule,
// "PATH: evaluate rule ID (SOURCE): why", as stderr shows them.
func RuleErrorLines(r *engine.Result) []string {
	if r == nil {
		return nil
	}
	return ruleErrorLines(r.RuleErrors)
}

// DiffRuleErrorLines is RuleErrorLines for both sides of a diff.
func DiffRuleErrorLines(d *engine.DiffResult) []string {
	if d == nil {
		return nil
	}
	return ruleErrorLines(d.RuleErrors)
}

func ruleErrorLines(errs []engine.RuleError) []string {
	var out []string
	for _, v := range ruleErrorViewsOf(errs) {
		out = append(out, v.Line)
	}
	return out
}

// stepsLabel is the Steps line of a report: the count and, when they do not
// come from ProfilerStep#N, the marker; without steps, the automatic marker
// the trace shows.
func stepsLabel(f *facts.Facts) string {
	if !f.HasSteps {
		if m := f.StepMarkerFound; m != nil {
			return fmt.Sprintf("none found (window = whole trace); --step-marker auto would use %d span(s) of %s", m.Steps, m.Label)
		}
		return "none found (window = whole trace)"
	}
	m := f.StepMarker
	if m == nil || m.Source == "profiler_step" {
		return fmt.Sprint(f.StepsCount)
	}
	var phases []string
	if m.PrefillSteps > 0 {
		phases = append(phases, fmt.Sprintf("%d prefill", m.PrefillSteps))
	}
	if m.DecodeSteps > 0 {
		phases = append(phases, fmt.Sprintf("%d decode", m.DecodeSteps))
	}
	label := fmt.Sprintf("%d, marked by %s", f.StepsCount, m.Label)
	if len(phases) > 0 {
		label += " (" + strings.Join(phases, ", ") + ")"
	}
	return label
}

// baselineView is the --baseline comparison as every report shows it (raw
// strings; each renderer escapes them); nil without --baseline.
type baselineView struct {
	Heading   string // "Compared with the baseline OLD: ..."
	Regressed bool
	Pairs     []baselinePairView
	// Hidden counts the pairs not listed (above manyRanks pairs);
	// HiddenLine says so.
	Hidden     int
	HiddenLine string
	// Unpaired says which traces had no counterpart, so were not gated
	// ("" when all paired).
	Unpaired string
}

// countFlagged counts the pairs with a regression or a warning.
func countFlagged(pairs []engine.BaselinePair) int {
	n := 0
	for _, p := range pairs {
		if len(p.Regressions)+len(p.Warnings) > 0 {
			n++
		}
	}
	return n
}

type baselinePairView struct {
	Title       string // "TRACE against BASELINE TRACE"
	Warnings    []string
	Verdict     string
	Regressions []string
}

// buildBaseline lays out r.Baseline, or returns nil.
func buildBaseline(r *engine.Result) *baselineView {
	b := r.Baseline
	if b == nil {
		return nil
	}
	v := &baselineView{}
	pairs := slices.Clone(b.Pairs)
	slices.SortStableFunc(pairs, func(x, y engine.BaselinePair) int {
		if x.Rank == nil || y.Rank == nil {
			return 0
		}
		return cmp.Compare(*x.Rank, *y.Rank)
	})
	n := 0
	for _, p := range pairs {
		n += len(p.Regressions)
	}
	// Above manyRanks pairs only those with a regression or a warning are
	// listed (up to manyRanks), and the others counted.
	many := len(pairs) > manyRanks
	for _, p := range pairs {
		if many && (len(v.Pairs) == manyRanks || len(p.Regressions)+len(p.Warnings) == 0) {
			v.Hidden++
			continue
		}
		title := p.Trace + " against " + p.Baseline
		if p.Rank != nil {
			title = fmt.Sprintf("rank %d: %s", *p.Rank, title)
		}
		verdict := StepVerdictLine(engine.PairDiff{Steps: p.Steps, Noise: p.Noise})
		v.Pairs = append(v.Pairs, baselinePairView{Title: title, Warnings: p.Warnings, Verdict: verdict, Regressions: p.Regressions})
	}
	if v.Hidden > 0 {
		v.HiddenLine = fmt.Sprintf("%d more pair(s) not listed: %d of %d pairs have no regression and no warning (the JSON report lists every pair).", v.Hidden, len(pairs)-countFlagged(pairs), len(pairs))
	}
	v.Regressed = n > 0
	if u := b.Unpaired; len(u) > 0 {
		shown := u[:min(len(u), manyRanks)]
		v.Unpaired = fmt.Sprintf("%d trace(s) had no trace of the same rank on the other side and were not compared: %s", len(u), strings.Join(shown, "; "))
		if len(u) > len(shown) {
			v.Unpaired += fmt.Sprintf("; and %d more", len(u)-len(shown))
		}
	}
	bound := b.Bound()
	if v.Regressed {
		v.Heading = fmt.Sprintf("Compared with the baseline %s: %d regression(s) over the %s bound.", b.Path, n, bound)
	} else {
		v.Heading = fmt.Sprintf("Compared with the baseline %s: no regression over the %s bound.", b.Path, bound)
	}
	return v
}

// stepCount reads "1 step" or "N steps".
func stepCount(n int) string {
	if n == 1 {
		return "1 step"
	}
	return fmt.Sprintf("%d steps", n)
}
