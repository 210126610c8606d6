//go:build cgo

package script

import (
	"regexp"
	"strings"

	sitter "github.com/tree-sitter/go-tree-sitter"
)

// argDefault records the literal default of an argparse option:
// parser.add_argument("--num-workers", type=int, default=4) maps the
// destination num_workers to 4 (argparse: the first long option, dashes
// to underscores, unless dest= is given).
func (s *scanner) argDefault(pos []Value, kw map[string]Value) {
	d, ok := kw["default"]
	if !ok || !literalKind(d.Kind) {
		return
	}
	dest := ""
	if v, ok := kw["dest"]; ok && v.Kind == "string" {
		dest, _ = v.Value.(string)
	}
	for _, a := range pos {
		str, isStr := a.Value.(string)
		if dest != "" || !isStr || !strings.HasPrefix(str, "--") {
			continue
		}
		dest = strings.ReplaceAll(strings.TrimPrefix(str, "--"), "-", "_")
	}
	if dest == "" {
		return
	}
	if s.argDefaults == nil {
		s.argDefaults = map[string]any{}
	}
	if _, seen := s.argDefaults[dest]; seen {
		s.argDefaults[dest] = nil // defined twice: ambiguous
		return
	}
	s.argDefaults[dest] = d.Value
}

func literalKind(k string) bool {
	return k == "bool" || k == "int" || k == "float" || k == "string" || k == "none"
}

// optionRef matches a read of a parsed option: args.num_workers,
// self.args.workers, opt.workers.
var optionRef = regexp.MustCompile(`^(?:self\.)?(?:args|opt|opts|cfg|config|flags|FLAGS|hparams|training_args)\.([A-Za-z_][A-Za-z0-9_]*)$`)

// resolveDefaults fills Value.Default of the DataLoader arguments that
// read a parsed option.
func (s *scanner) resolveDefaults() {
	if len(s.argDefaults) == 0 {
		return
	}
	fill := func(v *Value) {
		if v.Kind != "name" {
			return
		}
		if m := optionRef.FindStringSubmatch(v.Text); m != nil {
			if d, ok := s.argDefaults[m[1]]; ok && d != nil {
				v.Default = d
			}
		}
	}
	for i := range s.f.DataLoaders {
		dl := &s.f.DataLoaders[i]
		fill(&dl.NumWorkers)
		fill(&dl.PinMemory)
		fill(&dl.PersistentWorkers)
		fill(&dl.PrefetchFactor)
		fill(&dl.BatchSize)
	}
}

// tripCounts sets Loop.Trips of the for loops over range(...) whose
// bounds are known.
func (s *scanner) tripCounts() {
	for _, r := range s.ranges {
		args := namedChildren(r.call.ChildByFieldName("arguments"))
		if len(args) == 0 || len(args) > 3 {
			continue
		}
		b := make([]int64, len(args))
		known := true
		for i, a := range args {
			b[i], known = s.intValue(a, 0)
			if !known {
				break
			}
		}
		if !known {
			continue
		}
		lo, hi, step := int64(0), b[0], int64(1)
		if len(b) > 1 {
			lo, hi = b[0], b[1]
		}
		if len(b) > 2 {
			step = b[2]
		}
		if step > 0 && hi > lo {
			s.f.Loops[r.loop].Trips = (hi - lo + step - 1) / step
		}
	}
}

// intValue evaluates an integer expression of literals, names assigned
// one integer literal, command-line option defaults and + - *; depth
// bounds the recursion.
func (s *scanner) intValue(n *sitter.Node, depth int) (int64, bool) {
	if n == nil || depth > 8 {
		return 0, false
	}
	switch n.Kind() {
	case "integer":
		v := s.value(n)
		i, ok := v.Value.(int64)
		return i, ok
	case "parenthesized_expression":
		if c := namedChildren(n); len(c) == 1 {
			return s.intValue(c[0], depth+1)
		}
	case "identifier":
		if as := s.allAssigns[s.text(n)]; len(as) == 1 && as[0].idx < 0 && as[0].v.Kind() == "integer" {
			return s.intValue(as[0].v, depth+1)
		}
	case "attribute":
		if m := optionRef.FindStringSubmatch(s.text(n)); m != nil {
			if d, ok := s.argDefaults[m[1]].(int64); ok {
				return d, true
			}
		}
	case "binary_operator":
		op := n.ChildByFieldName("operator")
		x, ok1 := s.intValue(n.ChildByFieldName("left"), depth+1)
		y, ok2 := s.intValue(n.ChildByFieldName("right"), depth+1)
		if op == nil || !ok1 || !ok2 || x < -1<<31 || x > 1<<31 || y < -1<<31 || y > 1<<31 {
			return 0, false
		}
		switch s.text(op) {
		case "+":
			return x + y, true
		case "-":
			return x - y, true
		case "*":
			return x * y, true
		}
	}
	return 0, false
}
