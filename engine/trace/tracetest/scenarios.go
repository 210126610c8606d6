package tracetest

import "fmt"

// Scenarios are the project's sample traces: small training loops with
// known mistakes, written to testdata/traces by `go test ./... -update`.
var Scenarios = map[string]func() *Builder{
	"dataloader_bound": DataloaderBound,
	"launch_bound":     LaunchBound,
	"healthy":          Healthy,
}

// DataloaderBound is five steps of 60 ms where a single-process DataLoader
// takes 30 ms, the batch is copied from pageable memory, and .item() syncs
// the host every step.
func DataloaderBound() *Builder {
	b := New()
	for k := 0; k < 5; k++ {
		t := 1000 + float64(k)*60000
		b.Step(10+k, t, 55000)
		b.Op("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", t+10, 30000)
		b.Op("aten::to", t+30010, 900)
		b.Memcpy(t+30020, "HtoD", true, t+30030, 800, 12582912)
		b.Memcpy(t+30830, "HtoD", true, t+30840, 20, 1024)
		forward(b, t+31000, 40)
		b.Op("aten::item", t+50000, 2000)
		b.Op("aten::_local_scalar_dense", t+50010, 1980)
		c := b.Runtime("cudaMemcpyAsync", t+50020, 1900)
		b.GPU("gpu_memcpy", "Memcpy DtoH (Device -> Pageable)", t+51900, 2, c, map[string]any{"bytes": 4})
		b.Runtime("cudaStreamSynchronize", t+50030, 1950)
	}
	return b
}

// forward launches n kernels from ts: every fourth is a 300 us GEMM, the
// rest 8 us elementwise kernels.
func forward(b *Builder, ts float64, n int) {
	kt := ts + 10
	for i := 0; i < n; i++ {
		lt := ts + float64(i)*50
		name, dur := "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>", 8.0
		if i%4 == 0 {
			name, dur = "ampere_sgemm_128x64_tn", 300
		}
		kt = max(kt, lt+10)
		b.Launch(lt, 6, name, kt, dur)
		kt += dur + 1
	}
}

// LaunchBound is five 2 ms steps of 150 tiny kernels each: every kernel
// runs 2.5 us while its cudaLaunchKernel takes 6 us, so the GPU waits on
// the host.
func LaunchBound() *Builder {
	b := New()
	for k := 0; k < 5; k++ {
		t := 1000 + float64(k)*2000
		b.Step(k+1, t, 1950)
		b.Op("enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__", t+5, 40)
		for i := 0; i < 150; i++ {
			lt := t + 60 + float64(i)*12
			name := "void at::native::vectorized_elementwise_kernel<4, at::native::mul_kernel_cuda>"
			if i%3 == 2 {
				name = "void at::native::reduce_kernel<512, 1>"
			}
			b.Launch(lt, 6, name, lt+8, 2.5)
		}
	}
	return b
}

// Healthy is five 20 ms steps with a multi-process DataLoader, pinned
// non-blocking copies and long GEMMs that keep the GPU about 95% busy.
func Healthy() *Builder {
	b := New()
	b.Top("distributedInfo", map[string]any{"backend": "nccl", "rank": 0, "world_size": 1})
	for k := 0; k < 5; k++ {
		t := 1000 + float64(k)*20000
		b.Step(k+1, t, 19990)
		b.Op("enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__", t+5, 50)
		b.Memcpy(t+60, "HtoD", false, t+70, 150, 12582912)
		for i := 0; i < 20; i++ {
			lt := t + 80 + float64(i)*20
			b.Launch(lt, 5, fmt.Sprintf("sm80_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize%dx128x32", 64+i%2*64), t+230+float64(i)*985, 980)
		}
	}
	return b
}
