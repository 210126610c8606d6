package facts

import (
	"strings"

	"github.com/stepdoctor/stepdoctor/engine/trace"
)

// nameKind classifies an event name once per distinct string, so the
// per-event loops test a bit instead of hashing or scanning the name.
type nameKind uint64

const (
	kStep           nameKind = 1 << iota // ProfilerStep#N
	kSync                                // a host sync point
	kLaunch                              // a kernel launch call
	kDataLoader                          // enumerate(DataLoader)#...__next__
	kDLSingle                            // ... of a _SingleProcessDataLoaderIter
	kElementwise                         // kernel name contains "elementwise"
	kPointwise                           // aten pointwise op (CPU chains)
	kPlainName                           // no "::", not an autograd node nor detach: an annotation in legacy traces
	kHtoD                                // memcpy name contains HtoD
	kDtoH                                // ... DtoH
	kDtoD                                // ... DtoD
	kPageable                            // ... Pageable
	kGraphLaunch                         // a CUDA/HIP Graph replay call
	kCommKernel                          // collective kernel (isCommKernelName)
	kCommCPU                             // host-side collective call (nccl:*, gloo:*, c10d::*, symm_mem::*, record_param_comms)
	kOptimizer                           // Optimizer.step#... or Optimizer.zero_grad#... annotation
	kZeroGrad                            // Optimizer.zero_grad#...
	kOptStep                             // Optimizer.step#...
	kMatmul                              // aten matmul / convolution op
	kMultiTensor                         // aten::_foreach_* or aten::_fused_* (multi-tensor optimizer kernels)
	kTensorCoreName                      // kernel name that marks a tensor-core kernel
	kAsyncCopy                           // cudaMemcpyAsync / hipMemcpyAsync
	kAllocator                           // device or pinned-host allocator call (cudaMalloc, cudaFree, hipFree, ...)
	kAllReduce                           // an all-reduce: NCCL/RCCL kernel or host collective call
	kFP32GemmName                        // kernel name of an fp32 (non-tensor-core) GEMM: sgemm without TF32 marks
	kBackward                            // autograd backward: autograd::engine::evaluate_function..., ...Backward0
	kCompiled                            // torch.compile: Inductor triton_ kernels, compiled-region annotations
	kAten                                // an aten:: operator
	kFusedAttn                           // a fused attention op below SDPA: ...flash..., ...efficient_attention..., ...cudnn_attention...
	kFusedAttnOp                         // an op name that is itself fused attention: flash, efficient, cudnn
	kModule                              // "nn.Module: Name_N", the python_function frame of an nn.Module (with_modules)
	kCompiledRegion                      // a compiled-region annotation (see isCompiledRegion)
	kDynamoTimed                         // a "... (dynamo_timed)" compile span
	kMetaOp                              // an op that only makes a tensor view: aten::view, aten::as_strided, ...
)

// rareHostKinds are the kinds of the host events that the passes over few
// events read (steps, syncs, DataLoader, optimizer, backward, compiled
// regions, collectives): indexTimelines lists the events of these kinds
// so those passes skip the rest of the store.
const rareHostKinds = kStep | kSync | kDataLoader | kOptimizer | kBackward | kCompiled | kCompiledRegion | kDynamoTimed | kGraphLaunch | kCommCPU | kAsyncCopy

// matmulOps are the aten ops whose kernels run on tensor cores when the
// dtype allows (record_shapes gives the dtype).
var matmulOps = map[string]bool{
	"aten::mm": true, "aten::addmm": true, "aten::bmm": true, "aten::baddbmm": true, "aten::matmul": true,
	"aten::linear": true, "aten::addbmm": true, "aten::_addmm_activation": true,
	"aten::conv1d": true, "aten::conv2d": true, "aten::conv3d": true, "aten::convolution": true,
	"aten::_convolution": true, "aten::cudnn_convolution": true, "aten::conv_transpose2d": true,
	"aten::miopen_convolution": true, "aten::_scaled_dot_product_flash_attention": true,
	"aten::_scaled_dot_product_efficient_attention": true, "aten::_scaled_mm": true,
}

// tensorCoreMarks are kernel-name substrings of tensor-core kernels across
// cuBLAS/cuDNN/CUTLASS generations (Volta 884, Turing/Ampere 1688/16816,
// hmma/imma, sm80/sm90 xmma/gmma, Hopper wgmma, tf32/bf16/fp16 GEMMs, AMD
// mfma). Names only decide when the dtype is unknown.
var tensorCoreMarks = []string{"884", "1688", "16816", "hmma", "imma", "xmma", "gmma", "tensorop", "tf32", "bf16", "f16f16", "fp16", "mfma"}

// allocatorNames are the runtime/driver calls that reserve or release
// device or pinned host memory: in the steady state the caching allocator
// should make them rare (PyTorch docs, "CUDA semantics: memory management").
var allocatorNames = map[string]bool{
	"cudaMalloc": true, "cudaFree": true, "cudaMallocAsync": true, "cudaFreeAsync": true,
	"cudaMallocHost": true, "cudaHostAlloc": true, "cudaFreeHost": true, "cudaMallocManaged": true,
	"cuMemAlloc": true, "cuMemAlloc_v2": true, "cuMemFree": true, "cuMemFree_v2": true,
	"cuMemCreate": true, "cuMemRelease": true, "cuMemMap": true, "cuMemUnmap": true,
	"hipMalloc": true, "hipFree": true, "hipMallocAsync": true, "hipFreeAsync": true,
	"hipHostMalloc": true, "hipHostFree": true, "hipExtMallocWithFlags": true, "hipMallocManaged": true,
}

func classify(name string) nameKind {
	var k nameKind
	lower := strings.ToLower(name)
	if strings.HasPrefix(name, "ProfilerStep#") {
		k |= kStep
	}
	if syncNames[name] {
		k |= kSync
	}
	if isFP32MatmulName(lower) {
		k |= kFP32GemmName
	}
	if strings.HasPrefix(name, "aten::") {
		k |= kAten
	}
	if strings.Contains(name, "flash") || strings.Contains(name, "efficient_attention") || strings.Contains(name, "cudnn_attention") {
		k |= kFusedAttn
	}
	if strings.Contains(name, "flash") || strings.Contains(name, "efficient") || strings.Contains(name, "cudnn") {
		k |= kFusedAttnOp
	}
	if strings.HasPrefix(name, "autograd::engine::evaluate_function") || isAutogradNode(name) {
		k |= kBackward
	}
	if strings.HasPrefix(name, "triton_") || strings.HasPrefix(name, "Torch-Compiled Region") ||
		strings.HasPrefix(name, "CompiledFunction") || strings.HasPrefix(name, "CompiledFxGraph") ||
		strings.HasPrefix(name, "TorchDynamo Cache Lookup") || strings.HasPrefix(name, "## Call CompiledFxGraph") {
		k |= kCompiled
	}
	if strings.HasPrefix(name, modulePrefix) {
		k |= kModule
	}
	if isCompiledRegion(name) {
		k |= kCompiledRegion
	}
	if strings.HasSuffix(name, " (dynamo_timed)") {
		k |= kDynamoTimed
	}
	if allocatorNames[name] {
		k |= kAllocator
	}
	if metaOpNames[name] {
		k |= kMetaOp
	}
	if strings.Contains(strings.ReplaceAll(strings.ToLower(name), "_", ""), "allreduce") {
		k |= kAllReduce
	}
	if asyncCopyNames[name] {
		k |= kAsyncCopy
	}
	if launchNames[name] {
		k |= kLaunch
	}
	if graphLaunchNames[name] {
		k |= kGraphLaunch
	}
	if isCommKernelName(lower) {
		k |= kCommKernel
	}
	if strings.HasPrefix(name, "nccl:") || strings.HasPrefix(name, "gloo:") || strings.HasPrefix(name, "c10d::") || strings.HasPrefix(name, "symm_mem::") || name == "record_param_comms" {
		k |= kCommCPU
	}
	if strings.HasPrefix(name, "Optimizer.zero_grad#") {
		k |= kOptimizer | kZeroGrad
	}
	if strings.HasPrefix(name, "Optimizer.step#") {
		k |= kOptimizer | kOptStep
	}
	if matmulOps[name] {
		k |= kMatmul
	}
	if strings.HasPrefix(name, "aten::_foreach_") || strings.HasPrefix(name, "aten::_fused_") {
		k |= kMultiTensor
	}
	for _, m := range tensorCoreMarks {
		if strings.Contains(lower, m) {
			k |= kTensorCoreName
			break
		}
	}
	if strings.HasPrefix(name, "enumerate(DataLoader)#") && strings.HasSuffix(name, "__next__") {
		k |= kDataLoader
		if strings.Contains(name, "_SingleProcessDataLoaderIter") {
			k |= kDLSingle
		}
	}
	if strings.Contains(name, "elementwise") {
		k |= kElementwise
	}
	if pointwiseOps[name] {
		k |= kPointwise
	}
	if !strings.Contains(name, "::") && name != "detach" && name != "detach_" && !isAutogradNode(name) {
		k |= kPlainName
	}
	for _, m := range []struct {
		sub  string
		kind nameKind
	}{{"HtoD", kHtoD}, {"DtoH", kDtoH}, {"DtoD", kDtoD}, {"Pageable", kPageable}} {
		if strings.Contains(name, m.sub) {
			k |= m.kind
		}
	}
	return k
}

// kinds returns the classification of every string in the trace's table.
func kinds(t *trace.Trace) []nameKind {
	out := make([]nameKind, t.NumStrs())
	for i := range out {
		out[i] = classify(t.Str(trace.Str(i)))
	}
	return out
}

// is reports whether the event's name has kind k.
func (d *deriver) is(e *trace.Event, k nameKind) bool { return d.kind[e.Name]&k != 0 }

// isFP32MatmulName reports a kernel name (lower case) of an fp32 matmul or
// convolution that does not use tensor cores: cuBLAS sgemm, cuDNN's fp32
// "scudnn" convolutions and its dgrad/wgrad engines instantiated on float.
// TF32 and tensor-core variants (tf32, 1688, tensorop, xmma) are excluded.
func isFP32MatmulName(lower string) bool {
	for _, m := range []string{"tf32", "1688", "tensorop", "xmma", "hmma", "f16", "bf16"} {
		if strings.Contains(lower, m) {
			return false
		}
	}
	switch {
	case strings.Contains(lower, "sgemm"), strings.Contains(lower, "scudnn"):
		return true
	case strings.Contains(lower, "cudnn") && strings.Contains(lower, "<float,"):
		// cudnn::detail::dgrad_engine<float, ...>, wgrad_alg0_engine<float,
		// ...>: convolution engines, not batch norm or pooling.
		for _, m := range []string{"dgrad", "wgrad", "conv", "winograd", "fft", "implicit"} {
			if strings.Contains(lower, m) {
				return true
			}
		}
	}
	return false
}

// metaOpNames are operators that only make a view of a tensor: metadata,
// no kernel, no data touched, and no child operator, so their duration
// is the host's fixed cost of one dispatched op (about 1 us on a
// current server CPU with the profiler on).
var metaOpNames = map[string]bool{"aten::view": true, "aten::as_strided": true, "aten::_unsafe_view": true, "aten::alias": true}

// commKernelMarks mark the collective kernels that are not NCCL/RCCL (lower
// case): PyTorch's symmetric-memory collectives
// (torch/csrc/distributed/c10d/symm_mem: multimem_all_reduce_kernel,
// multimem_one_shot_reduce_kernel, multimem_all_gather_kernel,
// one_shot_all_reduce_kernel, two_shot_all_reduce_kernel), which vLLM
// uses for tensor parallelism (the shared B200 trace: 73
// multimem_all_reduce_kernel calls), and the custom all-reduce of vLLM and
// SGLang (cross_device_reduce_1stage, cross_device_reduce_2stage).
var commKernelMarks = []string{"multimem_all_reduce", "multimem_one_shot_reduce", "multimem_all_gather", "one_shot_all_reduce", "two_shot_all_reduce", "cross_device_reduce"}

// isCommKernelName reports whether a kernel of this lower-case name is a
// collective: an NCCL/RCCL kernel or one of commKernelMarks.
func isCommKernelName(lower string) bool {
	if strings.Contains(lower, "nccl") || strings.Contains(lower, "rccl") {
		return true
	}
	for _, m := range commKernelMarks {
		if strings.Contains(lower, m) {
			return true
		}
	}
	return false
}
