package trace

import (
	"cmp"
	"slices"

	"github.com/stepdoctor/stepdoctor/internal/hugemem"
)

// OpShapes is what record_shapes=True recorded for one event, as compact
// interned text (0 when the arg is absent):
//
//   - Dims: args["Input Dims"], one entry per input separated by ",":
//     "[8,16,4096,128],[],?" ("[]" a scalar or None, "?" an entry that is
//     not a flat list of numbers, such as a TensorList).
//   - Types: args["Input type"], entries separated by "|":
//     "c10::BFloat16|c10::BFloat16||Scalar".
//   - Concrete: args["Concrete Inputs"], entries separated by "|":
//     "||[2, 2]|[3, 3]|False".
//
// Entries longer than maxShapeText in all are not kept.
//
// DType and LeadDim are read from those args, whatever their length:
// DType the first tensor dtype of Input type ("float", "c10::BFloat16"),
// set when the event has HasDType; LeadDim the leading dimension of the
// first non-empty shape of Input Dims (the batch dimension of a model's
// input), set when it has HasLeadDim. HasShapes says the text is there.
type OpShapes struct {
	Index    int32 // Event.Index of the event
	Dims     Str
	Types    Str
	Concrete Str
	DType    Str
	LeadDim  int32
}

// addShapes files sh, what one args object of ev held, in the shape table;
// had is ev.Has before that object was read. A second args object in one
// event adds only what the first lacked: the text of the first object
// that had any, the first dtype and the first leading dimension.
func (p *parser) addShapes(ev *Event, sh OpShapes, had uint16) {
	var add uint16
	if sh.Dims != 0 || sh.Types != 0 || sh.Concrete != 0 {
		add |= HasShapes
	}
	if sh.DType != 0 {
		add |= HasDType
	}
	add |= ev.Has & HasLeadDim // set while the object was read
	add &^= had
	if add == 0 {
		return
	}
	ev.Has |= add
	if had&hasShapeEntry == 0 {
		if p.t.Shapes == nil && !p.local && p.size > 0 {
			// Room for the first chunk's events, sized with the store
			// (keep) after: no regrowth before that.
			p.t.Shapes = make([]OpShapes, 0, p.firstChunk())
		}
		p.t.Shapes = append(p.t.Shapes, sh)
		return
	}
	prev := &p.t.Shapes[len(p.t.Shapes)-1] // this event's
	if add&HasShapes != 0 {
		prev.Dims, prev.Types, prev.Concrete = sh.Dims, sh.Types, sh.Concrete
	}
	if add&HasDType != 0 {
		prev.DType = sh.DType
	}
	if add&HasLeadDim != 0 {
		prev.LeadDim = sh.LeadDim
	}
}

// maxShapeText caps the text kept for one arg: longer lists (TensorList
// args of _foreach ops with hundreds of tensors) are not kept.
const maxShapeText = 4 << 10

// ShapesOf returns the record_shapes args of e, when it has any of them
// (HasShapes, HasLeadDim or HasDType); the text is 0 without HasShapes.
func (t *Trace) ShapesOf(e *Event) (OpShapes, bool) {
	if e.Has&hasShapeEntry == 0 {
		return OpShapes{}, false
	}
	k, ok := slices.BinarySearchFunc(t.Shapes, e.Index, func(s OpShapes, i int32) int { return cmp.Compare(s.Index, i) })
	if !ok {
		return OpShapes{}, false
	}
	return t.Shapes[k], true
}

// ShapeIndex is ShapesOf in one load, for passes that look up many
// events, where the binary search takes a cache miss a step (11% of
// facts.Derive on a 200 MB trace). It holds 4 bytes an event, up to the
// last one with shapes; see IndexShapes.
type ShapeIndex struct {
	t  *Trace
	at []int32 // per Event.Index, 1 + its Shapes entry, or 0
}

// IndexShapes builds t's ShapeIndex.
func (t *Trace) IndexShapes() ShapeIndex {
	x := ShapeIndex{t: t}
	if n := len(t.Shapes); n > 0 && t.Shapes[n-1].Index >= 0 {
		last := int(t.Shapes[n-1].Index) + 1 // the entries are in Index order
		x.at = hugemem.Make[int32](last, last)
		for k := range t.Shapes {
			if i := t.Shapes[k].Index; i >= 0 {
				x.at[i] = int32(k + 1)
			}
		}
	}
	return x
}

// Of is t.ShapesOf(e).
func (x ShapeIndex) Of(e *Event) (OpShapes, bool) {
	if i := int(e.Index); e.Has&hasShapeEntry != 0 && i >= 0 && i < len(x.at) {
		if k := x.at[i]; k > 0 {
			return x.t.Shapes[k-1], true
		}
	}
	return OpShapes{}, false
}

// shapeSep appends the separator before an entry other than the first.
func (p *parser) shapeSep(sep byte) {
	if p.shapeN > 0 {
		p.shapeBytes([]byte{sep})
	}
	p.shapeN++
}

// shapeBegin starts the text of one arg.
func (p *parser) shapeBegin() {
	p.shapeBuf, p.shapeN, p.shapeCut = p.shapeBuf[:0], 0, false
}

func (p *parser) shapeText(s string) {
	if len(p.shapeBuf)+len(s) > maxShapeText {
		p.shapeCut = true
		return
	}
	p.shapeBuf = append(p.shapeBuf, s...)
}

func (p *parser) shapeBytes(b []byte) {
	if len(p.shapeBuf)+len(b) > maxShapeText {
		p.shapeCut = true
		return
	}
	p.shapeBuf = append(p.shapeBuf, b...)
}

// shapeStr interns the text built since the arg began (at stream offset
// off), or returns 0 when it was cut or is empty.
func (p *parser) shapeStr(off int64) Str {
	if p.shapeCut || len(p.shapeBuf) == 0 {
		return 0
	}
	return p.str(p.shapeBuf, off)
}
