package facts

import (
	"cmp"
	"regexp"
	"slices"
	"strconv"

	"github.com/stepdoctor/stepdoctor/engine/trace"
)

// PySite aggregates hot host events of one kind under one Python function
// of a with_stack trace. Kineto names Python frames "file(line): func",
// where line is the function's first line (co_firstlineno), so a site is a
// function, not a line inside it. Every function on the stack of a hot event
// counts the event once. Kinds: "sync" (outermost host syncs), "dataloader"
// (DataLoader __next__), "memcpy" (launch calls of pageable host-to-device
// copies). Times are microseconds.
type PySite struct {
	Kind   string  `json:"kind"`
	File   string  `json:"file"`
	Line   int     `json:"line"`
	Func   string  `json:"func"`
	Count  int64   `json:"count"`
	TimeUS float64 `json:"time_us"`
}

var pyFrame = regexp.MustCompile(`^(.+)\((\d+)\): (.+)$`)

// maxPySites bounds Facts.PythonSites (the hottest first).
const maxPySites = 100

// pythonSites maps hot host events to the Python functions on their stack
// (python_function events of the same thread enclosing them).
func (d *deriver) pythonSites(hot map[string][]int) {
	evs := d.t.Events
	d.indexFrames()
	frames, parent := d.frames, d.frameParent
	if len(frames) == 0 {
		return
	}
	type key struct {
		kind string
		name trace.Str
	}
	agg := map[key]*PySite{}
	for _, kind := range []string{"sync", "dataloader", "memcpy"} {
		for _, i := range hot[kind] {
			e := &evs[i]
			// The last frame of this thread starting at or before e.
			k, _ := slices.BinarySearchFunc(frames, e, func(f int, t *trace.Event) int {
				fe := &evs[f]
				return cmp.Or(cmp.Compare(fe.PID, t.PID), cmp.Compare(fe.TID, t.TID), cmp.Compare(fe.TS, t.TS+1))
			})
			k--
			if k < 0 || evs[frames[k]].PID != e.PID || evs[frames[k]].TID != e.TID {
				continue
			}
			seen := map[trace.Str]bool{}
			for ; k >= 0; k = parent[k] {
				f := &evs[frames[k]]
				if f.End() < e.TS || seen[f.Name] {
					continue
				}
				seen[f.Name] = true
				s := agg[key{kind, f.Name}]
				if s == nil {
					m := pyFrame.FindStringSubmatch(d.t.Name(f))
					if m == nil {
						continue
					}
					line, _ := strconv.Atoi(m[2])
					s = &PySite{Kind: kind, File: m[1], Line: line, Func: m[3]}
					agg[key{kind, f.Name}] = s
				}
				s.Count++
				s.TimeUS += float64(e.Dur) / 1e3
			}
		}
	}
	for _, s := range agg {
		d.f.PythonSites = append(d.f.PythonSites, *s)
	}
	slices.SortFunc(d.f.PythonSites, func(a, b PySite) int {
		return cmp.Or(cmp.Compare(b.TimeUS, a.TimeUS), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line))
	})
	if len(d.f.PythonSites) > maxPySites {
		d.f.PythonSites = d.f.PythonSites[:maxPySites]
	}
}

// indexFrames sorts the python_function events by (pid, tid, start, longer
// first) and links each to its enclosing frame on the thread, once.
func (d *deriver) indexFrames() {
	if d.framesDone {
		return
	}
	d.framesDone = true
	evs := d.t.Events
	var frames []int
	for i := range evs {
		if e := &evs[i]; e.Ph == trace.PhComplete && e.Cat == trace.CatPythonFunction {
			frames = append(frames, i)
		}
	}
	d.frames, d.frameParent = nestOnThread(evs, frames)
}
