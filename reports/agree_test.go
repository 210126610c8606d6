package reports

import (
	"html"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/stepdoctor/stepdoctor/engine"
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

// TestMemoryLabelsAgree: the memory summary of each device and the top
// label and module rows read the same in text, Markdown and HTML, and the
// JSON report carries the facts they come from.
func TestMemoryLabelsAgree(t *testing.T) {
	for _, name := range []string{"memory_modules", "memory_2021"} {
		var res = sampleTrace(name)
		for _, f := range fixtures {
			if f.name == name {
				res = f.make
			}
		}
		r := res()
		v := buildViews(r)[0]
		if len(v.Series.Memory) == 0 {
			t.Fatalf("%s: no memory rows", name)
		}
		txt := string(render(t, func(w io.Writer, r *engine.Result) error { return Text(w, r, Terminal{}) }, r))
		md := string(render(t, Markdown, r))
		page := html.UnescapeString(string(render(t, HTML, r)))
		js := string(render(t, JSON, r))
		for _, m := range v.Series.Memory {
			if !strings.Contains(txt, "memory: "+m.Summary) || !strings.Contains(md, "- "+mdText(m.Summary)+".") || !strings.Contains(page, m.Summary+".") {
				t.Errorf("%s: summary %q missing from a format", name, m.Summary)
			}
			if m.StartNote != "" && (!strings.Contains(txt, m.StartNote) || !strings.Contains(md, mdText(m.StartNote)) || !strings.Contains(page, m.StartNote)) {
				t.Errorf("%s: start note missing from a format", name)
			}
			if !strings.Contains(md, "| "+mdCell(m.Device)+" | "+strconv.FormatInt(m.Events, 10)+" | "+m.Peak+" | "+m.PeakAt+" |") {
				t.Errorf("%s: Markdown lacks the %s row", name, m.Device)
			}
		}
		if !strings.Contains(js, `"peak_allocated_bytes"`) || !strings.Contains(js, `"curve"`) {
			t.Errorf("%s: JSON lacks the memory table", name)
		}
		for _, rows := range [][]labelRow{v.Series.Labels, v.Series.Modules} {
			for _, l := range rows {
				if !strings.Contains(txt, l.CPU+"  ") || !strings.Contains(txt, "  "+l.Name+"\n") {
					t.Errorf("%s: text lacks %+v", name, l)
				}
				if !strings.Contains(md, "| "+mdCell(l.Name)+" | "+strconv.FormatInt(l.Calls, 10)+" | "+l.CPU+" | "+l.PerStep+" | "+l.Share+" | "+l.GPU+" |") {
					t.Errorf("%s: Markdown lacks %+v", name, l)
				}
				if !strings.Contains(page, "<td class=\"name mono\">"+l.Name+"</td><td class=\"num\">"+strconv.FormatInt(l.Calls, 10)+"</td><td class=\"num\">"+l.CPU+"</td>") {
					t.Errorf("%s: HTML lacks %+v", name, l)
				}
				if !strings.Contains(js, `"name": "`+l.Name[strings.LastIndexByte(l.Name, '/')+1:]+`"`) {
					t.Errorf("%s: JSON lacks %s", name, l.Name)
				}
			}
		}
	}
}
