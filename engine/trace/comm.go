package trace

import (
	"cmp"
	"slices"
	"strings"
)

// CommArgs is what PyTorch's c10d profiling records for one collective
// (the record_param_comms op and, from PyTorch 2.1, the NCCL/RCCL kernel
// itself; torch/csrc/distributed/c10d/ParamCommsUtils.hpp). Interned text
// is 0 and numbers -1 when the arg is absent.
type CommArgs struct {
	Index int32 // Event.Index of the event
	// Collective is args["Collective name"]: allreduce, _allgather_base,
	// reduce_scatter_tensor_coalesced, broadcast, wait, ...
	Collective Str
	// Group is args["Process Group Name"] ("0", "3"; the text of the
	// integer args["Process Group ID"] in PyTorch 2.2-2.3 traces) and
	// GroupDesc args["Process Group Description"] ("default_pg",
	// "undefined", a name given to new_group).
	Group     Str
	GroupDesc Str
	// Ranks is args["Process Group Ranks"], the group's global ranks as
	// text ("[0, 1, 2, 3]").
	Ranks Str
	// DType is args["dtype"], a c10 ScalarType name (Float, BFloat16, Half,
	// Byte, ...).
	DType Str
	// GroupSize is args["Group size"]; InNelems and OutNelems are
	// args["In msg nelems"] and args["Out msg nelems"] (elements).
	GroupSize int64
	InNelems  int64
	OutNelems int64
}

// commKey names the c10d args kept in CommArgs (0: not one of them).
func commKey(k []byte) byte {
	switch string(k) {
	case "Collective name":
		return 'c'
	case "Process Group Name", "Process Group ID":
		return 'g'
	case "Process Group Description":
		return 'd'
	case "Process Group Ranks":
		return 'r'
	case "dtype":
		return 't'
	case "Group size":
		return 's'
	case "In msg nelems":
		return 'i'
	case "Out msg nelems":
		return 'o'
	}
	return 0
}

// commBit is a c10d arg key's bit among an args object's keys, for
// finding repeated ones (event.go): one a key, so that "Process Group
// Name" and "Process Group ID", which PyTorch versions write in turn for
// one field, are not taken for a repeat.
func commBit(k []byte) uint32 {
	if string(k) == "Process Group ID" {
		return 1 << 8
	}
	return 1 << strings.IndexByte("cgdrtsio", commKey(k))
}

// clear undoes the c10d arg key before a repeated one is read.
func (c *CommArgs) clear(key byte) {
	switch key {
	case 'c':
		c.Collective = 0
	case 'g':
		c.Group = 0
	case 'd':
		c.GroupDesc = 0
	case 'r':
		c.Ranks = 0
	case 't':
		c.DType = 0
	case 's':
		c.GroupSize = -1
	case 'i':
		c.InNelems = -1
	case 'o':
		c.OutNelems = -1
	}
}

func newCommArgs(index int32) CommArgs {
	return CommArgs{Index: index, GroupSize: -1, InNelems: -1, OutNelems: -1}
}

// set reports whether any c10d arg was read.
func (c *CommArgs) set() bool {
	return c.Collective != 0 || c.Group != 0 || c.GroupDesc != 0 || c.Ranks != 0 || c.DType != 0 ||
		c.GroupSize >= 0 || c.InNelems >= 0 || c.OutNelems >= 0
}

// commArg reads the value of the c10d arg key into c: text args take a
// string or a number's text; number args a non-negative integer. Other
// values are skipped.
func (p *parser) commArg(key byte, c *CommArgs) error {
	lx := p.lx
	ch, err := lx.peek()
	if err != nil {
		return err
	}
	off := lx.offset()
	var b []byte
	num := false
	switch {
	case ch == '"':
		lx.pos++
		b, err = lx.strBody()
	case ch == '-' || (ch >= '0' && ch <= '9'):
		b, err = lx.number()
		num = true
	default:
		return lx.skipValue()
	}
	if err != nil {
		return err
	}
	switch key {
	case 's', 'i', 'o':
		if !num {
			return nil
		}
		v, ok := parseInt(b)
		if !ok || v < 0 {
			return nil
		}
		switch key {
		case 's':
			c.GroupSize = v
		case 'i':
			c.InNelems = v
		default:
			c.OutNelems = v
		}
		return nil
	}
	if len(b) == 0 || len(b) > maxShapeText {
		return nil
	}
	s := p.str(b, off)
	switch key {
	case 'c':
		c.Collective = s
	case 'g':
		c.Group = s
	case 'd':
		c.GroupDesc = s
	case 'r':
		c.Ranks = s
	case 't':
		c.DType = s
	}
	return nil
}

// CommOf returns the c10d collective args of e (see CommArgs).
func (t *Trace) CommOf(e *Event) (CommArgs, bool) {
	if e.Has&HasComm == 0 {
		return CommArgs{}, false
	}
	k, ok := slices.BinarySearchFunc(t.Comms, e.Index, func(c CommArgs, i int32) int { return cmp.Compare(c.Index, i) })
	if !ok {
		return CommArgs{}, false
	}
	return t.Comms[k], true
}
