package facts

import (
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/stepdoctor/stepdoctor/engine/trace"
)

// torch.compile and CUDA Graph facts
//
// What the profiler records of compiled code (PyTorch 2.x):
//
//   - "Torch-Compiled Region: F/C" around each call of a compiled frame
//     (torch/_dynamo/eval_frame.py), F the frame id and C its compile id:
//     C > 0 is a recompilation of frame F (a guard failed: new shapes,
//     dtypes or globals). Each graph break resumes in a new frame
//     (torch_dynamo_resume_in_...), compiled with its own frame id, so more
//     than one frame id means graph breaks or several compiled functions.
//   - "CompiledFunction" / "CompiledFunctionBackward" (AOTAutograd) and
//     "## Call CompiledFxGraph <hash> ##" (Inductor's generated code)
//     around the compiled forward and backward.
//   - Inductor's generated kernels, named triton_{poi,red,per,tem}_fused_...
//   - "<key> (dynamo_timed)" spans around compilation itself
//     (torch/_dynamo/utils.py dynamo_timed: _compile.compile_inner,
//     compile_fx, ...): compile time inside the window.
//
// A CUDA/HIP Graph replay is one cudaGraphLaunch/hipGraphLaunch whose
// correlation id the replayed kernels share.

// compiledRegionRe reads the frame and compile ids of a compiled region.
var compiledRegionRe = regexp.MustCompile(`^Torch-Compiled Region: (\d+)/(\d+)`)

// isCompiledRegion reports a host span that runs compiled code.
func isCompiledRegion(name string) bool {
	return strings.HasPrefix(name, "Torch-Compiled Region") || strings.HasPrefix(name, "CompiledFunction") ||
		strings.HasPrefix(name, "## Call CompiledFxGraph")
}

// isTritonKernel reports an Inductor-generated kernel.
func isTritonKernel(name string) bool { return strings.HasPrefix(name, "triton_") }

// compiled derives the torch.compile and CUDA Graph facts.
func (d *deriver) compiled() {
	evs := d.t.Events
	regions := map[thread][]interval{}
	var all, compile []interval
	frames := map[int64]bool{}
	recompiles := map[[2]int64]bool{}
	sawRegion := false
	var graphs int64
	host := d.hostOps
	for _, i := range d.rare { // every kind read below is a rareHostKinds kind
		e := &evs[i]
		if !isCPU(e) {
			continue
		}
		if d.is(e, kGraphLaunch) && d.inWindow(e.TS) {
			graphs++
		}
		switch {
		case d.is(e, kCompiledRegion):
			iv := interval{e.TS, e.End()}
			th := thread{e.PID, e.TID}
			regions[th] = append(regions[th], iv)
			all = append(all, iv)
			if m := compiledRegionRe.FindStringSubmatch(d.t.Name(e)); m != nil {
				sawRegion = true
				fr, err1 := strconv.ParseInt(m[1], 10, 64)
				c, err2 := strconv.ParseInt(m[2], 10, 64)
				if err1 == nil && err2 == nil {
					frames[fr] = true
					if c > 0 {
						recompiles[[2]int64{fr, c}] = true
					}
				}
			}
		case d.is(e, kDynamoTimed):
			compile = append(compile, interval{e.TS, e.End()})
		}
	}
	if d.hasGPU {
		d.f.GraphLaunchCount = i64(graphs)
	}
	if host {
		d.f.CompiledRegionRatio = d.ratio(d.clippedUnion(all))
		d.f.CompileTimeRatio = d.ratio(d.clippedUnion(compile))
	}
	if sawRegion {
		d.f.CompiledFrameCount = i64(int64(len(frames)))
		d.f.RecompileCount = i64(int64(len(recompiles)))
	}
	sets := make(map[thread]ivset, len(regions))
	for th, iv := range regions {
		sets[th] = unionOf(iv)
	}
	if !d.hasGPU {
		return
	}
	var total, triton, comp int64
	for _, i := range d.gpuActs {
		e := &evs[i]
		if e.Cat != trace.CatKernel || e.DeviceID() != d.primary || d.is(e, kCommKernel) || !d.inWindow(e.TS) {
			continue
		}
		total += e.Dur
		if isTritonKernel(d.t.Name(e)) {
			triton += e.Dur
			comp += e.Dur
			continue
		}
		if e.Has&trace.HasCorrelation == 0 {
			continue
		}
		if li, ok := d.launch.get(e.Correlation); ok {
			l := &evs[li]
			if sets[thread{l.PID, l.TID}].contains(l.TS) {
				comp += e.Dur
			}
		}
	}
	if total > 0 {
		d.f.TritonKernelRatio = f64(float64(triton) / float64(total))
		d.f.CompiledKernelRatio = f64(float64(comp) / float64(total))
	}
}

// contains reports whether ts lies in one of s's half-open intervals (s
// sorted and disjoint, as unionOf returns).
func (s ivset) contains(ts int64) bool {
	k := sort.Search(len(s), func(i int) bool { return s[i].e > ts })
	return k < len(s) && s[k].s <= ts
}
