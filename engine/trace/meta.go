package trace

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/klauspost/compress/gzip"
)

// decompress returns a reader of the uncompressed JSON: gzip (all members)
// when the input starts with the gzip magic bytes 1f 8b, else the input.
func decompress(br *bufio.Reader) (io.Reader, bool, error) {
	magic, _ := br.Peek(2)
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, true, fmt.Errorf("byte 0: read gzip header: %w", err)
		}
		zr.Multistream(true)
		return newReadAhead(zr), true, nil
	}
	return br, false, nil
}

// deviceProps reads the deviceProperties array.
func (p *parser) deviceProps() error {
	lx := p.lx
	return p.items(func(byte) error {
		if ok, err := lx.open('{'); !ok {
			return err
		}
		var d DeviceProps
		var seen uint8
		if err := p.objectFields(func(key string) error {
			if bit := keyBit(devKeys, key); seen&bit != 0 {
				p.noteDup([]byte(key), "a deviceProperties entry") // the last value is used
			} else {
				seen |= bit
			}
			switch key {
			case "id":
				v, err := p.intValue()
				d.ID = v
				return err
			case "name":
				b, err := p.strValue()
				d.Name = string(p.t.strs[p.str(b, lx.offset())])
				return err
			case "computeMajor", "computeMinor", "numSms", "totalGlobalMem":
				v, err := p.intValue()
				if err != nil {
					return err
				}
				ptr := &v
				switch key {
				case "computeMajor":
					d.ComputeMajor = ptr
				case "computeMinor":
					d.ComputeMinor = ptr
				case "numSms":
					d.NumSMs = ptr
				case "totalGlobalMem":
					d.TotalGlobalMem = ptr
				}
				return nil
			}
			return lx.skipValue()
		}); err != nil {
			return err
		}
		p.t.Devices = append(p.t.Devices, d)
		return nil
	})
}

// devKeys are the keys of a deviceProperties entry the reader reads.
const devKeys = "|id|name|computeMajor|computeMinor|numSms|totalGlobalMem|"

// keyBit is key's bit among the keys of list ("|a|b|...|", at most 8):
// 1<<i for the i-th, 0 when not listed.
func keyBit(list, key string) uint8 {
	i := strings.Index(list, "|"+key+"|")
	if i < 0 {
		return 0
	}
	return 1 << strings.Count(list[:i], "|")
}

// items iterates an array value, calling f at each element with the
// element's first byte; f must consume the element. A value that is not
// an array is skipped.
func (p *parser) items(f func(c byte) error) error {
	lx := p.lx
	if ok, err := lx.open('['); !ok {
		return err
	}
	for {
		c, err := lx.peek()
		if err != nil {
			return err
		}
		switch c {
		case ']':
			lx.pos++
			return nil
		case ',':
			lx.pos++
			continue
		}
		if err := f(c); err != nil {
			return err
		}
	}
}

// distInfo reads the distributedInfo object.
func (p *parser) distInfo() error {
	lx := p.lx
	if ok, err := lx.open('{'); !ok {
		return err
	}
	d := &DistributedInfo{}
	var seen uint8
	err := p.objectFields(func(key string) error {
		if bit := keyBit("|rank|world_size|backend|", key); seen&bit != 0 {
			// The last value is used, also where it is no number.
			p.noteDup([]byte(key), "distributedInfo")
			switch key {
			case "rank":
				d.Rank = nil
			case "world_size":
				d.WorldSize = nil
			}
		} else {
			seen |= bit
		}
		switch key {
		case "rank", "world_size":
			c, err := lx.peek()
			if err != nil {
				return err
			}
			if c != '-' && (c < '0' || c > '9') && c != '"' {
				return lx.skipValue()
			}
			v, err := p.intValue()
			if err != nil {
				return err
			}
			if key == "rank" {
				d.Rank = &v
			} else {
				d.WorldSize = &v
			}
			return nil
		case "backend":
			b, err := p.strValue()
			d.Backend = string(b)
			return err
		}
		return lx.skipValue()
	})
	p.t.Distributed = d
	return err
}

// objectFields iterates an object's members (after its '{'), calling f
// with each key positioned at the value; f must consume the value.
func (p *parser) objectFields(f func(key string) error) error {
	for first := true; ; first = false {
		k, done, err := p.member(first, "an object")
		if err != nil || done {
			return err
		}
		if err := f(string(k)); err != nil {
			return err
		}
	}
}

// member steps to the next member of an object whose '{' was read: it
// returns the key (valid until the next lexer call) with the lexer at the
// value, or done at the closing '}'. A trailing comma is repaired.
func (p *parser) member(first bool, where string) (key []byte, done bool, err error) {
	lx := p.lx
	if key, ok := lx.plainKey(first); ok {
		return key, false, nil
	}
	c, err := lx.peek()
	if err != nil {
		return nil, false, err
	}
	if c == '}' {
		lx.pos++
		return nil, true, nil
	}
	if !first {
		if c != ',' {
			return nil, false, lx.syntaxErr(fmt.Sprintf("expected ',' or '}' in %s, found %s", where, quoteByte(c)))
		}
		lx.pos++
		if c, err = lx.peek(); err != nil {
			return nil, false, err
		}
		if c == '}' {
			p.note(DiagRepair, "trailing_comma", "trailing comma removed", lx.offset()-1)
			lx.pos++
			return nil, true, nil
		}
	}
	if key, err = lx.str(); err != nil {
		return nil, false, err
	}
	if lx.pos < lx.end && lx.buf[lx.pos] == ':' {
		lx.pos++ // the usual case: key stays valid in the window
		return key, false, nil
	}
	// Reaching the colon may refill the window and move the key: keep a copy.
	p.keyBuf = append(p.keyBuf[:0], key...)
	if err := lx.expect(':'); err != nil {
		return nil, false, err
	}
	return p.keyBuf, false, nil
}

// finish closes the read: unmatched B events, sentinel and corrupt records.
func (p *parser) finish() {
	t := p.t
	fastRead.Add(p.fastN)
	p.matchBeginEnd()
	chunks := append(p.chunks, p.flat, p.cur)
	p.chunks, p.flat, p.cur = nil, nil, nil
	// One pass finds the latest start and whether any complete event
	// starts at ts 0 (a sentinel candidate); without one, a single store
	// is kept as it is, with no copy.
	var maxTS int64
	n, nonEmpty, zeroTS := 0, 0, false
	for _, c := range chunks {
		n += len(c)
		if len(c) > 0 {
			nonEmpty++
		}
		for i := range c {
			maxTS = max(maxTS, c[i].TS)
			zeroTS = zeroTS || c[i].TS == 0 && c[i].Ph == PhComplete
		}
	}
	filter := zeroTS && maxTS > sentinelHorizonNS
	var kept []Event
	if nonEmpty == 1 {
		// One store (the sized one): filter in place, no copy.
		for _, c := range chunks {
			if len(c) > 0 {
				kept = c
			}
		}
		if filter {
			kept = kept[:0]
		}
	} else {
		kept = make([]Event, 0, n)
	}
	for k, c := range chunks {
		if nonEmpty == 1 && !filter {
			break // kept is the store
		}
		for i := range c {
			e := &c[i]
			if filter && e.Ph == PhComplete && e.TS == 0 {
				p.drop("ts_zero", fmt.Sprintf("complete event with ts 0 in a trace with later events (a sentinel; first is event %d)", e.Index), -1)
				continue
			}
			kept = append(kept, *e)
		}
		chunks[k] = nil // let the chunk go as soon as it is copied
	}
	t.Events = kept
	t.Health.EventsKept = len(kept)
	t.Bytes = p.lx.offset()
	sort.SliceStable(t.Health.Diagnostics, func(i, j int) bool {
		a, b := t.Health.Diagnostics[i], t.Health.Diagnostics[j]
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		return a.Reason < b.Reason
	})
}
