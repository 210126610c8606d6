package tracetest

// Memory appends a [memory] instant of the 2022+ format (cat
// cpu_instant_event) on the builder's GPU: an allocation (bytes > 0) or a
// free, with the device's Total Allocated and Total Reserved after it.
func (b *Builder) Memory(ts float64, bytes, allocated, reserved int64) *Builder {
	return b.memory(ts, "cpu_instant_event", map[string]any{
		"Addr": 139926520725504 + len(b.events)*4096, "Bytes": bytes, "Total Allocated": allocated,
		"Total Reserved": reserved, "Device Type": 1, "Device Id": b.Device, "Ev Idx": len(b.events),
	})
}

// CPUMemory appends a [memory] instant of the 2022+ format for host
// memory (Device Type 0, Device Id -1; Total Reserved is always 0).
func (b *Builder) CPUMemory(ts float64, bytes, allocated int64) *Builder {
	return b.memory(ts, "cpu_instant_event", map[string]any{
		"Addr": 94000000000000 + len(b.events)*64, "Bytes": bytes, "Total Allocated": allocated,
		"Total Reserved": 0, "Device Type": 0, "Device Id": -1, "Ev Idx": len(b.events),
	})
}

// Memory2021 appends a [memory] instant of the 2021 format: no category,
// args Device Type (0 CPU, 1 CUDA) and Bytes only, so allocated memory is
// known only as a running sum.
func (b *Builder) Memory2021(ts float64, bytes int64, deviceType int) *Builder {
	return b.memory(ts, "", map[string]any{"Device Type": deviceType, "Bytes": bytes})
}

func (b *Builder) memory(ts float64, cat string, args map[string]any) *Builder {
	ev := map[string]any{"ph": "i", "s": "t", "name": "[memory]", "pid": b.Pid, "tid": b.Tid, "ts": us(ts), "args": args}
	if cat != "" {
		ev["cat"] = cat
	}
	return b.Raw(ev)
}

// Frame appends a python_function frame (with_stack).
func (b *Builder) Frame(name string, ts, dur float64) *Builder {
	return b.Raw(map[string]any{"ph": "X", "cat": "python_function", "name": name, "pid": b.Pid, "tid": b.Tid,
		"ts": us(ts), "dur": us(dur), "args": map[string]any{"Python id": len(b.events)}})
}

// Module appends the python_function frame that with_modules=True records
// for an nn.Module's forward: "nn.Module: Name_N".
func (b *Builder) Module(name string, ts, dur float64) *Builder {
	return b.Frame("nn.Module: "+name, ts, dur)
}

// Annotation appends a record_function label (user_annotation).
func (b *Builder) Annotation(name string, ts, dur float64) *Builder {
	return b.X("user_annotation", name, ts, dur)
}

// GPUAnnotation appends the GPU-side copy of a record_function label
// (gpu_user_annotation) on the builder's device and stream.
func (b *Builder) GPUAnnotation(name string, ts, dur float64) *Builder {
	return b.Raw(map[string]any{"ph": "X", "cat": "gpu_user_annotation", "name": name, "pid": b.Device, "tid": b.Stream,
		"ts": us(ts), "dur": us(dur), "args": map[string]any{"device": b.Device, "stream": b.Stream}})
}

// GiB is 2^30 bytes.
const GiB = 1 << 30

// MemoryModules is four 10 ms training steps recorded with
// profile_memory, with_stack and with_modules: record_function labels
// "forward" and "backward", nn.Module frames Model_0 > Encoder_0 >
// Linear_0 and Model_0 > Head_0 launching the kernels, and the 2022+
// [memory] format. Each step allocates 1, 2 and 4 GiB (the 4 GiB inside
// aten::mm during "backward" is the step's peak), frees 7 GiB and keeps
// 0.25 GiB more than the step before, from 30 GiB, while the caching
// allocator holds 70 GiB reserved of the A100's 80: at the peak
// (37.75 GiB in the last step) 46% of the reserved memory is cached but
// not allocated. The host allocates 1 MiB per step.
func MemoryModules() *Builder {
	b := New()
	var cpu int64
	for k := 0; k < 4; k++ {
		t := 1000 + float64(k)*10000
		base := int64(30*GiB + k*GiB/4)
		const reserved = 70 * GiB
		b.Step(k+1, t, 9000)
		cpu += 1 << 20
		b.CPUMemory(t+50, 1<<20, cpu)
		b.Annotation("forward", t+100, 4000)
		b.GPUAnnotation("forward", t+450, 2200)
		b.Module("Model_0", t+150, 3850)
		b.Module("Encoder_0", t+200, 2000)
		b.Op("aten::linear", t+300, 700)
		b.Memory(t+350, GiB, base+GiB, reserved)
		b.Launch(t+400, 6, "ampere_sgemm_128x64_tn", t+450, 500)
		b.Module("Linear_0", t+1100, 1000)
		b.Op("aten::addmm", t+1200, 800)
		b.Memory(t+1250, 2*GiB, base+3*GiB, reserved)
		b.Launch(t+1300, 6, "ampere_sgemm_64x64_nn", t+1350, 300)
		b.Module("Head_0", t+2300, 1600)
		b.Op("aten::softmax", t+2400, 600)
		b.Launch(t+2500, 6, "void at::native::vectorized_elementwise_kernel<4, at::native::softmax>", t+2550, 100)
		b.Annotation("backward", t+4200, 4000)
		b.GPUAnnotation("backward", t+4500, 2000)
		b.Op("aten::mm", t+4300, 3700)
		b.Memory(t+4350, 4*GiB, base+7*GiB, reserved)
		b.Launch(t+4400, 6, "ampere_sgemm_128x128_nt", t+4500, 2000)
		b.Memory(t+7000, -3*GiB, base+4*GiB, reserved)
		b.Memory(t+8100, -4*GiB, base, reserved)
		b.Op("aten::empty", t+8140, 20)
		b.Memory(t+8150, GiB/4, base+GiB/4, reserved)
	}
	return b
}

// Memory2021 is three 5 ms steps with the 2021 [memory] format (Bytes and
// Device Type only). Each step first frees 512 MiB allocated before the
// trace began (the running sum goes below zero), allocates 1 GiB inside
// aten::empty and 256 MiB inside aten::cat, and frees 1 GiB; the host
// allocates 4 KiB. Raised so that it never goes below zero, allocated
// memory peaks at 1792 MiB in aten::cat of the first step and ends each
// step 256 MiB lower than the one before.
func Memory2021() *Builder {
	b := New()
	for k := 0; k < 3; k++ {
		t := 1000 + float64(k)*5000
		b.Step(k+1, t, 4000)
		b.Memory2021(t+100, -512<<20, 1)
		b.Op("aten::empty", t+150, 150)
		b.Memory2021(t+200, GiB, 1)
		b.Memory2021(t+250, 4096, 0)
		b.Op("aten::cat", t+950, 150)
		b.Memory2021(t+1000, 256<<20, 1)
		b.Launch(t+1010, 6, "void at::native::CatArrayBatchedCopy<float>", t+1050, 200)
		b.Memory2021(t+3000, -GiB, 1)
	}
	return b
}
