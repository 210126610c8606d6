package tracetest

// Rank is one rank of a data-parallel job of world ranks: three 10 ms
// steps, each with four GEMMs and an NCCL all-reduce. Compute varies a
// little from rank to rank (rank%7 x 20 us per GEMM) and the last rank's
// GEMMs take 30% longer, so it reaches every all-reduce last: the
// straggler. Each rank is about 10 KB of JSON, small enough for tests
// that reduce a thousand ranks.
func Rank(rank, world int) *Builder {
	b := New()
	b.Top("distributedInfo", map[string]any{"backend": "nccl", "rank": rank, "world_size": world})
	gemm := 1200 + float64(rank%7)*20
	if rank == world-1 {
		gemm *= 1.3
	}
	for k := 0; k < 3; k++ {
		t := 1000 + float64(k)*10000
		b.Step(k+1, t, 9900)
		b.Op("enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__", t+5, 40)
		kt := t + 100
		for i := 0; i < 4; i++ {
			b.Launch(t+60+float64(i)*10, 5, "sm80_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x32", kt, gemm)
			kt += gemm + 2
		}
		// The all-reduce ends when the last rank joins.
		end := t + 100 + 4*(1200*1.3+2) + 2500
		b.Launch(t+110, 5, "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)", kt, end-kt)
	}
	return b
}
