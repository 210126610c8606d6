package trace

import (
	"cmp"
	"slices"
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
// LeadDim the leading dimension of the first non-empty shape of Input Dims
// (the batch dimension of a model's input), set when the event has
// HasLeadDim.
type OpShapes struct {
	Index    int32 // Event.Index of the event
	Dims     Str
	Types    Str
	Concrete Str
	DType    Str
	LeadDim  int32
}

// any reports whether s holds anything for an event with flags has.
func (s *OpShapes) any(has uint16) bool {
	return s.Dims != 0 || s.Types != 0 || s.Concrete != 0 || s.DType != 0 || has&HasLeadDim != 0
}

// maxShapeText caps the text kept for one arg: longer lists (TensorList
// args of _foreach ops with hundreds of tensors) are not kept.
const maxShapeText = 4 << 10

// ShapesOf returns the record_shapes args of e.
func (t *Trace) ShapesOf(e *Event) (OpShapes, bool) {
	if e.Has&HasShapes == 0 {
		return OpShapes{}, false
	}
	k, ok := slices.BinarySearchFunc(t.Shapes, e.Index, func(s OpShapes, i int32) int { return cmp.Compare(s.Index, i) })
	if !ok {
		return OpShapes{}, false
	}
	return t.Shapes[k], true
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
