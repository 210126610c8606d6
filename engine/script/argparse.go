//go:build cgo

package script

import (
	"regexp"
	"slices"
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
	if r, ok := kw["required"]; ok && r.Value != false {
		s.argDefaults[dest] = nil // always given: the default is never used
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
// bounds are known, then every loop's Runs.
func (s *scanner) tripCounts() {
	for _, r := range s.ranges {
		args := namedChildren(r.call.ChildByFieldName("arguments"))
		if len(args) == 0 || len(args) > 3 {
			continue
		}
		b := make([]int64, len(args))
		known := true
		for i, a := range args {
			b[i], known = s.intValue(a, r.call, 0)
			if !known {
				break
			}
		}
		if !known {
			continue
		}
		const bound = 1 << 40 // past this a bound is no bound (and lo - hi could wrap)
		if slices.ContainsFunc(b, func(v int64) bool { return v > bound || v < -bound }) {
			continue
		}
		lo, hi, step := int64(0), b[0], int64(1)
		if len(b) > 1 {
			lo, hi = b[0], b[1]
		}
		if len(b) > 2 {
			step = b[2]
		}
		switch {
		case step > 0 && hi > lo:
			s.f.Loops[r.loop].Trips = (hi - lo + step - 1) / step
		case step < 0 && lo > hi:
			s.f.Loops[r.loop].Trips = (lo - hi - step - 1) / -step
		}
	}
	// Loops are listed before the loops inside them.
	const most = 1 << 40 // past this a count is no count
	for i := range s.f.Loops {
		l := &s.f.Loops[i]
		if l.Trips > most {
			l.Trips = 0
		}
		l.Runs = l.Trips
		if p := l.Parent; p >= 0 && l.Kind != "function" {
			if pr := s.f.Loops[p].Runs; pr == 0 || l.Runs > most/pr {
				l.Runs = 0
			} else {
				l.Runs *= pr
			}
		}
	}
}

// bindings collects the attributes the script assigns (args.epochs =
// 300, cfg.epochs *= 2: an option's default no longer tells its value)
// and the names it binds other than by name = value (scanner.rebound).
func (s *scanner) bindings(n *sitter.Node) {
	if s.setAttrs == nil {
		s.setAttrs, s.rebound = map[string]bool{}, map[string][]rebinding{}
	}
	var names []*sitter.Node
	switch n.Kind() {
	case "assignment", "augmented_assignment":
		if l := n.ChildByFieldName("left"); l != nil && l.Kind() == "attribute" {
			s.setAttrs[s.text(l)] = true
		} else if l != nil && n.Kind() == "augmented_assignment" {
			names = append(names, l)
		}
	case "for_statement", "for_in_clause":
		names = append(names, n.ChildByFieldName("left"))
	case "as_pattern":
		names = append(names, n.ChildByFieldName("alias"))
	case "named_expression":
		names = append(names, n.ChildByFieldName("name"))
	}
	for _, t := range names {
		if t != nil {
			s.reboundNames(t)
		}
	}
	for _, c := range children(n) {
		s.bindings(c)
	}
}

// reboundNames records the identifiers of target t (a name, or those in a
// tuple, list or starred target) as bound where they stand.
func (s *scanner) reboundNames(t *sitter.Node) {
	if t.Kind() == "identifier" {
		s.rebound[s.text(t)] = append(s.rebound[s.text(t)], rebinding{int(t.StartPosition().Row) + 1, t.StartByte()})
		return
	}
	if t.Kind() == "attribute" || t.Kind() == "subscript" {
		return
	}
	for _, c := range namedChildren(t) {
		s.reboundNames(c)
	}
}

// intValue evaluates an integer expression of literals, module-level
// names assigned one integer literal (and not rebound in the def that
// reads them), command-line option defaults (of a namespace assigned only
// from parse_args and an option never assigned) and + - * and unary
// minus; at is the node that reads it, depth bounds the recursion.
func (s *scanner) intValue(n, at *sitter.Node, depth int) (int64, bool) {
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
			return s.intValue(c[0], at, depth+1)
		}
	case "unary_operator":
		if op := n.ChildByFieldName("operator"); op != nil && s.text(op) == "-" {
			v, ok := s.intValue(n.ChildByFieldName("argument"), at, depth+1)
			return -v, ok
		}
	case "identifier":
		name := s.text(n)
		as := s.allAssigns[name]
		if len(as) != 1 || as[0].idx >= 0 || as[0].v.Kind() != "integer" || len(s.rebound[name]) > 0 {
			return 0, false
		}
		line := int(at.StartPosition().Row) + 1
		if _, ok := s.f.EnclosingFunction(int(as[0].v.StartPosition().Row) + 1); ok {
			return 0, false // assigned in a def: another def's value
		}
		if fn, ok := s.f.EnclosingFunction(line); ok && !s.freeName(fn, name) {
			return 0, false
		}
		return s.intValue(as[0].v, at, depth+1)
	case "attribute":
		m := optionRef.FindStringSubmatch(s.text(n))
		if m == nil || s.setAttrs[s.text(n)] || !s.parsedOptions(n) {
			return 0, false
		}
		if d, ok := s.argDefaults[m[1]].(int64); ok {
			return d, true
		}
	case "binary_operator":
		op := n.ChildByFieldName("operator")
		x, ok1 := s.intValue(n.ChildByFieldName("left"), at, depth+1)
		y, ok2 := s.intValue(n.ChildByFieldName("right"), at, depth+1)
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

// parsedOptions reports whether an option read (args.epochs) reads a
// namespace every assignment of which is parser.parse_args() (or
// parse_known_args, its first element): not a config loaded from a file.
func (s *scanner) parsedOptions(n *sitter.Node) bool {
	root := n
	for root.Kind() == "attribute" {
		if root = root.ChildByFieldName("object"); root == nil {
			return false
		}
	}
	if root.Kind() != "identifier" {
		return false
	}
	as := s.allAssigns[s.text(root)]
	if len(as) == 0 {
		return false
	}
	for _, a := range as {
		if a.v.Kind() != "call" {
			return false
		}
		if name := s.calleeName(a.v); name != ".parse_args" && !(name == ".parse_known_args" && a.idx == 0) {
			return false
		}
	}
	return true
}
