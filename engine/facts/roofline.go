package facts

import (
	"cmp"
	"slices"

	"github.com/stepdoctor/stepdoctor/engine/trace"
)

// RooflineOp is one modelled operator signature (name, Input Dims, Input
// type): its calls in W, the kernel time they launched (the op and its
// descendants, linked by correlation and External id), the modelled work
// and where it sits against the device's roofline. Per-call FLOPs and
// bytes; rates per second of kernel time.
type RooflineOp struct {
	Name            string   `json:"name"`
	Kind            string   `json:"kind"`   // one of RooflineKinds
	Shapes          string   `json:"shapes"` // Input Dims, compact
	DType           string   `json:"dtype"`  // fp32, bf16, fp16, fp8, fp64, other
	Calls           int64    `json:"calls"`
	KernelUS        float64  `json:"kernel_us"`
	KernelShare     float64  `json:"kernel_share"` // of the primary device's kernel time in W (0..1)
	TimeRatio       float64  `json:"time_ratio"`   // kernel time / |W|
	FLOPs           float64  `json:"flops"`        // per call
	Bytes           float64  `json:"bytes"`        // per call, DRAM traffic at least
	FLOPSPerS       float64  `json:"flops_per_s"`  // achieved
	BytesPerS       float64  `json:"bytes_per_s"`  // achieved
	Intensity       float64  `json:"intensity"`    // FLOP per byte
	Bound           string   `json:"bound"`        // compute or memory: the side of the ridge point (peak / bandwidth) the intensity falls
	PeakFLOPSPerS   float64  `json:"peak_flops_per_s,omitempty"`
	PeakDType       string   `json:"peak_dtype,omitempty"`    // the rate peak_flops_per_s is: fp32, tf32, bf16, fp16, fp8
	PeakRatio       *float64 `json:"peak_ratio"`              // achieved FLOP/s / peak FLOP/s; for ops without FLOPs bytes/s / bandwidth
	RooflineRatio   *float64 `json:"roofline_ratio"`          // achieved / attainable at this intensity: min(peak, intensity x bandwidth)
	Tiles           int64    `json:"tiles,omitempty"`         // 128 x 128 output tiles (attention: query blocks x batch x heads)
	ComputeUnits    int64    `json:"compute_units,omitempty"` // of the device, to compare with tiles
	Misaligned      bool     `json:"misaligned,omitempty"`    // a GEMM dimension is not a multiple of 8 (fp8: 16)
	Causal          bool     `json:"causal,omitempty"`        // attention with is_causal (half the FLOPs)
	Fused           *bool    `json:"fused,omitempty"`         // attention: a flash / memory-efficient / cuDNN kernel ran it
	idealNS, flopNS float64  // time at the roofline, time at peak FLOP/s
}

// RooflineKind aggregates the modelled ops of one kind (RooflineKinds).
type RooflineKind struct {
	Kind          string   `json:"kind"`
	Calls         int64    `json:"calls"`
	KernelUS      float64  `json:"kernel_us"`
	KernelShare   float64  `json:"kernel_share"`
	FLOPs         float64  `json:"flops"` // total
	Bytes         float64  `json:"bytes"` // total
	FLOPSPerS     float64  `json:"flops_per_s"`
	BytesPerS     float64  `json:"bytes_per_s"`
	Intensity     float64  `json:"intensity"`
	Bound         string   `json:"bound"`
	PeakRatio     *float64 `json:"peak_ratio"`     // kernel-time-weighted over the kind's ops
	RooflineRatio *float64 `json:"roofline_ratio"` // time at the roofline / kernel time
}

// topRooflineOps is how many op signatures roofline_ops keeps.
const topRooflineOps = 10

// opSig groups calls of one op with the same recorded shapes.
type opSig struct {
	name                  trace.Str
	dims, types, concrete trace.Str
}

// roofline derives the kernel-efficiency facts: the device's peaks and,
// with record_shapes, the modelled ops' work against their kernel time.
// kernelNS is the primary device's kernel time in W.
func (d *deriver) roofline(x *opIndex, kernelNS int64) {
	if !d.hasGPU {
		return
	}
	var peak *DevicePeak
	if dv := d.f.Device; dv != nil {
		peak = LookupDeviceProps(dv)
		d.f.DevicePeak = peak
	}
	if !d.t.RecordShapes || len(d.t.Shapes) == 0 || kernelNS <= 0 {
		return
	}
	evs := d.t.Events
	models := make([]func(*opArgs) (opCost, bool), d.t.NumStrs()) // by name
	known := make([]bool, d.t.NumStrs())
	modelled := func(s trace.Str) func(*opArgs) (opCost, bool) {
		if !known[s] {
			models[s], known[s] = modelFor(d.t.Str(s)), true
		}
		return models[s]
	}
	// The outermost modelled op of each position; attention roots learn
	// whether a fused kernel op ran below them.
	root := make([]int32, len(x.ops))
	fused := map[int32]bool{}
	type agg struct {
		calls, ns int64
		fused     bool
		first     int32
	}
	sigs := map[opSig]*agg{}
	var order []opSig
	for pos, i := range x.ops {
		e := &evs[i]
		root[pos] = -1
		if p := x.parent[pos]; p >= 0 && root[p] >= 0 {
			root[pos] = root[p]
			if d.is(e, kFusedAttn) {
				fused[root[p]] = true
			}
			continue
		}
		if e.Has&trace.HasShapes == 0 || modelled(e.Name) == nil {
			continue
		}
		root[pos] = int32(pos)
	}
	for pos, i := range x.ops {
		if root[pos] != int32(pos) || x.devTotal[pos] <= 0 || !d.inWindow(evs[i].TS) {
			continue
		}
		e := &evs[i]
		sh, _ := d.shapes.Of(e)
		k := opSig{e.Name, sh.Dims, sh.Types, sh.Concrete}
		a := sigs[k]
		if a == nil {
			a = &agg{first: int32(pos), fused: true}
			sigs[k] = a
			order = append(order, k)
		}
		a.calls++
		a.ns += x.devTotal[pos]
		if !fused[int32(pos)] && !d.is(e, kFusedAttnOp) {
			a.fused = false
		}
	}
	var ops []RooflineOp
	var modelNS int64
	for _, k := range order {
		a := sigs[k]
		args := newOpArgs(d.t.Str(k.dims), d.t.Str(k.types), d.t.Str(k.concrete))
		c, ok := modelled(k.name)(&args)
		if !ok || c.bytes <= 0 {
			continue
		}
		modelNS += a.ns
		ops = append(ops, d.rooflineOp(k, a.calls, a.ns, a.fused, c, peak, kernelNS))
	}
	if len(ops) == 0 {
		return
	}
	d.f.ModelledKernelTimeRatio = f64(float64(modelNS) / float64(kernelNS))
	d.rooflineSummary(ops, peak, kernelNS)
	slices.SortStableFunc(ops, func(a, b RooflineOp) int {
		return cmp.Or(cmp.Compare(b.KernelUS, a.KernelUS), cmp.Compare(a.Name, b.Name))
	})
	if len(ops) > topRooflineOps {
		ops = ops[:topRooflineOps]
	}
	d.f.RooflineOps = ops
}

func (d *deriver) rooflineOp(k opSig, calls, ns int64, fused bool, c opCost, peak *DevicePeak, kernelNS int64) RooflineOp {
	sec := float64(ns) / 1e9
	n := float64(calls)
	op := RooflineOp{
		Name: d.t.Str(k.name), Kind: c.kind, Shapes: d.t.Str(k.dims), DType: c.dtype, Calls: calls,
		KernelUS: float64(ns) / 1e3, KernelShare: float64(ns) / float64(kernelNS),
		FLOPs: c.flops, Bytes: c.bytes, FLOPSPerS: c.flops * n / sec, BytesPerS: c.bytes * n / sec,
		Intensity: c.flops / c.bytes, Tiles: c.tiles, Misaligned: c.misaligned, Causal: c.causal,
	}
	if w := d.f.WindowUS; w > 0 {
		op.TimeRatio = op.KernelUS / w
	}
	if c.kind == kindAttnFwd || c.kind == kindAttnBwd {
		op.Fused = &fused
	}
	op.Bound = "memory"
	if peak == nil {
		if c.flops > 0 {
			op.Bound = ""
		}
		return op
	}
	op.ComputeUnits = peak.ComputeUnits
	pf, pname := peak.peakFor(c.dtype)
	bw := peak.MemBandwidth
	switch {
	case c.flops > 0 && pf > 0:
		op.PeakFLOPSPerS, op.PeakDType = pf, pname
		op.PeakRatio = f64(op.FLOPSPerS / pf)
		if op.Intensity >= pf/bw {
			op.Bound = "compute"
		}
		op.flopNS = c.flops * n / pf * 1e9
		op.idealNS = max(op.flopNS, c.bytes*n/bw*1e9)
	case c.flops > 0:
		op.Bound = "" // a dtype without a peak (fp64, integers)
		return op
	default:
		op.PeakRatio = f64(op.BytesPerS / bw)
		op.idealNS = c.bytes * n / bw * 1e9
	}
	op.RooflineRatio = f64(op.idealNS / float64(ns))
	return op
}

// rooflineSummary sets the per-kind table and the time-weighted ratios.
func (d *deriver) rooflineSummary(ops []RooflineOp, peak *DevicePeak, kernelNS int64) {
	kinds := map[string]*RooflineKind{}
	type acc struct{ ideal, flopIdeal, flopNS, peakedNS float64 }
	accs := map[string]*acc{}
	var all acc
	var flops, flopSec float64
	for i := range ops {
		op := &ops[i]
		k := kinds[op.Kind]
		if k == nil {
			k = &RooflineKind{Kind: op.Kind}
			kinds[op.Kind] = k
			accs[op.Kind] = &acc{}
		}
		ns := op.KernelUS * 1e3
		k.Calls += op.Calls
		k.KernelUS += op.KernelUS
		k.FLOPs += op.FLOPs * float64(op.Calls)
		k.Bytes += op.Bytes * float64(op.Calls)
		a := accs[op.Kind]
		if op.RooflineRatio != nil {
			a.ideal += op.idealNS
			a.peakedNS += ns
			all.ideal += op.idealNS
			all.peakedNS += ns
			if op.FLOPs > 0 {
				a.flopIdeal += op.flopNS
				a.flopNS += ns
				all.flopIdeal += op.flopNS
				all.flopNS += ns
			} else {
				a.flopIdeal += op.idealNS // bytes-only ops: share of bandwidth
				a.flopNS += ns
			}
		}
		if op.FLOPs > 0 {
			flops += op.FLOPs * float64(op.Calls)
			flopSec += ns / 1e9
		}
	}
	for _, name := range RooflineKinds {
		k := kinds[name]
		if k == nil {
			continue
		}
		a := accs[name]
		sec := k.KernelUS / 1e6
		k.KernelShare = k.KernelUS * 1e3 / float64(kernelNS)
		k.FLOPSPerS, k.BytesPerS = k.FLOPs/sec, k.Bytes/sec
		if k.Bytes > 0 {
			k.Intensity = k.FLOPs / k.Bytes
		}
		k.Bound = "memory"
		if peak != nil && k.FLOPs > 0 {
			if pf, _ := peak.peakFor(dominantDType(ops, name)); pf > 0 && k.Intensity >= pf/peak.MemBandwidth {
				k.Bound = "compute"
			}
		}
		if a.flopNS > 0 {
			k.PeakRatio = f64(a.flopIdeal / a.flopNS)
		}
		if a.peakedNS > 0 {
			k.RooflineRatio = f64(a.ideal / a.peakedNS)
		}
		d.f.RooflineKinds = append(d.f.RooflineKinds, *k)
	}
	if flopSec > 0 {
		d.f.ModelledFLOPSPerS = f64(flops / flopSec)
	}
	if all.flopNS > 0 {
		d.f.KernelPeakFLOPSRatio = f64(all.flopIdeal / all.flopNS)
	}
	if all.peakedNS > 0 {
		d.f.KernelRooflineRatio = f64(all.ideal / all.peakedNS)
	}
}

// dominantDType is the dtype of the kind's op with the most kernel time.
func dominantDType(ops []RooflineOp, kind string) string {
	best, dt := -1.0, ""
	for _, op := range ops {
		if op.Kind == kind && op.KernelUS > best {
			best, dt = op.KernelUS, op.DType
		}
	}
	return dt
}
