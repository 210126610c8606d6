package reports

import (
	"html"
	"strings"
	"testing"
)

// TestFormatsAgree renders one result in every format and checks that the
// numbers and labels they share are the same: the device label, the GPU
// busy share (once "GPU busy 6.9%" in the text and "busy 7.4%" in a
// finding of the same report, two denominators), the idle causes and each
// finding's impact. The view model computes them once; renderers only lay
// them out.
func TestFormatsAgree(t *testing.T) {
	for _, fx := range []struct {
		name string
		busy string
	}{{"sample_dataloader_bound", "7.4%"}, {"sample_launch_bound", "19.2%"}, {"cpu_only", ""}, {"gpu_training", ""}} {
		t.Run(fx.name, func(t *testing.T) {
			var r = sampleTrace(strings.TrimPrefix(fx.name, "sample_"))
			for _, f := range fixtures {
				if f.name == fx.name {
					r = f.make
				}
			}
			res := r()
			out := map[string]string{}
			for _, rd := range renderers {
				if rd.ext == "color.txt" {
					continue
				}
				s := string(render(t, rd.render, res))
				if rd.ext == "html" {
					s = html.UnescapeString(s)
				}
				out[rd.ext] = s
			}
			v := buildViews(res)[0]
			has := func(format, want string) {
				t.Helper()
				if !strings.Contains(out[format], want) {
					t.Errorf("%s lacks %q", format, want)
				}
			}
			has("txt", "("+v.DeviceLabel+", ")
			has("md", "| Device | "+v.DeviceLabel+" |")
			has("html", "<dd>"+v.DeviceLabel+"</dd>")
			if fx.busy != "" {
				if v.Series.Busy != fx.busy || fmtPct(*res.Traces[0].Facts.GPUBusyRatio) != fx.busy {
					t.Fatalf("busy %s, gpu_busy_ratio %v, want %s", v.Series.Busy, *res.Traces[0].Facts.GPUBusyRatio, fx.busy)
				}
				has("txt", "GPU busy "+fx.busy)
				has("md", "busy "+fx.busy+",")
				has("html", "busy "+fx.busy+",")
				has("html", `busy <strong>`+fx.busy+`</strong>`)
				for _, ic := range v.Series.Idle[:min(len(v.Series.Idle), 4)] {
					has("txt", ic.Label+" "+ic.Share)
					has("md", "idle on "+ic.Label+" "+ic.Share)
					has("html", "idle waiting on "+ic.Label+" "+ic.Share)
				}
				// A share computed against another denominator than |W| shows
				// up as a second "busy" figure.
				for format, s := range out {
					for _, part := range strings.Split(s, "busy ")[1:] {
						part = strings.TrimPrefix(part, "<strong>")
						if part != "" && part[0] >= '0' && part[0] <= '9' && !strings.HasPrefix(part, fx.busy) {
							t.Errorf("%s shows busy %.8s, want %s", format, part, fx.busy)
						}
					}
				}
			}
			for _, f := range v.Findings {
				has("txt", f.Impact+"  ")
				has("md", "**Impact "+f.Impact+" "+v.OfTime+"**")
				has("html", "Impact <strong>"+f.Impact+"</strong>")
			}
		})
	}
}
