package facts

import "strings"

// DevicePeak is the primary device's entry in the peak table (Devices):
// dense (no sparsity) peak FLOP/s per dtype, memory bandwidth and compute
// unit count from the vendor's datasheet. A dtype the device has no fast
// path for is 0 (TF32 before Ampere, FP8 before Hopper/Ada/MI300).
type DevicePeak struct {
	Name         string  `json:"name"`               // the table entry
	FP32FLOPS    float64 `json:"fp32_flops_per_s"`   // fp32 without tensor/matrix cores (AMD: the matrix rate, which rocBLAS uses)
	TF32FLOPS    float64 `json:"tf32_flops_per_s"`   // TF32 (NVIDIA) or XF32 (MI300) tensor/matrix cores
	BF16FLOPS    float64 `json:"bf16_flops_per_s"`   // bf16 tensor/matrix cores (fp32 accumulate)
	FP16FLOPS    float64 `json:"fp16_flops_per_s"`   // fp16 tensor/matrix cores (fp32 accumulate)
	FP8FLOPS     float64 `json:"fp8_flops_per_s"`    // fp8 tensor/matrix cores
	MemBandwidth float64 `json:"memory_bytes_per_s"` // DRAM/HBM bandwidth
	ComputeUnits int64   `json:"compute_units"`      // SMs (NVIDIA) or CUs (AMD) of one device
	Source       string  `json:"source"`             // the datasheet the numbers come from
	// LinkBandwidth is the device's GPU-to-GPU interconnect bandwidth per
	// direction (bytes/s): half the datasheet's bidirectional NVLink,
	// Infinity Fabric or PCIe figure, the ceiling of the NCCL tests' bus
	// bandwidth inside one node (PERFORMANCE.md: busbw is comparable to the
	// hardware's peak link bandwidth). 0 when the datasheet gives none or
	// the topology is ambiguous. Link names it (NVLink 3, PCIe 4.0 x16...).
	LinkBandwidth float64 `json:"link_bytes_per_s"`
	Link          string  `json:"link"`
}

// deviceEntry is one row of the peak table: a device matches when its
// lower-cased name contains every substring of match and, when the trace
// gives an SM/CU count, that count equals the entry's (a MIG slice or a
// partitioned MI300X has fewer units and lower peaks, so it matches no row).
type deviceEntry struct {
	match []string
	not   []string // substrings that rule the row out
	major int64    // required compute major when > 0 (for generic names)
	peak  DevicePeak
}

const (
	tera = 1e12
	giga = 1e9
)

// dev builds a peak row; flops in TFLOP/s, bandwidth in GB/s.
func dev(name string, fp32, tf32, bf16, fp16, fp8, gbps float64, units int64, src string) DevicePeak {
	return DevicePeak{Name: name, FP32FLOPS: fp32 * tera, TF32FLOPS: tf32 * tera, BF16FLOPS: bf16 * tera, FP16FLOPS: fp16 * tera,
		FP8FLOPS: fp8 * tera, MemBandwidth: gbps * giga, ComputeUnits: units, Source: src}
}

// withLink sets the interconnect of a peak row; gbps is the datasheet's
// bidirectional GB/s, halved to the per-direction figure.
func withLink(p DevicePeak, link string, gbps float64) DevicePeak {
	p.Link, p.LinkBandwidth = link, gbps/2*giga
	return p
}

// Devices is the peak table, most specific rows first. NVIDIA datasheets
// quote tensor-core rates with 2:4 sparsity for Ampere and later; the dense
// rates here are half of those. GeForce rates are the fp32-accumulate
// ones of the architecture whitepapers (half the fp16-accumulate rate).
// MI250/MI250X appear to PyTorch as two devices (one per GCD): the rows
// are per GCD, half the datasheet's per-package figures.
var Devices = []deviceEntry{
	// NVIDIA V100 datasheet (2020): interconnect NVLink 300 GB/s (SXM2), PCIe 32 GB/s (PCIe). SXM2 15.7 FP32 / 125 tensor TFLOPS, PCIe 14 / 112, V100S PCIe 16.4 / 130; HBM2 900 GB/s (V100S 1134); 80 SMs. No bf16: bf16 runs off the tensor cores, so only fp16 has a tensor rate.
	{match: []string{"v100s"}, peak: withLink(dev("NVIDIA V100S PCIe", 16.4, 0, 0, 130, 0, 1134, 80, "NVIDIA V100 Tensor Core GPU datasheet"), "PCIe 3.0 x16", 32)},
	{match: []string{"v100", "pcie"}, peak: withLink(dev("NVIDIA V100 PCIe", 14, 0, 0, 112, 0, 900, 80, "NVIDIA V100 Tensor Core GPU datasheet"), "PCIe 3.0 x16", 32)},
	{match: []string{"v100"}, peak: withLink(dev("NVIDIA V100 SXM2", 15.7, 0, 0, 125, 0, 900, 80, "NVIDIA V100 Tensor Core GPU datasheet"), "NVLink 2", 300)},
	// NVIDIA A100 datasheet (2021): interconnect NVLink 600 GB/s (SXM), PCIe Gen4 64 GB/s (PCIe; its 2-GPU NVLink bridge is not visible in a trace, so PCIe is the floor). FP32 19.5, TF32 156, BF16/FP16 312 TFLOPS dense; HBM2e 40GB 1555 GB/s, 80GB PCIe 1935, 80GB SXM 2039; 108 SMs.
	{match: []string{"a100", "80gb", "pcie"}, peak: withLink(dev("NVIDIA A100 80GB PCIe", 19.5, 156, 312, 312, 0, 1935, 108, "NVIDIA A100 Tensor Core GPU datasheet"), "PCIe 4.0 x16", 64)},
	{match: []string{"a100", "pcie"}, peak: withLink(dev("NVIDIA A100 40GB PCIe", 19.5, 156, 312, 312, 0, 1555, 108, "NVIDIA A100 Tensor Core GPU datasheet"), "PCIe 4.0 x16", 64)},
	{match: []string{"a100", "80gb"}, peak: withLink(dev("NVIDIA A100 80GB SXM", 19.5, 156, 312, 312, 0, 2039, 108, "NVIDIA A100 Tensor Core GPU datasheet"), "NVLink 3", 600)},
	{match: []string{"a100"}, peak: withLink(dev("NVIDIA A100 40GB SXM", 19.5, 156, 312, 312, 0, 1555, 108, "NVIDIA A100 Tensor Core GPU datasheet"), "NVLink 3", 600)},
	// NVIDIA H100 datasheet (2023): interconnect NVLink 900 GB/s (SXM), NVLink bridge 600 GB/s (NVL), PCIe Gen5 128 GB/s (PCIe). SXM FP32 67, TF32 989, BF16/FP16 1979, FP8 3958 TFLOPS with sparsity, HBM3 3.35 TB/s, 132 SMs; PCIe 51 / 756 / 1513 / 3026, 2.0 TB/s, 114 SMs; NVL 60 / 835 / 1671 / 3341, 3.9 TB/s.
	{match: []string{"h100", "pcie"}, peak: withLink(dev("NVIDIA H100 PCIe", 51, 378, 756.5, 756.5, 1513, 2000, 114, "NVIDIA H100 Tensor Core GPU datasheet"), "PCIe 5.0 x16", 128)},
	{match: []string{"h100", "nvl"}, peak: withLink(dev("NVIDIA H100 NVL", 60, 417.5, 835.5, 835.5, 1670.5, 3900, 132, "NVIDIA H100 Tensor Core GPU datasheet"), "NVLink bridge", 600)},
	{match: []string{"h100"}, peak: withLink(dev("NVIDIA H100 SXM", 67, 494.5, 989.5, 989.5, 1979, 3350, 132, "NVIDIA H100 Tensor Core GPU datasheet"), "NVLink 4", 900)},
	// NVIDIA H200 datasheet (2024): interconnect NVLink 900 GB/s. SXM FP32 67, TF32 989, BF16/FP16 1979, FP8 3958 TFLOPS with sparsity; HBM3e 4.8 TB/s; 132 SMs (the H100 SXM die).
	{match: []string{"h200"}, peak: withLink(dev("NVIDIA H200 SXM", 67, 494.5, 989.5, 989.5, 1979, 4800, 132, "NVIDIA H200 Tensor Core GPU datasheet"), "NVLink 4", 900)},
	// NVIDIA HGX B200 datasheet (2024), per GPU: NVLink 5 1.8 TB/s; FP32 75 TFLOPS; TF32 2.2, FP16/BF16 4.5, FP8 9 PFLOPS with sparsity; HBM3e 8 TB/s; 148 SMs.
	{match: []string{"b200"}, peak: withLink(dev("NVIDIA B200", 75, 1100, 2250, 2250, 4500, 8000, 148, "NVIDIA HGX B200 datasheet"), "NVLink 5", 1800)},
	// NVIDIA L4 datasheet (2023): interconnect PCIe Gen4 x16 64 GB/s. FP32 30.3, TF32 120, BF16/FP16 242, FP8 485 TFLOPS with sparsity; GDDR6 300 GB/s; 58 SMs.
	{match: []string{"l4"}, not: []string{"l40"}, peak: withLink(dev("NVIDIA L4", 30.3, 60, 121, 121, 242.5, 300, 58, "NVIDIA L4 Tensor Core GPU datasheet"), "PCIe 4.0 x16", 64)},
	// NVIDIA Ada GPU architecture whitepaper, RTX 4090: FP32 82.6, TF32 82.6, FP16/BF16 165.2, FP8 330.3 TFLOPS dense (fp32 accumulate); GDDR6X 1008 GB/s; 128 SMs.
	{match: []string{"rtx 4090"}, peak: dev("NVIDIA GeForce RTX 4090", 82.6, 82.6, 165.2, 165.2, 330.3, 1008, 128, "NVIDIA Ada GPU architecture whitepaper")},
	// NVIDIA Ampere GA102 GPU architecture whitepaper, RTX 3090: FP32 35.6, TF32 35.6, FP16/BF16 71 TFLOPS dense (fp32 accumulate); GDDR6X 936 GB/s; 82 SMs.
	{match: []string{"rtx 3090"}, peak: dev("NVIDIA GeForce RTX 3090", 35.6, 35.6, 71, 71, 0, 936, 82, "NVIDIA Ampere GA102 GPU architecture whitepaper")},
	// NVIDIA Turing GPU architecture whitepaper, RTX 2080 Ti: FP32 13.4, FP16 tensor 53.8 TFLOPS (fp32 accumulate); GDDR6 616 GB/s; 68 SMs. No bf16 or TF32.
	{match: []string{"rtx 2080 ti"}, peak: dev("NVIDIA GeForce RTX 2080 Ti", 13.4, 0, 0, 53.8, 0, 616, 68, "NVIDIA Turing GPU architecture whitepaper")},
	// AMD Instinct MI300X data sheet: 7 Infinity Fabric links of 128 GB/s peak (bidirectional) to the other 7 GPUs of the platform, 896 GB/s. FP32 163.4 (matrix and vector), TF32 653.7, FP16/BF16 1307.4, FP8 2614.9 TFLOPS dense; HBM3 5.3 TB/s; 304 CUs.
	{match: []string{"mi300x"}, peak: withLink(dev("AMD Instinct MI300X", 163.4, 653.7, 1307.4, 1307.4, 2614.9, 5300, 304, "AMD Instinct MI300X data sheet"), "Infinity Fabric (7 links)", 896)},
	// AMD Instinct MI250X data sheet, per package: FP32 matrix 95.7, FP16/BF16 383 TFLOPS; HBM2e 3.2768 TB/s; 220 CUs. Per GCD (one PyTorch device): half.
	{match: []string{"mi250x"}, peak: dev("AMD Instinct MI250X (one GCD)", 47.85, 0, 191.5, 191.5, 0, 1638.4, 110, "AMD Instinct MI250X data sheet")},
	// AMD Instinct MI250 data sheet, per package: FP32 matrix 90.5, FP16/BF16 362.1 TFLOPS; HBM2e 3.2768 TB/s; 208 CUs. Per GCD: half.
	{match: []string{"mi250"}, peak: dev("AMD Instinct MI250 (one GCD)", 45.25, 0, 181.05, 181.05, 0, 1638.4, 104, "AMD Instinct MI250 data sheet")},
	// AMD Instinct MI210 data sheet: FP32 matrix 45.3, FP16/BF16 181.0 TFLOPS; HBM2e 1.6384 TB/s; 104 CUs.
	{match: []string{"mi210"}, peak: dev("AMD Instinct MI210", 45.3, 0, 181, 181, 0, 1638.4, 104, "AMD Instinct MI210 data sheet")},
	// ROCm before 6.x names MI210 and MI250 GCDs "AMD Radeon Graphics"; with 104 CUs and gfx9 it is one of those two, whose per-device peaks agree (MI210 data sheet).
	{match: []string{"amd radeon graphics"}, major: 9, peak: dev("AMD Instinct MI210 / MI250 GCD (gfx90a, 104 CUs)", 45.25, 0, 181, 181, 0, 1638.4, 104, "AMD Instinct MI210 data sheet")},
}

// LookupDevice returns the peak row of a device by its deviceProperties
// name, SM/CU count and compute major (nil when unknown); nil for an
// unknown device or an empty name.
func LookupDevice(name string, units, major *int64) *DevicePeak {
	lower := strings.ToLower(strings.TrimSpace(name))
	if lower == "" {
		return nil
	}
	for i := range Devices {
		e := &Devices[i]
		ok := true
		for _, m := range e.match {
			if !strings.Contains(lower, m) {
				ok = false
				break
			}
		}
		for _, m := range e.not {
			if strings.Contains(lower, m) {
				ok = false
			}
		}
		if !ok || units != nil && *units != e.peak.ComputeUnits || e.major > 0 && (major == nil || *major != e.major) {
			continue
		}
		p := e.peak
		return &p
	}
	return nil
}

// nameless is a peak row for a device whose deviceProperties name is
// empty (ROCm builds of some serving images record name ""), matched by
// architecture, compute units and memory size, which together name one
// product.
type nameless struct {
	major, minor, units int64
	memGiB              int64 // totalGlobalMem in GiB, rounded
	row                 string
}

// namelessDevices: gfx942 (ROCm compute 9.4) with 304 CUs and 192 GB is the
// MI300X (AMD Instinct MI300X data sheet; the MI300A has 228 CUs, the MI325X
// 256 GB).
var namelessDevices = []nameless{{major: 9, minor: 4, units: 304, memGiB: 192, row: "mi300x"}}

// LookupDeviceProps returns the peak row of the primary device: by name
// (LookupDevice), or for a device without a name by its architecture,
// compute units and memory (namelessDevices); nil when unknown.
func LookupDeviceProps(dv *Device) *DevicePeak {
	if dv == nil {
		return nil
	}
	if strings.TrimSpace(dv.Name) != "" {
		return LookupDevice(dv.Name, dv.SMCount, dv.ComputeMajor)
	}
	if dv.ComputeMajor == nil || dv.ComputeMinor == nil || dv.SMCount == nil || dv.TotalMemoryBytes == nil {
		return nil
	}
	gib := (*dv.TotalMemoryBytes + 1<<29) >> 30
	for _, n := range namelessDevices {
		if n.major == *dv.ComputeMajor && n.minor == *dv.ComputeMinor && n.units == *dv.SMCount && n.memGiB == gib {
			return LookupDevice(n.row, dv.SMCount, dv.ComputeMajor)
		}
	}
	return nil
}

// peakFor returns the peak FLOP/s an op of dtype class dt can reach on
// the device and the name of that rate: fp32 matmul-class work counts
// against the TF32/XF32 tensor-core rate where the device has one (what
// the same op reaches with TF32 or autocast), bf16 on a device without
// bf16 tensor cores against fp16, fp8 without fp8 against bf16.
func (p *DevicePeak) peakFor(dt string) (float64, string) {
	switch dt {
	case "fp32":
		if p.TF32FLOPS > p.FP32FLOPS {
			return p.TF32FLOPS, "tf32"
		}
		return p.FP32FLOPS, "fp32"
	case "bf16":
		if p.BF16FLOPS > 0 {
			return p.BF16FLOPS, "bf16"
		}
		return p.FP16FLOPS, "fp16"
	case "fp16":
		return p.FP16FLOPS, "fp16"
	case "fp8":
		if p.FP8FLOPS > 0 {
			return p.FP8FLOPS, "fp8"
		}
		return p.BF16FLOPS, "bf16"
	}
	return 0, ""
}
