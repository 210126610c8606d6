package facts

import (
	"strings"

	"github.com/stepdoctor/stepdoctor/engine/trace"
)

// nameKind classifies an event name once per distinct string, so the
// per-event loops test a bit instead of hashing or scanning the name.
type nameKind uint16

const (
	kStep        nameKind = 1 << iota // ProfilerStep#N
	kSync                             // a host sync point
	kLaunch                           // a kernel launch call
	kDataLoader                       // enumerate(DataLoader)#...__next__
	kDLSingle                         // ... of a _SingleProcessDataLoaderIter
	kElementwise                      // kernel name contains "elementwise"
	kPointwise                        // aten pointwise op (CPU chains)
	kPlainName                        // no "::", not an autograd node nor detach: an annotation in legacy traces
	kHtoD                             // memcpy name contains HtoD
	kDtoH                             // ... DtoH
	kDtoD                             // ... DtoD
	kPageable                         // ... Pageable
	kGraphLaunch                      // a CUDA/HIP Graph replay call
)

func classify(name string) nameKind {
	var k nameKind
	if strings.HasPrefix(name, "ProfilerStep#") {
		k |= kStep
	}
	if syncNames[name] {
		k |= kSync
	}
	if launchNames[name] {
		k |= kLaunch
	}
	if graphLaunchNames[name] {
		k |= kGraphLaunch
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
