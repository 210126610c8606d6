package script

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	sitter "github.com/tree-sitter/go-tree-sitter"
	python "github.com/tree-sitter/tree-sitter-python/bindings/go"
)

// ScanFile reads and scans one Python file. A read error is returned as an
// error naming the file; syntax errors are Diagnostics in the Facts.
func ScanFile(path string) (*Facts, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read script %s: %w", path, err)
	}
	return Scan(path, b)
}

// Scan parses src (Python source; file is the name facts carry) and
// extracts its facts. It returns an error only when tree-sitter cannot be
// set up; syntax errors give partial facts and Diagnostics.
func Scan(file string, src []byte) (*Facts, error) {
	p := sitter.NewParser()
	defer p.Close()
	if err := p.SetLanguage(sitter.NewLanguage(python.Language())); err != nil {
		return nil, fmt.Errorf("load python grammar: %w", err)
	}
	tree := p.Parse(src, nil)
	if tree == nil {
		return nil, fmt.Errorf("parse script %s: tree-sitter returned no tree", file)
	}
	defer tree.Close()
	s := &scanner{
		src:     src,
		f:       newFacts(file, src),
		imports: map[string]string{},
		loaders: map[string]bool{},
		optims:  map[string]bool{},
		profs:   map[string]int{},
	}
	root := tree.RootNode()
	s.prepass(root)
	s.walk(root, ctx{loop: -1, stepLoop: -1, profiler: -1})
	s.finish()
	return s.f, nil
}

func newFacts(file string, src []byte) *Facts {
	lines := strings.Count(string(src), "\n")
	if len(src) > 0 && src[len(src)-1] != '\n' {
		lines++
	}
	return &Facts{
		SchemaVersion: SchemaVersion, File: file, Lines: lines, Source: src,
		Imports: []Import{}, Loops: []Loop{}, Calls: []Call{}, DataLoaders: []DataLoader{},
		Optimizers: []Optimizer{}, Profilers: []Profiler{}, Ignores: []Ignore{}, Diagnostics: []Diagnostic{},
		Features: Features{
			Autocast: []Use{}, GradScaler: []Use{}, CudnnBenchmark: []Use{}, Compile: []Use{},
			JitScript: []Use{}, DataParallel: []Use{}, DDP: []Use{}, Conv: []Use{}, CUDA: []Use{},
		},
	}
}

type scanner struct {
	src     []byte
	f       *Facts
	imports map[string]string // local name -> canonical dotted name
	loaders map[string]bool   // names assigned from DataLoader(...)
	optims  map[string]bool   // names assigned from torch.optim.* or GradScaler
	profs   map[string]int    // profiler var -> index in f.Profilers
	// tensors holds, per step loop index, the names assigned from calls
	// (or bound as loop targets) in it.
	tensors map[int]map[string]bool
	// lineStarts are the byte offsets where lines begin (built on first use).
	lineStarts []int
}

// ctx is the walk's position: enclosing loop, step loop, and whether an
// if or another loop lies between the node and the step loop.
type ctx struct {
	loop        int
	stepLoop    int
	innerLoop   bool
	conditional bool
	profiler    int // index of the enclosing `with profile(...)` block, -1 none
	inProfiler  bool
}

func (s *scanner) text(n *sitter.Node) string { return n.Utf8Text(s.src) }

func short(t string) string {
	t = strings.Join(strings.Fields(t), " ")
	if utf8.RuneCountInString(t) > 80 {
		r := []rune(t)
		return string(r[:77]) + "..."
	}
	return t
}

// col converts a tree-sitter point (row, byte column) to a 1-based code
// point column on that row.
func (s *scanner) col(p sitter.Point) int {
	if s.lineStarts == nil {
		s.lineStarts = []int{0}
		for i, c := range s.src {
			if c == '\n' {
				s.lineStarts = append(s.lineStarts, i+1)
			}
		}
	}
	row := min(int(p.Row), len(s.lineStarts)-1)
	start := s.lineStarts[row]
	end := min(start+int(p.Column), len(s.src))
	return utf8.RuneCount(s.src[start:end]) + 1
}

func (s *scanner) pos(n *sitter.Node) Pos {
	a, b := n.StartPosition(), n.EndPosition()
	return Pos{Line: int(a.Row) + 1, Column: s.col(a), EndLine: int(b.Row) + 1, EndColumn: s.col(b)}
}

func children(n *sitter.Node) []*sitter.Node {
	out := make([]*sitter.Node, 0, n.ChildCount())
	for i := uint(0); i < n.ChildCount(); i++ {
		out = append(out, n.Child(i))
	}
	return out
}

func namedChildren(n *sitter.Node) []*sitter.Node {
	out := make([]*sitter.Node, 0, n.NamedChildCount())
	for i := uint(0); i < n.NamedChildCount(); i++ {
		out = append(out, n.NamedChild(i))
	}
	return out
}

var ignoreRE = regexp.MustCompile(`^#\s*stepdoctor:\s*ignore\[([^\]]*)\]\s*(.*)$`)

// prepass collects imports, ignore comments and the names bound to
// DataLoaders, optimizers and profilers, so that the main walk can resolve
// them wherever they are used.
func (s *scanner) prepass(n *sitter.Node) {
	switch n.Kind() {
	case "import_statement":
		for _, c := range namedChildren(n) {
			switch c.Kind() {
			case "dotted_name":
				name := s.text(c)
				root, _, _ := strings.Cut(name, ".")
				s.addImport(root, root, c)
			case "aliased_import":
				if nm, al := c.ChildByFieldName("name"), c.ChildByFieldName("alias"); nm != nil && al != nil {
					s.addImport(s.text(al), s.text(nm), c)
				}
			}
		}
	case "import_from_statement":
		mod := n.ChildByFieldName("module_name")
		if mod != nil && mod.Kind() == "dotted_name" {
			base := s.text(mod)
			for _, c := range n.ChildrenByFieldName("name", n.Walk()) {
				switch c.Kind() {
				case "dotted_name":
					s.addImport(s.text(&c), base+"."+s.text(&c), &c)
				case "aliased_import":
					if nm, al := c.ChildByFieldName("name"), c.ChildByFieldName("alias"); nm != nil && al != nil {
						s.addImport(s.text(al), base+"."+s.text(nm), &c)
					}
				}
			}
		}
	case "comment":
		if m := ignoreRE.FindStringSubmatch(strings.TrimSpace(s.text(n))); m != nil {
			var ids []string
			for _, id := range strings.Split(m[1], ",") {
				if id = strings.TrimSpace(id); id != "" {
					ids = append(ids, id)
				}
			}
			p := s.pos(n)
			lineStart := strings.TrimSpace(s.f.LineText(p.Line))
			s.f.Ignores = append(s.f.Ignores, Ignore{
				Rules: ids, Reason: strings.TrimSpace(m[2]), Standalone: strings.HasPrefix(lineStart, "#"), Pos: p,
			})
		}
	case "assignment":
		if l, r := n.ChildByFieldName("left"), n.ChildByFieldName("right"); l != nil && r != nil && r.Kind() == "call" {
			name := s.calleeName(r)
			switch {
			case isLoader(name):
				s.loaders[s.lastName(l)] = true
			case isOptimizer(name), strings.HasSuffix(name, ".GradScaler"):
				s.optims[s.lastName(l)] = true
			}
		}
	case "ERROR":
		s.f.Diagnostics = append(s.f.Diagnostics, Diagnostic{Kind: "syntax-error", Message: "syntax error: facts in this region are missing", Pos: s.pos(n)})
	}
	if n.IsMissing() {
		s.f.Diagnostics = append(s.f.Diagnostics, Diagnostic{Kind: "missing", Message: "syntax error: missing " + n.Kind(), Pos: s.pos(n)})
	}
	for _, c := range children(n) {
		s.prepass(c)
	}
}

func (s *scanner) addImport(local, name string, n *sitter.Node) {
	s.imports[local] = name
	s.f.Imports = append(s.f.Imports, Import{Local: local, Name: name, Pos: s.pos(n)})
}

// builtins are the Python builtins that keep their own name.
var builtins = map[string]bool{
	"print": true, "len": true, "range": true, "enumerate": true, "zip": true, "iter": true,
	"next": true, "int": true, "float": true, "str": true, "round": true, "sum": true, "list": true,
	"dict": true, "tuple": true, "set": true, "min": true, "max": true, "abs": true, "isinstance": true,
	"format": true, "repr": true, "bool": true, "sorted": true, "open": true,
}

// resolve returns the canonical dotted name of an identifier or attribute
// chain rooted at an import ("F.relu" -> "torch.nn.functional.relu"), the
// builtin's name, or "" when it does not resolve.
func (s *scanner) resolve(n *sitter.Node) string {
	switch n.Kind() {
	case "identifier":
		t := s.text(n)
		if c, ok := s.imports[t]; ok {
			return c
		}
		if builtins[t] {
			return t
		}
	case "attribute":
		obj, attr := n.ChildByFieldName("object"), n.ChildByFieldName("attribute")
		if obj == nil || attr == nil {
			return ""
		}
		if base := s.resolve(obj); base != "" && !builtins[base] {
			return base + "." + s.text(attr)
		}
	}
	return ""
}

// lastName is the final identifier of a name or attribute chain.
func (s *scanner) lastName(n *sitter.Node) string {
	switch n.Kind() {
	case "identifier":
		return s.text(n)
	case "attribute":
		if a := n.ChildByFieldName("attribute"); a != nil {
			return s.text(a)
		}
	}
	return ""
}

// calleeName is the canonical name of a call's function, or ".method".
func (s *scanner) calleeName(call *sitter.Node) string {
	fn := call.ChildByFieldName("function")
	if fn == nil {
		return ""
	}
	if r := s.resolve(fn); r != "" {
		return r
	}
	switch fn.Kind() {
	case "attribute":
		if a := fn.ChildByFieldName("attribute"); a != nil {
			return "." + s.text(a)
		}
	case "identifier":
		return s.text(fn)
	}
	return ""
}

func (s *scanner) receiver(call *sitter.Node) *sitter.Node {
	fn := call.ChildByFieldName("function")
	if fn == nil || fn.Kind() != "attribute" || s.resolve(fn) != "" {
		return nil
	}
	return fn.ChildByFieldName("object")
}

func (s *scanner) value(n *sitter.Node) Value {
	v := Value{Present: true, Text: short(s.text(n)), Pos: s.pos(n)}
	switch n.Kind() {
	case "true":
		v.Kind, v.Value = "bool", true
	case "false":
		v.Kind, v.Value = "bool", false
	case "none":
		v.Kind = "none"
	case "integer":
		if i, err := strconv.ParseInt(strings.ReplaceAll(s.text(n), "_", ""), 0, 64); err == nil {
			v.Kind, v.Value = "int", i
		} else {
			v.Kind = "expr"
		}
	case "float":
		if f, err := strconv.ParseFloat(strings.ReplaceAll(s.text(n), "_", ""), 64); err == nil {
			v.Kind, v.Value = "float", f
		} else {
			v.Kind = "expr"
		}
	case "string":
		t := s.text(n)
		if uq, err := strconv.Unquote(t); err == nil {
			v.Kind, v.Value = "string", uq
		} else if len(t) >= 2 && (t[0] == '\'' || t[0] == '"') && t[len(t)-1] == t[0] && !strings.ContainsAny(t[1:len(t)-1], "'\"\\{") {
			v.Kind, v.Value = "string", t[1:len(t)-1]
		} else {
			v.Kind = "expr"
		}
	case "identifier", "attribute":
		v.Kind = "name"
	case "unary_operator":
		if arg := n.ChildByFieldName("argument"); arg != nil && strings.HasPrefix(s.text(n), "-") {
			inner := s.value(arg)
			switch x := inner.Value.(type) {
			case int64:
				v.Kind, v.Value = "int", -x
				return v
			case float64:
				v.Kind, v.Value = "float", -x
				return v
			}
		}
		v.Kind = "expr"
	default:
		v.Kind = "expr"
	}
	return v
}

// args splits a call's arguments into positional values, keyword values
// and whether **kwargs is passed.
func (s *scanner) args(call *sitter.Node) ([]Value, map[string]Value, bool) {
	pos := []Value{}
	kw := map[string]Value{}
	splat := false
	al := call.ChildByFieldName("arguments")
	if al == nil || al.Kind() != "argument_list" {
		return pos, kw, splat
	}
	for _, a := range namedChildren(al) {
		switch a.Kind() {
		case "keyword_argument":
			if nm, v := a.ChildByFieldName("name"), a.ChildByFieldName("value"); nm != nil && v != nil {
				kw[s.text(nm)] = s.value(v)
			}
		case "dictionary_splat":
			splat = true
		case "comment":
		default:
			pos = append(pos, s.value(a))
		}
	}
	return pos, kw, splat
}

// param returns the argument for a parameter passed by keyword or at
// position i (-1: keyword-only).
func param(pos []Value, kw map[string]Value, name string, i int) Value {
	if v, ok := kw[name]; ok {
		return v
	}
	if i >= 0 && i < len(pos) {
		return pos[i]
	}
	return Value{}
}

// assignedName returns the plain name a node is assigned to (x = node,
// x: T = node) or bound by `with node as x`, "" otherwise.
func (s *scanner) assignedName(n *sitter.Node) string {
	p := n.Parent()
	if p == nil {
		return ""
	}
	switch p.Kind() {
	case "assignment":
		if r := p.ChildByFieldName("right"); r != nil && r.Id() == n.Id() {
			if l := p.ChildByFieldName("left"); l != nil && (l.Kind() == "identifier" || l.Kind() == "attribute") {
				return s.lastName(l)
			}
		}
	case "as_pattern":
		if al := p.ChildByFieldName("alias"); al != nil {
			for _, c := range namedChildren(al) {
				if c.Kind() == "identifier" {
					return s.text(c)
				}
			}
			return strings.TrimSpace(s.text(al))
		}
	}
	return ""
}

func isLoader(name string) bool {
	return name == "torch.utils.data.DataLoader" || name == "torch.utils.data.dataloader.DataLoader" ||
		strings.HasSuffix(name, ".DataLoader") || name == "DataLoader"
}

var fusedOptims = []string{"Adam", "AdamW", "SGD", "Adagrad", "Adamax", "NAdam", "RAdam", "RMSprop", "Rprop", "ASGD", "Adadelta"}

func isOptimizer(name string) bool {
	rest, ok := strings.CutPrefix(name, "torch.optim.")
	return ok && slices.Contains(fusedOptims, rest)
}

func isProfiler(name string) bool {
	return name == "torch.profiler.profile" || name == "torch.autograd.profiler.profile" ||
		name == "torch.autograd.profile"
}

// unwrapIter strips enumerate(), tqdm(), iter(), zip() and similar
// wrappers from a for loop's iterable (first argument).
func (s *scanner) unwrapIter(n *sitter.Node) *sitter.Node {
	for n != nil && n.Kind() == "call" {
		name := s.calleeName(n)
		base := name[strings.LastIndex(name, ".")+1:]
		switch base {
		case "enumerate", "tqdm", "iter", "zip", "trange", "track", "islice":
		default:
			return n
		}
		al := n.ChildByFieldName("arguments")
		if al == nil || al.NamedChildCount() == 0 {
			return n
		}
		n = al.NamedChild(0)
	}
	return n
}

func (s *scanner) overLoader(it *sitter.Node) bool {
	if it == nil {
		return false
	}
	switch it.Kind() {
	case "identifier", "attribute":
		name := s.lastName(it)
		return s.loaders[name] || strings.Contains(strings.ToLower(name), "loader")
	case "call":
		return isLoader(s.calleeName(it))
	}
	return false
}

// trainsDirectly reports whether body calls .backward() or an optimizer's
// .step() outside nested loops (function and class bodies excluded).
func (s *scanner) trainsDirectly(n *sitter.Node) bool {
	switch n.Kind() {
	case "for_statement", "while_statement", "function_definition", "class_definition":
		return false
	case "call":
		name := s.calleeName(n)
		if name == ".backward" {
			return true
		}
		if name == ".step" {
			if r := s.receiver(n); r != nil {
				rn := s.lastName(r)
				if s.optims[rn] || strings.Contains(strings.ToLower(rn), "opt") || strings.Contains(strings.ToLower(rn), "scaler") {
					return true
				}
			}
		}
	}
	for _, c := range children(n) {
		if s.trainsDirectly(c) {
			return true
		}
	}
	return false
}

// collectTensors records names assigned from calls (or bound as the loop
// target) inside a step loop, not descending into nested functions.
func (s *scanner) collectTensors(loop *sitter.Node, set map[string]bool) {
	if l := loop.ChildByFieldName("left"); l != nil {
		s.names(l, set)
	}
	var visit func(n *sitter.Node)
	visit = func(n *sitter.Node) {
		switch n.Kind() {
		case "function_definition", "class_definition":
			return
		case "assignment", "augmented_assignment":
			l, r := n.ChildByFieldName("left"), n.ChildByFieldName("right")
			if l != nil && r != nil && s.tensorValued(r) {
				s.names(l, set)
			}
		}
		for _, c := range children(n) {
			visit(c)
		}
	}
	if b := loop.ChildByFieldName("body"); b != nil {
		visit(b)
	}
}

// tensorValued reports whether an expression likely yields a tensor: it
// contains a call that is not a Python builtin nor .item() / .tolist() /
// .numpy().
func (s *scanner) tensorValued(n *sitter.Node) bool {
	if n.Kind() == "call" {
		name := s.calleeName(n)
		switch {
		case name == ".item" || name == ".tolist" || name == ".numpy" || builtins[name]:
			return false
		case name != "":
			return true
		}
	}
	for _, c := range namedChildren(n) {
		if s.tensorValued(c) {
			return true
		}
	}
	return false
}

func (s *scanner) names(n *sitter.Node, set map[string]bool) {
	switch n.Kind() {
	case "identifier":
		set[s.text(n)] = true
	case "pattern_list", "tuple_pattern", "list_pattern", "tuple", "list", "parenthesized_expression":
		for _, c := range namedChildren(n) {
			s.names(c, set)
		}
	}
}

// argNames lists identifiers used as (parts of) arguments, including in
// f-string interpolations, without descending into calls' own arguments.
func (s *scanner) argNames(n *sitter.Node, out *[]string) {
	switch n.Kind() {
	case "identifier":
		*out = append(*out, s.text(n))
		return
	case "call", "attribute", "keyword_argument", "lambda":
		if n.Kind() == "keyword_argument" {
			if v := n.ChildByFieldName("value"); v != nil {
				s.argNames(v, out)
			}
		}
		return
	}
	for _, c := range namedChildren(n) {
		s.argNames(c, out)
	}
}

func (s *scanner) walk(n *sitter.Node, c ctx) {
	switch n.Kind() {
	case "for_statement", "while_statement":
		s.loop(n, c)
		return
	case "if_statement", "conditional_expression", "elif_clause", "else_clause":
		if c.stepLoop >= 0 && n.Kind() == "if_statement" {
			// The condition runs every step; the branches do not.
			cond := n.ChildByFieldName("condition")
			for _, ch := range children(n) {
				cc := c
				if cond == nil || ch.Id() != cond.Id() {
					cc.conditional = true
				}
				s.walk(ch, cc)
			}
			return
		}
		if c.stepLoop >= 0 {
			c.conditional = true
		}
	case "function_definition", "class_definition":
		c = ctx{loop: -1, stepLoop: -1, profiler: -1}
	case "with_statement":
		s.with(n, c)
		return
	case "call":
		s.call(n, c)
	case "assignment":
		s.assignment(n)
	}
	for _, ch := range children(n) {
		s.walk(ch, c)
	}
}

func (s *scanner) loop(n *sitter.Node, c ctx) {
	l := Loop{Kind: "for", Parent: c.loop, Pos: s.pos(n)}
	// Point at the loop header only.
	if b := n.ChildByFieldName("body"); b != nil {
		l.EndLine = int(b.StartPosition().Row) + 1
	}
	if n.Kind() == "while_statement" {
		l.Kind = "while"
		if cond := n.ChildByFieldName("condition"); cond != nil {
			l.Iter = short(s.text(cond))
		}
	} else if r := n.ChildByFieldName("right"); r != nil {
		it := s.unwrapIter(r)
		l.Iter = short(s.text(it))
		l.OverLoader = s.overLoader(it)
	}
	if b := n.ChildByFieldName("body"); b != nil {
		l.Trains = s.trainsDirectly(b)
	}
	l.Step = l.OverLoader || l.Trains
	idx := len(s.f.Loops)
	s.f.Loops = append(s.f.Loops, l)
	inner := c
	inner.loop = idx
	if l.Step {
		inner.stepLoop = idx
		inner.innerLoop = false
		inner.conditional = false
		if s.tensors == nil {
			s.tensors = map[int]map[string]bool{}
		}
		set := map[string]bool{}
		s.collectTensors(n, set)
		s.tensors[idx] = set
		if c.profiler >= 0 && s.f.Profilers[c.profiler].StepLoopInside < 0 {
			s.f.Profilers[c.profiler].StepLoopInside = idx
			s.f.Profilers[c.profiler].WrapsStepLoop = true
		}
	} else if c.stepLoop >= 0 {
		inner.innerLoop = true
	}
	if c.profiler >= 0 {
		s.f.Profilers[c.profiler].WrapsLoop = true
	}
	for _, ch := range children(n) {
		if r := n.ChildByFieldName("right"); r != nil && ch.Id() == r.Id() {
			s.walk(ch, c) // the iterable is evaluated once, outside the loop
			continue
		}
		s.walk(ch, inner)
	}
}

func (s *scanner) with(n *sitter.Node, c ctx) {
	inner := c
	for _, ch := range children(n) {
		if ch.Kind() != "with_clause" {
			continue
		}
		for _, item := range namedChildren(ch) {
			v := item.ChildByFieldName("value")
			if v == nil {
				continue
			}
			call := v
			if v.Kind() == "as_pattern" && v.NamedChildCount() > 0 {
				call = v.NamedChild(0)
			}
			if call.Kind() == "call" && isProfiler(s.calleeName(call)) {
				before := len(s.f.Profilers)
				s.walk(ch, c)
				if len(s.f.Profilers) > before {
					inner.profiler = before
				}
				goto body
			}
		}
		s.walk(ch, c)
	}
body:
	if b := n.ChildByFieldName("body"); b != nil {
		s.walk(b, inner)
	}
}

func (s *scanner) call(n *sitter.Node, c ctx) {
	name := s.calleeName(n)
	pos, kw, splat := s.args(n)
	call := Call{
		Name: name, Args: pos, Keywords: kw, KwargsSplat: splat, Loop: c.loop, StepLoop: c.stepLoop,
		InnerLoop: c.innerLoop, Conditional: c.conditional, Text: short(s.text(n)), Pos: s.pos(n),
		ReceiverKeywords: []string{}, TensorArgs: []string{},
	}
	// Point a method call at the method name, not the start of its receiver.
	if fn := n.ChildByFieldName("function"); fn != nil && fn.Kind() == "attribute" {
		if a := fn.ChildByFieldName("attribute"); a != nil && strings.HasPrefix(name, ".") {
			p := s.pos(a)
			call.Line, call.Column = p.Line, p.Column
		}
	}
	if r := s.receiver(n); r != nil {
		call.Receiver = short(s.text(r))
		if r.Kind() == "call" {
			call.ReceiverCall = s.calleeName(r)
			_, rkw, _ := s.args(r)
			for k := range rkw {
				call.ReceiverKeywords = append(call.ReceiverKeywords, k)
			}
			slices.Sort(call.ReceiverKeywords)
		}
	}
	if p := n.Parent(); p != nil && p.Kind() == "assignment" {
		if l := p.ChildByFieldName("left"); l != nil && l.Kind() == "identifier" {
			var used []string
			if al := n.ChildByFieldName("arguments"); al != nil {
				s.argNames(al, &used)
			}
			call.Accumulates = slices.Contains(used, s.text(l))
		}
	}
	if c.stepLoop >= 0 {
		var used []string
		if al := n.ChildByFieldName("arguments"); al != nil {
			s.argNames(al, &used)
		}
		for _, u := range used {
			if s.tensors[c.stepLoop][u] && !slices.Contains(call.TensorArgs, u) {
				call.TensorArgs = append(call.TensorArgs, u)
			}
		}
	}
	s.f.Calls = append(s.f.Calls, call)
	use := Use{Name: name, Pos: call.Pos}
	ft := &s.f.Features
	switch {
	case isLoader(name):
		s.f.DataLoaders = append(s.f.DataLoaders, DataLoader{
			Var:               s.assignedName(n),
			BatchSize:         param(pos, kw, "batch_size", 1),
			NumWorkers:        param(pos, kw, "num_workers", 5),
			PinMemory:         param(pos, kw, "pin_memory", 7),
			PersistentWorkers: param(pos, kw, "persistent_workers", -1),
			PrefetchFactor:    param(pos, kw, "prefetch_factor", -1),
			KwargsSplat:       splat,
			Pos:               call.Pos,
		})
	case isOptimizer(name):
		s.f.Optimizers = append(s.f.Optimizers, Optimizer{
			Name: name, Var: s.assignedName(n), Foreach: param(pos, kw, "foreach", -1),
			Fused: param(pos, kw, "fused", -1), KwargsSplat: splat, Pos: call.Pos,
		})
	case isProfiler(name):
		pr := Profiler{
			Name: name, Var: s.assignedName(n), Schedule: param(pos, kw, "schedule", -1),
			OnTraceReady: param(pos, kw, "on_trace_ready", -1), ProfileMemory: param(pos, kw, "profile_memory", -1),
			WithStack: param(pos, kw, "with_stack", -1), RecordShapes: param(pos, kw, "record_shapes", -1),
			KwargsSplat: splat, StepLoopInside: -1, Pos: call.Pos,
		}
		if pr.OnTraceReady.Present && strings.Contains(pr.OnTraceReady.Text, "tensorboard_trace_handler") {
			pr.TraceHandler = true
		}
		if pr.Var != "" {
			s.profs[pr.Var] = len(s.f.Profilers)
		}
		s.f.Profilers = append(s.f.Profilers, pr)
	case strings.HasSuffix(name, "autocast") && strings.HasPrefix(name, "torch."):
		ft.Autocast = append(ft.Autocast, use)
	case strings.HasSuffix(name, ".GradScaler") && strings.HasPrefix(name, "torch."):
		ft.GradScaler = append(ft.GradScaler, use)
	case name == "torch.compile":
		ft.Compile = append(ft.Compile, use)
	case name == "torch.jit.script" || name == "torch.jit.trace":
		ft.JitScript = append(ft.JitScript, use)
	case name == "torch.nn.DataParallel" || name == "torch.nn.parallel.DataParallel":
		ft.DataParallel = append(ft.DataParallel, use)
	case strings.HasSuffix(name, "DistributedDataParallel") || strings.HasSuffix(name, "FullyShardedDataParallel") || name == "torch.distributed.fsdp.fully_shard":
		ft.DDP = append(ft.DDP, use)
	case name == "torch.nn.Conv1d" || name == "torch.nn.Conv2d" || name == "torch.nn.Conv3d" ||
		strings.HasPrefix(name, "torchvision.models."):
		ft.Conv = append(ft.Conv, use)
	case name == ".cuda" || strings.HasPrefix(name, "torch.cuda."):
		ft.CUDA = append(ft.CUDA, use)
	case name == "torch.device" || name == ".to":
		for _, v := range append(slices.Clone(pos), kw["device"]) {
			if str, ok := v.Value.(string); ok && strings.HasPrefix(str, "cuda") {
				ft.CUDA = append(ft.CUDA, use)
				break
			}
		}
	}
	if strings.HasPrefix(name, ".") {
		if r := s.receiver(n); r != nil {
			if idx, ok := s.profs[s.lastName(r)]; ok {
				switch name {
				case ".export_chrome_trace":
					s.f.Profilers[idx].ExportsTrace = true
				case ".step":
					s.f.Profilers[idx].CallsStep = true
				}
			}
		}
	}
}

// assignment records assignments to torch.backends.cudnn.benchmark.
func (s *scanner) assignment(n *sitter.Node) {
	l, r := n.ChildByFieldName("left"), n.ChildByFieldName("right")
	if l == nil || r == nil {
		return
	}
	lt := strings.Join(strings.Fields(s.text(l)), "")
	if s.resolve(l) == "torch.backends.cudnn.benchmark" || strings.HasSuffix(lt, "cudnn.benchmark") {
		s.f.Features.CudnnBenchmark = append(s.f.Features.CudnnBenchmark, Use{Name: "torch.backends.cudnn.benchmark", Value: s.value(r), Pos: s.pos(n)})
	}
}

// finish sorts the comment-derived lists by position.
func (s *scanner) finish() {
	slices.SortStableFunc(s.f.Ignores, func(a, b Ignore) int { return a.Line - b.Line })
	slices.SortStableFunc(s.f.Diagnostics, func(a, b Diagnostic) int {
		if a.Line != b.Line {
			return a.Line - b.Line
		}
		return a.Column - b.Column
	})
}
