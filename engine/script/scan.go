//go:build cgo

// The tree-sitter scanner: the only part of stepdoctor that needs cgo.
// Without cgo, scan_nocgo.go stands in for it.

package script

import (
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	sitter "github.com/tree-sitter/go-tree-sitter"
	python "github.com/tree-sitter/tree-sitter-python/bindings/go"
)

// Available is true when this build has the Python parser (tree-sitter,
// through cgo).
const Available = true

// ScanFile reads and scans one Python file. A read error, or a file over
// MaxScriptBytes, is returned as an error naming the file; syntax errors
// are Diagnostics in the Facts.
func ScanFile(path string) (*Facts, error) {
	b, err := readCapped(path)
	if err != nil {
		return nil, fmt.Errorf("read script %s: %w", path, err)
	}
	return scanIn(path, b, filepath.Dir(path))
}

// Scan parses src (Python source; file is the name facts carry) and
// extracts its facts. It returns an error only when tree-sitter cannot be
// set up; syntax errors give partial facts and Diagnostics.
func Scan(file string, src []byte) (*Facts, error) {
	return scanIn(file, src, "")
}

// parse parses Python source; the caller closes the tree.
func parse(file string, src []byte) (*sitter.Tree, error) {
	p := sitter.NewParser()
	defer p.Close()
	if err := p.SetLanguage(sitter.NewLanguage(python.Language())); err != nil {
		return nil, fmt.Errorf("load python grammar: %w", err)
	}
	tree := p.Parse(src, nil)
	if tree == nil {
		return nil, fmt.Errorf("parse script %s: tree-sitter returned no tree", file)
	}
	return tree, nil
}

// cudaString reports whether v is a "cuda..." string, written in place or
// through a name assigned one (device = "cuda").
func (s *scanner) cudaString(v Value) bool {
	if str, ok := v.Value.(string); ok {
		return strings.HasPrefix(str, "cuda")
	}
	if v.Kind != "name" {
		return false
	}
	a, ok := s.assigns[v.Text]
	if !ok || a.Kind() != "string" {
		return false
	}
	str, ok := s.value(a).Value.(string)
	return ok && strings.HasPrefix(str, "cuda")
}

// scanIn is Scan; with dir set (the script's directory), imports of modules
// in that directory are resolved and the modules importing this one are
// read (see scanner.siblings).
func scanIn(file string, src []byte, dir string) (*Facts, error) {
	src = loneCRToLF(src)
	tree, err := parse(file, src)
	if err != nil {
		return nil, err
	}
	defer tree.Close()
	s := newScanner(file, src)
	root := tree.RootNode()
	s.classDefs(root)
	s.prepass(root)
	s.bindings(root)
	s.classSizes()
	if dir != "" {
		s.siblings(dir)
	}
	s.functions(root)
	s.addImported()
	s.walk(root, ctx{loop: -1, stepLoop: -1, profiler: -1})
	s.stepFunctions(root)
	s.attention(root)
	s.placeSiblingConv()
	s.resolveDefaults()
	s.tripCounts()
	s.finish()
	return s.f, nil
}

// loneCRToLF returns src with each carriage return not followed by a line
// feed made a line feed, in a copy when there is one: Python ends a line at
// \r, \n or \r\n, tree-sitter's rows at \n only, so a file saved with
// classic Mac line endings was one line to the scanner. Byte offsets and
// columns are unchanged.
func loneCRToLF(src []byte) []byte {
	var out []byte
	for i, c := range src {
		if c == '\r' && (i+1 == len(src) || src[i+1] != '\n') {
			if out == nil {
				out = append([]byte(nil), src...)
			}
			out[i] = '\n'
		}
	}
	if out == nil {
		return src
	}
	return out
}

// isDeviceName reports whether every assignment the prepass collected for
// name gives it a torch.device(...) of anything but a "cpu" or "meta"
// string, or a "cuda..." string (dev = "cuda:0", or "cuda" if
// torch.cuda.is_available() else "cpu": the GPU where there is one)
// (Call.DeviceArg).
func (s *scanner) isDeviceName(name string) bool {
	as := s.allAssigns[name]
	for _, a := range as {
		if a.idx >= 0 || !s.cudaValue(a.v) && !s.gpuDevice(a.v) {
			return false
		}
	}
	return len(as) > 0
}

// gpuDevice reports whether v is a torch.device(...) call of anything but
// a "cpu" or "meta" string.
func (s *scanner) gpuDevice(v *sitter.Node) bool {
	if v.Kind() != "call" || s.calleeName(v) != "torch.device" {
		return false
	}
	pos, kw, _ := s.args(v)
	str, ok := param(pos, kw, "type", 0).Value.(string)
	return !ok || !strings.HasPrefix(str, "cpu") && str != "meta"
}

// cudaValue reports whether v, or a branch of it (branches), is a
// "cuda..." string literal.
func (s *scanner) cudaValue(v *sitter.Node) bool {
	for _, b := range branches(v) {
		if b.Kind() == "string" {
			if str, ok := s.value(b).Value.(string); ok && strings.HasPrefix(str, "cuda") {
				return true
			}
		}
	}
	return false
}

// branches returns the values v may take: the branches of a conditional
// expression (x if t else y, nested and parenthesized ones followed), or
// v itself.
func branches(v *sitter.Node) []*sitter.Node {
	switch v.Kind() {
	case "conditional_expression": // body, condition, alternative
		var out []*sitter.Node
		for i := uint(0); i < v.NamedChildCount(); i += 2 {
			if c := v.NamedChild(i); c != nil {
				out = append(out, branches(c)...)
			}
		}
		return out
	case "parenthesized_expression":
		if v.NamedChildCount() == 1 {
			return branches(v.NamedChild(0))
		}
	}
	return []*sitter.Node{v}
}

// scanClasses returns what the classes of a module are (its imports
// resolved): for an import of them from another script.
func scanClasses(file string, src []byte) map[string]*classInfo {
	tree, err := parse(file, src)
	if err != nil {
		return nil
	}
	defer tree.Close()
	s := newScanner(file, src)
	root := tree.RootNode()
	s.classDefs(root)
	s.prepass(root)
	s.classSizes()
	for _, ci := range s.classes {
		ci.init = nil // the tree is closed on return
	}
	return s.classes
}

func newScanner(file string, src []byte) *scanner {
	return &scanner{
		src:     src,
		f:       newFacts(file, src),
		imports: map[string]string{},
		loaders: map[string]bool{},
		optims:  map[string]bool{},
		profs:   map[string]int{},
		iters:   map[string]bool{},
		assigns: map[string]*sitter.Node{},
		classes: map[string]*classInfo{},
		modules: map[string]bool{},
		fws:     map[string]bool{},
		prepped: map[string]bool{},

		allAssigns: map[string][]assigned{},
		elemIdx:    map[string]int{},
		defs:       map[string]*sitter.Node{},
		callAt:     map[span]int{},
		loopAt:     map[uint]int{},
		followed:   map[uint]bool{},
		smallOf:    map[string]string{},
		smallNets:  map[uintptr]string{},
	}
}

func newFacts(file string, src []byte) *Facts {
	lines := strings.Count(string(src), "\n")
	if len(src) > 0 && src[len(src)-1] != '\n' {
		lines++
	}
	return &Facts{
		SchemaVersion: SchemaVersion, File: file, Lines: lines, Source: src,
		Imports: []Import{}, Loops: []Loop{}, Calls: []Call{}, Conditions: []Condition{}, DataLoaders: []DataLoader{},
		Optimizers: []Optimizer{}, Profilers: []Profiler{}, Ignores: []Ignore{}, Diagnostics: []Diagnostic{}, Functions: []Function{},
		Features: Features{
			Autocast: []Use{}, GradScaler: []Use{}, CudnnBenchmark: []Use{}, Deterministic: []Use{}, Compile: []Use{},
			JitScript: []Use{}, DataParallel: []Use{}, DDP: []Use{}, Conv: []Use{}, CUDA: []Use{},
			Frameworks: []Use{}, MixedPrecision: []Use{}, Accelerator: []Use{}, GPUHints: []Use{}, CPUOnly: []Use{},
			GradWrites: []Use{}, GradSyncSwitches: []Use{}, ManualAttention: []Use{}, FusedAttention: []Use{},
		},
	}
}

type scanner struct {
	src []byte
	f   *Facts
	// imported are the functions the script imports by name from sibling
	// modules (importFunction), added to f.Functions after its own defs.
	imported []Function
	// siblingSrc holds the sibling modules read (readSibling).
	siblingSrc map[string]siblingRead
	// siblingConv maps an index into f.Features.Conv to the sibling module
	// whose convolution it is, so the walk's calls can place it
	// (placeSiblingConv).
	siblingConv map[int]string
	imports     map[string]string       // local name -> canonical dotted name
	loaders     map[string]bool         // names assigned from DataLoader(...)
	optims      map[string]bool         // names assigned from torch.optim.* or GradScaler
	profs       map[string]int          // profiler var -> index in f.Profilers
	iters       map[string]bool         // names assigned from iter(<loader>)
	assigns     map[string]*sitter.Node // plain name -> the value last assigned to it
	classes     map[string]*classInfo   // classes defined in the script
	modules     map[string]bool         // names assigned from nn.Module constructors
	fws         map[string]bool         // names assigned from Accelerator(...) / Fabric(...)
	prepped     map[string]bool         // framework names whose prepare() / setup_dataloaders() is called
	// allAssigns holds every value assigned to a plain name or self.<attr>,
	// in source order.
	allAssigns map[string][]assigned
	// elemIdx is, for each name in assigns, its position in the tuple
	// target it was last assigned through (-1: the whole value).
	elemIdx map[string]int
	// defs are the module-level functions of the script by name.
	defs map[string]*sitter.Node
	// tensors holds, per step loop index, the names assigned from calls
	// (or bound as loop targets) in it.
	tensors map[int]map[string]bool
	// strong holds, per step loop index, the names that are tensors by
	// the stricter guess of Condition.Tensors.
	strong map[int]map[string]bool
	// callAt and loopAt index s.f.Calls and s.f.Loops by the start byte
	// of their node; followed marks the function bodies already walked as
	// step functions, and follows queues those still to walk (follow.go).
	// smallOf caches optimizerModel's answer per model name, smallNets
	// smallNet's per constructor node.
	smallOf   map[string]string
	smallNets map[uintptr]string
	callAt    map[span]int // calls nest at one start byte: x.pin_memory().to(d)
	loopAt    map[uint]int
	followed  map[uint]bool
	follows   []follow
	// argDefaults maps argparse destinations (num_workers) to the literal
	// default of their add_argument call.
	argDefaults map[string]any
	// transformed are the datasets given a per-sample transform in place
	// (ds.set_transform(f)).
	transformed map[string]bool
	// inError counts the ERROR nodes the prepass is inside (only the
	// outermost is reported).
	inError int
	// lineStarts are the byte offsets where lines begin (built on first use).
	lineStarts []int
	// ranges are the for loops over range(...), counted once the
	// command-line defaults are known (tripCounts); setAttrs are the
	// attributes the script assigns (attrTargets).
	ranges   []loopRange
	setAttrs map[string]bool
	// rebound lists, per name, where it is bound other than by a plain
	// name = value (+=, a for, with or except target, a walrus), collected
	// before the walk (bindings).
	rebound map[string][]rebinding
}

// rebinding is where a name is bound other than by name = value: the
// target's line and start byte.
type rebinding struct {
	line int
	at   uint
}

// loopRange is a for loop's index in Facts.Loops and its range(...) call.
type loopRange struct {
	loop int
	call *sitter.Node
}

// span is a node's byte range.
type span struct{ start, end uint }

// ctx is the walk's position: enclosing loop, step loop, and whether an
// if or another loop lies between the node and the step loop.
type ctx struct {
	loop        int
	stepLoop    int
	innerLoop   bool
	conditional bool
	// branch: an if / elif / else branch or a conditional expression lies
	// between the node and its innermost loop (Call.Branch).
	branch   bool
	profiler int // index of the enclosing `with profile(...)` block, -1 none
	// eval: inside a no-grad block or an evaluation function (Loop.Eval).
	eval bool
	// noGrad: autograd is off, inside a no-grad block or a def decorated
	// with one (Loop.NoGrad, Call.NoGrad).
	noGrad bool
	// guard is 1 + the index in Facts.Conditions of the innermost if /
	// elif whose branch holds the node, within its step loop; 0 for none
	// (the zero value), or under a conditional expression.
	guard int
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
		if l, r := n.ChildByFieldName("left"), n.ChildByFieldName("right"); l != nil && r != nil {
			s.bind(l, r)
		}
		if l, r := n.ChildByFieldName("left"), n.ChildByFieldName("right"); l != nil && r != nil && r.Kind() == "call" {
			name := s.calleeName(r)
			if s.isModuleCtor(name) {
				s.modules[s.lastName(l)] = true
			}
			if isFramework(name) {
				s.fws[s.lastName(l)] = true
			}
			switch {
			case isLoader(name):
				s.loaders[s.lastName(l)] = true
			case isAnyOptimizer(name), strings.HasSuffix(name, ".GradScaler"):
				s.optims[s.lastName(l)] = true
			case name == "iter":
				if al := r.ChildByFieldName("arguments"); al != nil && al.NamedChildCount() > 0 && s.overLoader(al.NamedChild(0)) {
					s.iters[s.lastName(l)] = true
				}
			}
		}
	case "call":
		if name := s.calleeName(n); name == ".prepare" || name == ".setup_dataloaders" {
			if r := s.receiver(n); r != nil {
				s.prepped[s.lastName(r)] = true
			}
		}
	case "ERROR":
		if s.inError == 0 {
			s.f.Diagnostics = append(s.f.Diagnostics, s.errorDiag(n))
		}
		s.inError++
		defer func() { s.inError-- }()
	}
	if n.IsMissing() {
		s.f.Diagnostics = append(s.f.Diagnostics, s.missingDiag(n))
	}
	for _, c := range children(n) {
		s.prepass(c)
	}
}

// errorDiag describes an ERROR node: the text tree-sitter could not place.
func (s *scanner) errorDiag(n *sitter.Node) Diagnostic {
	p := s.pos(n)
	near := cut(strings.Join(strings.Fields(s.text(n)), " "), 60)
	lines := fmt.Sprintf("line %d", p.Line)
	if p.EndLine > p.Line {
		lines = fmt.Sprintf("lines %d-%d", p.Line, p.EndLine)
	}
	var msg string
	switch first := s.firstLine(n); {
	case near == "":
		msg = fmt.Sprintf("syntax error: tree-sitter could not parse %s (empty ERROR node); facts in this region are missing", lines)
	case compoundHeader.MatchString(first) && !strings.HasSuffix(first, ":") && !strings.ContainsAny(first, "([{"):
		msg = fmt.Sprintf("syntax error: missing ':' after %q (tree-sitter ERROR node, %s); facts in this region are missing", cut(first, 60), lines)
	default:
		if open := unclosed(s.text(n)); open != 0 {
			msg = fmt.Sprintf("syntax error: unclosed '%c' in %q (tree-sitter ERROR node, %s); facts in this region are missing", open, near, lines)
		} else {
			msg = fmt.Sprintf("syntax error: tree-sitter could not parse %q (ERROR node, %s); facts in this region are missing", near, lines)
		}
	}
	return Diagnostic{Kind: "syntax-error", Node: "ERROR", Near: near, Message: msg, Pos: p}
}

// compoundHeader matches the start of a compound statement's header line.
var compoundHeader = regexp.MustCompile(`^(async\s+)?(for|while|if|elif|else|def|class|with|try|except|finally|match|case)\b`)

// firstLine is the source text of n's first line, from n's start, without
// a trailing comment or blanks.
func (s *scanner) firstLine(n *sitter.Node) string {
	t := s.text(n)
	if i := strings.IndexByte(t, '\n'); i >= 0 {
		t = t[:i]
	}
	if i := strings.Index(t, "#"); i >= 0 && !strings.ContainsAny(t[:i], "'\"") {
		t = t[:i]
	}
	return strings.TrimSpace(t)
}

// unclosed returns the last bracket opened and not closed in t (strings
// skipped roughly), 0 when all are closed.
func unclosed(t string) byte {
	var stack []byte
	var quote byte
	for i := 0; i < len(t); i++ {
		c := t[i]
		switch {
		case quote != 0:
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '#':
			for i < len(t) && t[i] != '\n' {
				i++
			}
		case c == '(' || c == '[' || c == '{':
			stack = append(stack, c)
		case c == ')' || c == ']' || c == '}':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		}
	}
	if len(stack) == 0 {
		return 0
	}
	return stack[len(stack)-1]
}

// missingDiag describes a MISSING node: a token tree-sitter inserted to
// recover, as in a missing ':' or ')'.
func (s *scanner) missingDiag(n *sitter.Node) Diagnostic {
	p := s.pos(n)
	// The text before the missing token, on its line.
	line := s.f.LineText(p.Line)
	r := []rune(line)
	before := strings.TrimSpace(string(r[:min(max(p.Column-1, 0), len(r))]))
	near := before
	if rc := []rune(near); len(rc) > 60 {
		near = "..." + string(rc[len(rc)-57:])
	}
	kind := n.Kind()
	msg := fmt.Sprintf("syntax error: missing '%s'", kind)
	if !strings.ContainsAny(kind, "()[]{}:,.=;") {
		msg = fmt.Sprintf("syntax error: missing %s", kind)
	}
	if near != "" {
		msg += fmt.Sprintf(" after %q", near)
	}
	msg += " (tree-sitter MISSING node); facts nearby may be missing"
	return Diagnostic{Kind: "missing", Node: "MISSING " + kind, Near: near, Message: msg, Pos: p}
}

func cut(t string, n int) string {
	if r := []rune(t); len(r) > n {
		return string(r[:n-3]) + "..."
	}
	return t
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
	case "subscript":
		// models.__dict__[args.arch](): a constructor picked by name from
		// a module's namespace (the ImageNet example's model zoo).
		if v := fn.ChildByFieldName("value"); v != nil {
			if r := s.resolve(v); strings.HasSuffix(r, ".__dict__") {
				return r + "[]"
			}
		}
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

// assignedToSelf reports whether n is the value assigned to an attribute
// of self (self.train_loader = n).
func (s *scanner) assignedToSelf(n *sitter.Node) bool {
	p := n.Parent()
	if p == nil || p.Kind() != "assignment" {
		return false
	}
	l, r := p.ChildByFieldName("left"), p.ChildByFieldName("right")
	if l == nil || r == nil || r.Id() != n.Id() || l.Kind() != "attribute" {
		return false
	}
	o := l.ChildByFieldName("object")
	return o != nil && o.Kind() == "identifier" && s.text(o) == "self"
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

func isConcat(name string) bool {
	switch name {
	case "torch.cat", "torch.concat", "torch.concatenate", "torch.stack", "torch.hstack", "torch.vstack":
		return true
	}
	return false
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

// isAnyOptimizer reports whether name is an optimizer class: any
// torch.optim.<Class> (LBFGS, SparseAdam, ... too), or a class named like
// one elsewhere (transformers.AdamW, bitsandbytes' AdamW8bit, apex's
// FusedAdam).
func isAnyOptimizer(name string) bool {
	if rest, ok := strings.CutPrefix(name, "torch.optim."); ok {
		return rest != "" && !strings.Contains(rest, ".") && rest[0] >= 'A' && rest[0] <= 'Z' && rest != "Optimizer"
	}
	base := name[strings.LastIndex(name, ".")+1:]
	for _, o := range append(fusedOptims, "LBFGS", "Adafactor", "Lion", "LAMB", "Lamb", "LARS") {
		if strings.Contains(base, o) && base != "" && base[0] >= 'A' && base[0] <= 'Z' {
			return true
		}
	}
	return false
}

func isProfiler(name string) bool {
	return name == "torch.profiler.profile" || name == "torch.autograd.profiler.profile" ||
		name == "torch.autograd.profile"
}

// unwrapIter strips enumerate(), tqdm(), iter(), zip() and similar
// wrappers from a for loop's iterable (first argument), also through a
// name last assigned one whole (pbar = tqdm(loader); for x in
// enumerate(pbar)).
func (s *scanner) unwrapIter(n *sitter.Node) *sitter.Node {
	for depth := 0; n != nil && depth < 16; depth++ {
		if n.Kind() == "identifier" {
			name := s.text(n)
			v, ok := s.assigns[name]
			if !ok || s.elemIdx[name] >= 0 || v.Kind() != "call" || !iterWrapper(s.calleeName(v)) {
				return n
			}
			n = v
			continue
		}
		if n.Kind() != "call" || !iterWrapper(s.calleeName(n)) {
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

// iterWrapper reports whether a call named name wraps an iterable it takes
// first without changing what it yields (or pairs each item with an index).
func iterWrapper(name string) bool {
	switch name[strings.LastIndex(name, ".")+1:] {
	case "enumerate", "tqdm", "iter", "zip", "trange", "track", "islice",
		"log_every": // MetricLogger.log_every(loader, ...) of torchvision's reference scripts and their copies
		return true
	}
	return false
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
		if name == ".backward" || name == "torch.autograd.backward" {
			return true
		}
		if name == ".step" {
			if r := s.receiver(n); r != nil {
				rn := s.recvName(r)
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

// recvName is the last name of a receiver, looking through subscripts
// (optimizers[0] -> optimizers).
func (s *scanner) recvName(n *sitter.Node) string {
	for n != nil && n.Kind() == "subscript" {
		n = n.ChildByFieldName("value")
	}
	if n == nil {
		return ""
	}
	return s.lastName(n)
}

// drawsFromLoader reports whether a while loop's body takes batches with
// next() from a DataLoader or an iterator over one, outside nested loops
// and functions.
func (s *scanner) drawsFromLoader(n *sitter.Node) bool {
	switch n.Kind() {
	case "for_statement", "while_statement", "function_definition", "class_definition":
		return false
	case "call":
		if s.calleeName(n) == "next" {
			if al := n.ChildByFieldName("arguments"); al != nil && al.NamedChildCount() > 0 {
				a := al.NamedChild(0)
				if a.Kind() == "call" && s.calleeName(a) == "iter" {
					if aa := a.ChildByFieldName("arguments"); aa != nil && aa.NamedChildCount() > 0 {
						a = aa.NamedChild(0)
					}
				}
				if s.overLoader(a) || ((a.Kind() == "identifier" || a.Kind() == "attribute") && s.iters[s.lastName(a)]) {
					return true
				}
			}
		}
	}
	for _, c := range children(n) {
		if s.drawsFromLoader(c) {
			return true
		}
	}
	return false
}

// loopTargets binds the names of a for loop's target: all of them, but
// not the index of enumerate() (an int).
func (s *scanner) loopTargets(loop *sitter.Node, set map[string]bool) {
	l := loop.ChildByFieldName("left")
	if l == nil {
		return
	}
	if r := loop.ChildByFieldName("right"); r != nil && r.Kind() == "call" {
		if name := s.calleeName(r); name == "range" || name == "trange" || strings.HasSuffix(name, ".trange") {
			return // Python ints
		}
	}
	if r := loop.ChildByFieldName("right"); r != nil && r.Kind() == "call" && s.calleeName(r) == "enumerate" {
		switch l.Kind() {
		case "pattern_list", "tuple_pattern", "list_pattern", "tuple", "list":
			for i, c := range namedChildren(l) {
				if i > 0 {
					s.names(c, set)
				}
			}
			return
		}
	}
	s.names(l, set)
}

// collectStrong records the names that are tensors by the stricter guess
// (see Condition.Tensors) in a step loop, in source order, twice so that
// names assigned late in the body and used early are seen.
func (s *scanner) collectStrong(loop *sitter.Node, overLoader bool, set map[string]bool) {
	if overLoader && loop.Kind() == "for_statement" {
		s.loopTargets(loop, set)
	}
	var visit func(n *sitter.Node)
	visit = func(n *sitter.Node) {
		switch n.Kind() {
		case "function_definition", "class_definition":
			return
		case "assignment", "augmented_assignment":
			l, r := n.ChildByFieldName("left"), n.ChildByFieldName("right")
			if l != nil && r != nil {
				if s.strongValued(r, set) || (r.Kind() == "call" && s.calleeName(r) == "next" && s.drawsFromLoader(r)) {
					s.names(l, set)
				}
			}
		}
		for _, c := range children(n) {
			visit(c)
		}
	}
	if b := loop.ChildByFieldName("body"); b != nil {
		visit(b)
		visit(b)
	}
}

// modelish matches callee names that return tensors: models, criteria,
// losses.
var modelish = regexp.MustCompile(`(?i)(model|net|criterion|loss|encoder|decoder|backbone|head|forward|module|ddp|fsdp)`)

// nonTensorMethods return Python values, shapes or metadata, not tensors.
var nonTensorMethods = map[string]bool{
	".item": true, ".tolist": true, ".numpy": true, ".size": true, ".dim": true, ".numel": true,
	".get_last_lr": true, ".get_lr": true, ".keys": true, ".values": true, ".items": true, ".get": true,
	".format": true, ".join": true, ".split": true, ".startswith": true, ".endswith": true,
	".state_dict": true, ".parameters": true, ".named_parameters": true, ".data_ptr": true,
	".is_cuda": true, ".is_contiguous": true, ".element_size": true, ".nelement": true, ".ndimension": true,
	".get_device": true, ".append": true, ".pop": true, ".copy": true, ".update": true,
}

// nonTensorAttrs are tensor attributes that are not tensors.
var nonTensorAttrs = map[string]bool{
	"shape": true, "dtype": true, "device": true, "ndim": true, "requires_grad": true, "is_cuda": true,
	"layout": true, "is_leaf": true, "grad_fn": true, "training": true,
}

// strongValued reports whether expression n is a tensor by the stricter
// guess: a name in set, a torch.* call (not torch.cuda.*, torch.is_*, ...),
// a call of a model / criterion / loss by its name, a tensor method on a
// tensor, arithmetic, indexing or an attribute (not .shape ...) of one.
func (s *scanner) strongValued(n *sitter.Node, set map[string]bool) bool {
	switch n.Kind() {
	case "identifier":
		return set[s.text(n)]
	case "parenthesized_expression", "unary_operator":
		for _, c := range namedChildren(n) {
			if s.strongValued(c, set) {
				return true
			}
		}
	case "binary_operator":
		l, r := n.ChildByFieldName("left"), n.ChildByFieldName("right")
		return (l != nil && s.strongValued(l, set)) || (r != nil && s.strongValued(r, set))
	case "comparison_operator":
		// Elementwise: a comparison with a tensor is a tensor (not is / in).
		for _, c := range children(n) {
			if !c.IsNamed() {
				switch strings.Join(strings.Fields(s.text(c)), " ") {
				case "is", "is not", "in", "not in":
					return false
				}
			}
		}
		for _, c := range namedChildren(n) {
			if s.strongValued(c, set) {
				return true
			}
		}
	case "subscript":
		v := n.ChildByFieldName("value")
		return v != nil && s.strongValued(v, set)
	case "attribute":
		if s.resolve(n) != "" {
			return false
		}
		a, o := n.ChildByFieldName("attribute"), n.ChildByFieldName("object")
		return a != nil && o != nil && !nonTensorAttrs[s.text(a)] && s.strongValued(o, set)
	case "call":
		name := s.calleeName(n)
		switch {
		case name == "" || builtins[name] || nonTensorMethods[name] || name == ".cpu":
			return false // .cpu(): on the host from then on (the copy itself is the sync)
		case strings.HasPrefix(name, "torch."):
			for _, p := range []string{"torch.cuda.", "torch.backends.", "torch.utils.", "torch.profiler.", "torch.distributed.", "torch.is_", "torch.get_", "torch.set_", "torch.manual_seed", "torch.numel", "torch.save", "torch.load", "torch.device", "torch.no_grad", "torch.autocast", "torch.compile", "torch.optim.", "torch.nn.", "torch.autograd.profiler", "torch.Size"} {
				if strings.HasPrefix(name, p) {
					return strings.HasPrefix(name, "torch.nn.functional.")
				}
			}
			return true
		case strings.HasPrefix(name, "."):
			if modelish.MatchString(name) {
				return true
			}
			r := s.receiver(n)
			return r != nil && s.strongValued(r, set)
		case strings.Contains(name, "."):
			return false // resolved through a non-torch import: numpy, time, math, ...
		default:
			return modelish.MatchString(name)
		}
	}
	return false
}

// condTensors lists the parts of a condition that Python turns into a
// bool and that are tensors (see Condition.Tensors).
func (s *scanner) condTensors(n *sitter.Node, set map[string]bool, out *[]string) {
	add := func(t string) {
		if t = short(t); !slices.Contains(*out, t) {
			*out = append(*out, t)
		}
	}
	switch n.Kind() {
	case "comparison_operator":
		for _, c := range children(n) {
			if !c.IsNamed() {
				switch strings.Join(strings.Fields(s.text(c)), " ") {
				case "is", "is not", "in", "not in":
					return
				}
			}
		}
		for _, c := range namedChildren(n) {
			s.condTensors(c, set, out)
		}
	case "boolean_operator", "not_operator", "parenthesized_expression", "binary_operator", "unary_operator":
		for _, c := range namedChildren(n) {
			s.condTensors(c, set, out)
		}
	case "identifier", "attribute", "subscript", "call":
		if s.strongValued(n, set) {
			add(s.text(n))
		}
	}
}

func (s *scanner) condition(kind string, cond *sitter.Node, c ctx, conditional bool) {
	if cond == nil || c.stepLoop < 0 {
		return
	}
	k := Condition{
		Kind: kind, Text: short(s.text(cond)), Tensors: []string{}, Loop: c.loop, StepLoop: c.stepLoop,
		InnerLoop: c.innerLoop, Conditional: conditional, Pos: s.pos(cond),
	}
	s.condTensors(cond, s.strong[c.stepLoop], &k.Tensors)
	s.f.Conditions = append(s.f.Conditions, k)
}

// ifCondition records the condition of if statement n in a step loop,
// with whether its body starts with continue and, for a bare name, the
// value it was last assigned; it returns the ctx.guard of the statement's
// branches (0 when nothing was recorded).
func (s *scanner) ifCondition(n *sitter.Node, c ctx) int {
	cond := n.ChildByFieldName("condition")
	before := len(s.f.Conditions)
	s.condition("if", cond, c, c.conditional)
	if len(s.f.Conditions) == before {
		return 0
	}
	k := &s.f.Conditions[before]
	k.Skips = startsWithContinue(n.ChildByFieldName("consequence"))
	if cond.Kind() == "identifier" {
		if v := s.assignedBefore(n, s.text(cond)); v != nil {
			k.Assigned = short(s.text(v))
		}
	}
	return before + 1
}

// elifCondition records an elif's condition in a step loop and returns the
// ctx.guard of its branch (0 when nothing was recorded).
func (s *scanner) elifCondition(n *sitter.Node, c ctx) int {
	before := len(s.f.Conditions)
	s.condition("elif", n.ChildByFieldName("condition"), c, true)
	if len(s.f.Conditions) == before {
		return 0
	}
	return before + 1
}

// startsWithContinue reports whether a block's first statement is
// `continue`.
func startsWithContinue(block *sitter.Node) bool {
	if block == nil {
		return false
	}
	st := namedChildren(block)
	return len(st) > 0 && st[0].Kind() == "continue_statement"
}

// deviceMove are the methods whose receiver's origin Call.ReceiverAssigned
// records: a tensor moved to a device.
var deviceMove = map[string]bool{".to": true, ".cuda": true, ".type_as": true}

// assignedBack bounds how many statements assignedBefore looks back: the
// pattern it reads (z = torch.randn(...); z = z.cuda()) is a few lines
// long, and an unbounded walk from every call of a long block is quadratic
// (8,000 module-level statements took two minutes).
const assignedBack = 32

// assignedBefore returns the value last assigned to name by the
// assignedBack statements before stmt in its block (name = value), the
// nearest first; nil when none is.
func (s *scanner) assignedBefore(stmt *sitter.Node, name string) *sitter.Node {
	k := 0
	for p := stmt.PrevNamedSibling(); p != nil && k < assignedBack; p, k = p.PrevNamedSibling(), k+1 {
		if v := s.plainAssigned(p, name); v != nil {
			return v
		}
	}
	return nil
}

// callAssigned returns the call last assigned to name by an earlier
// statement of the block holding n (within assignedBack), or nil when the
// last value assigned there is not a call or none is.
func (s *scanner) callAssigned(n *sitter.Node, name string) *sitter.Node {
	stmt := n
	for stmt.Parent() != nil && stmt.Parent().Kind() != "block" && stmt.Parent().Kind() != "module" {
		stmt = stmt.Parent()
	}
	if r := s.assignedBefore(stmt, name); r != nil && r.Kind() == "call" {
		return r
	}
	return nil
}

// callAssignedBefore returns the canonical name of callAssigned's call;
// "" when there is none, or when that call was given a device=.
func (s *scanner) callAssignedBefore(n *sitter.Node, name string) string {
	r := s.callAssigned(n, name)
	if r == nil {
		return ""
	}
	if _, kw, _ := s.args(r); kw["device"].Present {
		return "" // made on its device
	}
	return s.calleeName(r)
}

// receiverOrigin returns the call last assigned to the name at the root of
// receiver r (x of x or x[i][j]) before call n: looked up in n's block,
// then before each enclosing statement in its block, up to the def
// (Call.ReceiverOrigin). Nil when the name's last value there is not a
// call, when a statement between binds the name another way (a tuple, a
// for or with target, a walrus, a branch), when a loop the call is in
// binds it anywhere (a later pass sees another value), or when none is
// found.
func (s *scanner) receiverOrigin(n, r *sitter.Node) *Origin {
	for r.Kind() == "subscript" {
		if r = r.ChildByFieldName("value"); r == nil {
			return nil
		}
	}
	if r.Kind() != "identifier" {
		return nil
	}
	name := s.text(r)
	// Most receivers (a batch from the loop target) are never assigned a
	// call's value: no walk up the tree (each Parent is a search from the
	// root) for them.
	if !slices.ContainsFunc(s.allAssigns[name], func(a assigned) bool { return a.idx < 0 && a.v.Kind() == "call" }) {
		return nil
	}
	for stmt, p := n, n.Parent(); p != nil; stmt, p = p, p.Parent() {
		switch stmt.Kind() {
		case "function_definition", "class_definition", "lambda":
			return nil
		case "for_statement", "while_statement", "list_comprehension", "set_comprehension", "dictionary_comprehension", "generator_expression":
			if s.binds(stmt, name) {
				return nil
			}
		case "with_statement":
			if c := stmt.ChildByFieldName("body"); c != nil {
				for _, h := range namedChildren(stmt) {
					if h.Id() != c.Id() && s.binds(h, name) {
						return nil
					}
				}
			}
		}
		if p.Kind() != "block" && p.Kind() != "module" {
			continue
		}
		k := 0
		for q := stmt.PrevNamedSibling(); q != nil && k < assignedBack; q, k = q.PrevNamedSibling(), k+1 {
			if v := s.plainAssigned(q, name); v != nil {
				if v.Kind() != "call" {
					return nil
				}
				args, kw, _ := s.args(v)
				return &Origin{Name: s.calleeName(v), Args: args, Keywords: kw, Pos: s.pos(v)}
			}
			if s.binds(q, name) {
				return nil
			}
		}
	}
	return nil
}

// receiverVaries reports whether the data of the call behind receiver r
// of device move n names something the innermost loop around n binds
// (Call.ReceiverVaries).
func (s *scanner) receiverVaries(n, r *sitter.Node) bool {
	f := r
	if r.Kind() == "identifier" {
		f = s.callAssigned(n, s.text(r))
	}
	if f == nil || f.Kind() != "call" {
		return false
	}
	data, loop := s.callData(f), innermostLoop(n)
	if data == nil || loop == nil || data.Kind() == "list" || data.Kind() == "tuple" {
		return false // a literal of Python numbers can be filled on the device
	}
	var names []string
	s.valueNames(data, &names)
	return slices.ContainsFunc(names, func(name string) bool { return s.binds(loop, name) })
}

// innermostLoop returns the for or while statement nearest around n in
// its function, or nil.
func innermostLoop(n *sitter.Node) *sitter.Node {
	for p := n.Parent(); p != nil; p = p.Parent() {
		switch p.Kind() {
		case "function_definition", "class_definition", "lambda":
			return nil
		case "for_statement", "while_statement":
			return p
		}
	}
	return nil
}

// callData returns the data argument of call f: its first positional
// argument, or data=; nil when it has neither.
func (s *scanner) callData(f *sitter.Node) *sitter.Node {
	al := f.ChildByFieldName("arguments")
	if al == nil {
		return nil
	}
	var data *sitter.Node
	for _, a := range namedChildren(al) {
		switch a.Kind() {
		case "keyword_argument":
			if k := a.ChildByFieldName("name"); k != nil && s.text(k) == "data" {
				data = a.ChildByFieldName("value")
			}
		case "comment", "list_splat", "dictionary_splat":
		default:
			return a // positional arguments come first
		}
	}
	return data
}

// valueNames appends the names value reads: every identifier in it but
// attribute names (the root of a.b.c is a) and keyword names.
func (s *scanner) valueNames(n *sitter.Node, out *[]string) {
	switch n.Kind() {
	case "identifier":
		*out = append(*out, s.text(n))
		return
	case "attribute":
		if o := n.ChildByFieldName("object"); o != nil {
			s.valueNames(o, out)
		}
		return
	case "keyword_argument":
		if v := n.ChildByFieldName("value"); v != nil {
			s.valueNames(v, out)
		}
		return
	}
	for _, c := range namedChildren(n) {
		s.valueNames(c, out)
	}
}

// plainAssigned returns the value statement q assigns to name when q is
// `name = value` (or a chain a = name = value), nil otherwise.
func (s *scanner) plainAssigned(q *sitter.Node, name string) *sitter.Node {
	if q.Kind() != "expression_statement" {
		return nil
	}
	for _, a := range namedChildren(q) {
		found := false
		for a != nil && a.Kind() == "assignment" {
			if l := a.ChildByFieldName("left"); l != nil && l.Kind() == "identifier" && s.text(l) == name {
				found = true
			}
			a = a.ChildByFieldName("right")
		}
		if found {
			return a
		}
	}
	return nil
}

// binds reports whether name is bound anywhere inside n: assigned (the
// prepass's allAssigns, by the value's position) or bound another way, by
// +=, a for, comprehension, with or except target or a walrus
// (scanner.rebound). Defs and lambdas inside n count too.
func (s *scanner) binds(n *sitter.Node, name string) bool {
	lo, hi := n.StartByte(), n.EndByte()
	for _, a := range s.allAssigns[name] {
		if at := a.v.StartByte(); lo <= at && at < hi {
			return true
		}
	}
	for _, r := range s.rebound[name] {
		if lo <= r.at && r.at < hi {
			return true
		}
	}
	return false
}

// collectTensors records names assigned from calls (or bound as the loop
// target) inside a step loop, not descending into nested functions.
func (s *scanner) collectTensors(loop *sitter.Node, set map[string]bool) {
	s.loopTargets(loop, set)
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
		case name == ".item" || name == ".tolist" || name == ".numpy" || name == ".cpu" || builtins[name]:
			return false // Python values, or a tensor already on the host
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
			cond, guard := n.ChildByFieldName("condition"), s.ifCondition(n, c)
			constant := s.runConstant(cond)
			body := n.ChildByFieldName("consequence")
			for _, ch := range children(n) {
				cc := c
				if (cond == nil || ch.Id() != cond.Id()) && !(constant && body != nil && ch.Id() == body.Id()) {
					cc.conditional = true
					cc.guard = guard // the body and the else branch; an elif sets its own
				}
				if cond == nil || ch.Id() != cond.Id() {
					cc.branch = true
				}
				s.walk(ch, cc)
			}
			return
		}
		if n.Kind() == "if_statement" || n.Kind() == "conditional_expression" {
			// The test runs on every pass; the branches do not.
			var test *sitter.Node
			if n.Kind() == "if_statement" {
				test = n.ChildByFieldName("condition")
			} else if nc := namedChildren(n); len(nc) == 3 {
				test = nc[1] // x if test else y
			}
			if c.stepLoop >= 0 && n.Kind() == "conditional_expression" {
				c.guard = 0 // x if t else y: a test no Condition records
				c.conditional = true
			}
			for _, ch := range children(n) {
				cc := c
				cc.branch = test == nil || ch.Id() != test.Id()
				s.walk(ch, cc)
			}
			return
		}
		c.branch = true
		if c.stepLoop >= 0 {
			if n.Kind() == "elif_clause" {
				c.guard = s.elifCondition(n, c)
			}
			if n.Kind() == "conditional_expression" {
				c.guard = 0 // x if t else y: a test no Condition records
			}
			c.conditional = true
		}
	case "except_clause", "except_group_clause", "case_clause", "lambda", "boolean_operator":
		c.branch = true // runs on some passes only (a or b(), an OOM handler)
	case "function_definition":
		noGrad := s.noGradDecorated(n)
		c = ctx{loop: -1, stepLoop: -1, profiler: -1, eval: noGrad || s.evalNamedDef(n), noGrad: noGrad}
	case "class_definition":
		c = ctx{loop: -1, stepLoop: -1, profiler: -1}
	case "with_statement":
		s.with(n, c)
		return
	case "call":
		s.call(n, c)
	case "assignment", "augmented_assignment":
		s.assignment(n)
	case "attribute":
		if a := n.ChildByFieldName("attribute"); a != nil && gradSyncSwitches[s.text(a)] {
			s.f.Features.GradSyncSwitches = append(s.f.Features.GradSyncSwitches, Use{Name: s.text(a), Pos: s.pos(n)})
		}
	}
	for _, ch := range children(n) {
		s.walk(ch, c)
	}
}

// gradSyncSwitches are the attributes that skip the gradient all-reduce on
// a micro-batch (Features.GradSyncSwitches).
var gradSyncSwitches = map[string]bool{
	"no_sync": true, "no_backward_sync": true, "accumulate": true,
	"set_requires_gradient_sync": true, "require_backward_grad_sync": true,
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
		if r.Kind() == "call" && s.calleeName(r) == "range" {
			defer func(idx int) { s.ranges = append(s.ranges, loopRange{idx, r}) }(len(s.f.Loops))
		}
		it := s.unwrapIter(r)
		l.Iter = short(s.text(it))
		l.OverLoader = s.overLoader(it)
	}
	if b := n.ChildByFieldName("body"); b != nil {
		l.Trains = s.trainsDirectly(b)
		l.CallsModel = s.callsModel(b)
		l.Forward, l.UsesGrad = s.forwardAndGrads(b)
		if l.Kind == "while" {
			l.OverLoader = s.drawsFromLoader(b)
		}
	}
	l.Step = l.OverLoader || l.Trains
	l.NoGrad = c.noGrad || s.bodyNoGrad(n.ChildByFieldName("body"))
	l.Eval = l.Step && !l.Trains && (c.eval || l.Kind == "for" && l.OverLoader && evalNamed(l.Iter) || l.NoGrad || s.afterEvalMode(n))
	idx := len(s.f.Loops)
	l.Root = idx
	s.f.Loops = append(s.f.Loops, l)
	s.loopAt[n.StartByte()] = idx
	inner := c
	inner.loop = idx
	inner.branch = false
	if l.Step {
		inner.stepLoop = idx
		inner.innerLoop = false
		inner.conditional = false
		inner.guard = 0
		if s.tensors == nil {
			s.tensors = map[int]map[string]bool{}
		}
		set := map[string]bool{}
		s.collectTensors(n, set)
		s.tensors[idx] = set
		if s.strong == nil {
			s.strong = map[int]map[string]bool{}
		}
		strong := map[string]bool{}
		s.collectStrong(n, l.OverLoader, strong)
		s.strong[idx] = strong
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
	if l.Kind == "while" {
		// The header runs every iteration: in a while step loop it is
		// part of the step; nested in one, it runs at least once per step.
		cond := n.ChildByFieldName("condition")
		if l.Step {
			s.condition("while", cond, inner, false)
		} else {
			s.condition("while", cond, c, c.conditional)
		}
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
			if s.noGradItem(item) {
				inner.eval = true
				inner.noGrad = true
			}
			call := withCall(item)
			if call == nil {
				continue
			}
			if isProfiler(s.calleeName(call)) {
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

// withCall returns the call a with item enters (profile(...) of
// `with profile(...) as prof`), or nil when it is not a call.
func withCall(item *sitter.Node) *sitter.Node {
	v := item.ChildByFieldName("value")
	if v != nil && v.Kind() == "as_pattern" && v.NamedChildCount() > 0 {
		v = v.NamedChild(0)
	}
	if v == nil || v.Kind() != "call" {
		return nil
	}
	return v
}

// inBranch reports whether n lies in an if / elif / else body of its
// function (or the module).
func inBranch(n *sitter.Node) bool {
	for p := n.Parent(); p != nil; p = p.Parent() {
		switch p.Kind() {
		case "if_statement", "elif_clause", "else_clause":
			return true
		case "function_definition", "class_definition", "module":
			return false
		}
	}
	return false
}

// noGrad reports whether call turns autograd off: torch.no_grad(),
// torch.inference_mode() (not with False), torch.set_grad_enabled(False)
// (mode= too), under their torch.autograd and torch.autograd.grad_mode
// names as well.
func (s *scanner) noGrad(call *sitter.Node) bool {
	name := s.calleeName(call)
	if fn := call.ChildByFieldName("function"); strings.HasPrefix(name, ".") && fn != nil {
		name = s.text(fn) // torch.no_grad() in a fragment without `import torch`
	}
	name = gradModeName(name)
	mode := func() string {
		pos, kw, _ := s.args(call)
		if v := param(pos, kw, "mode", 0); v.Present {
			return v.Text
		}
		return ""
	}
	switch name {
	case "no_grad":
		return true
	case "inference_mode":
		return mode() != "False"
	case "set_grad_enabled":
		return mode() == "False"
	}
	return false
}

// gradModeName strips the torch., torch.autograd. and
// torch.autograd.grad_mode. prefixes the grad-mode switches are reachable
// under (torch.autograd.no_grad is torch.no_grad).
func gradModeName(name string) string {
	for _, p := range []string{"torch.autograd.grad_mode.", "torch.autograd.", "torch."} {
		if n, ok := strings.CutPrefix(name, p); ok {
			return n
		}
	}
	return name
}

// noGradItem reports whether a with item turns autograd off: a call
// noGrad reads as such, a conditional expression with one as a branch
// (torch.no_grad() if amp else nullcontext()), or a name some assignment
// gives either (ctx = nullcontext() if train else torch.no_grad(); with
// ctx:). Either branch may run, so the loop is given the benefit of the
// doubt.
func (s *scanner) noGradItem(item *sitter.Node) bool {
	v := item.ChildByFieldName("value")
	if v != nil && v.Kind() == "as_pattern" && v.NamedChildCount() > 0 {
		v = v.NamedChild(0)
	}
	if v == nil {
		return false
	}
	if v.Kind() == "identifier" {
		for _, a := range s.allAssigns[s.text(v)] {
			if a.idx < 0 && s.noGradValue(a.v) {
				return true
			}
		}
		return false
	}
	return s.noGradValue(v)
}

// noGradValue reports whether v, or a branch of it (branches), is a
// noGrad call.
func (s *scanner) noGradValue(v *sitter.Node) bool {
	for _, b := range branches(v) {
		if b.Kind() == "call" && s.noGrad(b) {
			return true
		}
	}
	return false
}

// bodyNoGrad reports whether a loop body turns autograd off itself: a
// `with torch.no_grad():` (or inference_mode) among its statements,
// around the forward of an evaluation loop.
func (s *scanner) bodyNoGrad(body *sitter.Node) bool {
	if body == nil {
		return false
	}
	for _, st := range namedChildren(body) {
		if st.Kind() != "with_statement" {
			continue
		}
		for _, cl := range children(st) {
			if cl.Kind() != "with_clause" {
				continue
			}
			for _, item := range namedChildren(cl) {
				if s.noGradItem(item) {
					return true
				}
			}
		}
	}
	return false
}

// afterEvalMode reports whether the nearest statement before loop n, in
// its block or an enclosing one up to its function, that switches a
// model's mode puts it in evaluation mode (model.eval(),
// model.train(False)): a loop that then does not train evaluates.
func (s *scanner) afterEvalMode(n *sitter.Node) bool {
	for cur := n; cur != nil && cur.Kind() != "function_definition" && cur.Kind() != "module"; cur = cur.Parent() {
		for prev := cur.PrevNamedSibling(); prev != nil; prev = prev.PrevNamedSibling() {
			if prev.Kind() != "expression_statement" || prev.NamedChildCount() == 0 {
				continue
			}
			call := prev.NamedChild(0)
			if call.Kind() != "call" {
				continue
			}
			fn := call.ChildByFieldName("function")
			if fn == nil || fn.Kind() != "attribute" {
				continue
			}
			args := call.ChildByFieldName("arguments")
			if args == nil {
				continue
			}
			// The nearest mode switch decides: model.train() after an
			// earlier model.eval() is training mode again.
			switch attr, a := s.text(fn.ChildByFieldName("attribute")), strings.TrimSpace(s.text(args)); {
			case attr == "eval" && a == "()", attr == "train" && a == "(False)":
				return true
			case attr == "train" && (a == "()" || a == "(True)"):
				return false
			}
		}
	}
	return false
}

// evalNamedDef reports whether def is named for evaluation (evalNamed).
func (s *scanner) evalNamedDef(def *sitter.Node) bool {
	name := def.ChildByFieldName("name")
	return name != nil && evalNamed(s.text(name))
}

// noGradDecorated reports whether def is decorated with @torch.no_grad()
// or @torch.inference_mode() (called or not).
func (s *scanner) noGradDecorated(def *sitter.Node) bool {
	p := def.Parent()
	if p == nil || p.Kind() != "decorated_definition" {
		return false
	}
	for _, d := range namedChildren(p) {
		if d.Kind() != "decorator" || d.NamedChildCount() == 0 {
			continue
		}
		e := d.NamedChild(0)
		if e.Kind() == "call" && s.noGrad(e) {
			return true
		}
		if n := gradModeName(s.resolve(e)); n == "no_grad" || n == "inference_mode" {
			return true
		}
	}
	return false
}

// stepArgs fills the TensorArgs and Tensors of a call in step loop
// stepLoop.
func (s *scanner) stepArgs(n *sitter.Node, stepLoop int, call *Call) {
	var used []string
	if al := n.ChildByFieldName("arguments"); al != nil {
		s.argNames(al, &used)
	}
	for _, u := range used {
		if s.tensors[stepLoop][u] && !slices.Contains(call.TensorArgs, u) {
			call.TensorArgs = append(call.TensorArgs, u)
		}
	}
	if al := n.ChildByFieldName("arguments"); al != nil && al.Kind() == "argument_list" {
		for _, a := range namedChildren(al) {
			switch a.Kind() {
			case "keyword_argument", "dictionary_splat", "list_splat", "comment":
				continue
			}
			if s.strongValued(a, s.strong[stepLoop]) {
				call.Tensors = append(call.Tensors, short(s.text(a)))
			}
		}
	}
}

func (s *scanner) call(n *sitter.Node, c ctx) {
	name := s.calleeName(n)
	pos, kw, splat := s.args(n)
	call := Call{
		Name: name, Args: pos, Keywords: kw, KwargsSplat: splat, Loop: c.loop, StepLoop: c.stepLoop,
		InnerLoop: c.innerLoop, Conditional: c.conditional, Branch: c.branch, Guard: c.guard - 1, NoGrad: c.noGrad, Text: short(s.text(n)), Pos: s.pos(n),
		ReceiverKeywords: []string{}, TensorArgs: []string{}, Tensors: []string{},
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
		if r.Kind() == "identifier" && deviceMove[name] {
			call.ReceiverAssigned = s.callAssignedBefore(n, s.text(r))
		}
		if deviceMove[name] {
			call.ReceiverOrigin = s.receiverOrigin(n, r)
			call.ReceiverVaries = s.receiverVaries(n, r)
		}
	}
	if len(pos) > 0 && pos[0].Kind == "name" {
		call.DeviceArg = s.isDeviceName(pos[0].Text)
	}
	if p := n.Parent(); p != nil && p.Kind() == "assignment" {
		if l := p.ChildByFieldName("left"); l != nil && l.Kind() == "identifier" {
			var used []string
			if al := n.ChildByFieldName("arguments"); al != nil {
				for _, a := range namedChildren(al) {
					// torch.cat(parts) on a list is the recommended pattern;
					// x = torch.cat([x, y]) re-copies x.
					if a.Kind() == "identifier" && a.Parent().Kind() == "argument_list" && isConcat(name) {
						continue
					}
					s.argNames(a, &used)
				}
			}
			call.Accumulates = slices.Contains(used, s.text(l))
		}
	}
	if c.stepLoop >= 0 {
		s.stepArgs(n, c.stepLoop, &call)
	}
	if strings.HasPrefix(name, ".") {
		call.OnModule = s.onModule(n)
	}
	if name == ".to" {
		call.FrameworkDevice = s.frameworkDevice(pos, kw)
	}
	s.callAt[span{n.StartByte(), n.EndByte()}] = len(s.f.Calls)
	s.f.Calls = append(s.f.Calls, call)
	s.queueFollow(n, c)
	use := Use{Name: name, Pos: call.Pos}
	if strings.HasPrefix(name, "torch.accelerator.") {
		s.f.Features.Accelerator = append(s.f.Features.Accelerator, use)
	}
	if isFramework(name) {
		s.f.Features.Frameworks = append(s.f.Features.Frameworks, use)
		if a, ok := kw["accelerator"]; ok && a.Value == "cpu" {
			s.f.Features.CPUOnly = append(s.f.Features.CPUOnly, use)
		} else if a, ok := kw["cpu"]; ok && a.Value == true {
			s.f.Features.CPUOnly = append(s.f.Features.CPUOnly, use)
		} else if a, ok := kw["accelerator"]; ok && (a.Value == "gpu" || a.Value == "cuda") {
			// Trainer(accelerator="gpu") / Fabric(accelerator="cuda"): the
			// script asks for a CUDA GPU by name.
			s.f.Features.CUDA = append(s.f.Features.CUDA, Use{Name: name + `(accelerator="` + a.Value.(string) + `")`, Pos: a.Pos})
		} else if m, ok := kw["mixed_precision"]; ok && m.Value == "fp16" && strings.HasPrefix(name, "accelerate.") {
			// Accelerator(mixed_precision="fp16") is set up for a GPU:
			// accelerate runs fp16 with a grad scaler on CUDA (and other
			// accelerators) and refuses it on devices without one.
			s.f.Features.CUDA = append(s.f.Features.CUDA, Use{Name: name + `(mixed_precision="fp16")`, Pos: m.Pos})
		}
		// Lightning's Trainer sets cudnn.benchmark and deterministic
		// algorithms from its own arguments.
		if b, ok := kw["benchmark"]; ok && lightningTrainer(name) {
			s.f.Features.CudnnBenchmark = append(s.f.Features.CudnnBenchmark, Use{Name: name + "(benchmark=)", Value: b, InBranch: inBranch(n), Pos: b.Pos})
		}
		if d, ok := kw["deterministic"]; ok && lightningTrainer(name) {
			s.f.Features.Deterministic = append(s.f.Features.Deterministic, Use{Name: name + "(deterministic=)", Value: d, InBranch: inBranch(n), Pos: d.Pos})
		}
	}
	if s.mixedPrecision(n, name, pos, kw) {
		s.f.Features.MixedPrecision = append(s.f.Features.MixedPrecision, use)
	}
	ft := &s.f.Features
	switch {
	case name == ".add_argument":
		s.argDefault(pos, kw)
	case name == ".set_transform" && call.Receiver != "":
		// a datasets.Dataset transformed on access: per-sample work
		if s.transformed == nil {
			s.transformed = map[string]bool{}
		}
		s.transformed[call.Receiver] = true
	case isLoader(name):
		dl := DataLoader{
			Var:               s.assignedName(n),
			OnSelf:            s.assignedToSelf(n),
			BatchSize:         param(pos, kw, "batch_size", 1),
			NumWorkers:        param(pos, kw, "num_workers", 5),
			PinMemory:         param(pos, kw, "pin_memory", 7),
			PersistentWorkers: param(pos, kw, "persistent_workers", -1),
			PrefetchFactor:    param(pos, kw, "prefetch_factor", -1),
			KwargsSplat:       splat,
			Pos:               call.Pos,
		}
		s.datasetFacts(n, &dl, pos, kw)
		s.f.DataLoaders = append(s.f.DataLoaders, dl)
	case isOptimizer(name):
		s.f.Optimizers = append(s.f.Optimizers, Optimizer{
			Name: name, Var: s.assignedName(n), Foreach: param(pos, kw, "foreach", -1),
			Fused: param(pos, kw, "fused", -1), KwargsSplat: splat, SmallModel: s.optimizerModel(n), Pos: call.Pos,
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
		strings.HasPrefix(name, "torchvision.models.") && !strings.HasPrefix(name, "torchvision.models.detection."):
		// Detection models resize each image by its aspect ratio
		// (GeneralizedRCNNTransform): a new input shape every batch, the
		// case cudnn.benchmark should stay off for.
		if strings.HasSuffix(name, ".__dict__[]") {
			use.Name = call.Text // models.__dict__[args.arch](): the source says more
		}
		ft.Conv = append(ft.Conv, use)
	case name == ".cuda" || strings.HasPrefix(name, "torch.cuda."):
		ft.CUDA = append(ft.CUDA, use)
	case name == "torch.use_deterministic_algorithms":
		if len(pos) > 0 {
			use.Value = pos[0]
		} else if v, ok := kw["mode"]; ok {
			use.Value = v
		}
		use.InBranch = inBranch(n)
		ft.Deterministic = append(ft.Deterministic, use)
	case name == "torch.distributed.init_process_group" || name == "torch.distributed.distributed_c10d.init_process_group":
		// The nccl backend runs only on CUDA GPUs.
		if v := param(pos, kw, "backend", 0); v.Present {
			if str, ok := v.Value.(string); ok && strings.Contains(str, "nccl") {
				ft.GPUHints = append(ft.GPUHints, use)
			}
		}
	case name == "torch.device" || name == ".to":
		for _, v := range append(slices.Clone(pos), kw["device"]) {
			if s.cudaString(v) {
				ft.CUDA = append(ft.CUDA, use)
				break
			}
		}
	case name == "torch.autocast" || name == "torch.amp.autocast":
		// autocast("cuda", ...): the script computes on a CUDA device.
		if s.cudaString(param(pos, kw, "device_type", 0)) {
			ft.CUDA = append(ft.CUDA, use)
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
	if a := l.ChildByFieldName("attribute"); l.Kind() == "attribute" && a != nil && s.text(a) == "grad" {
		s.f.Features.GradWrites = append(s.f.Features.GradWrites, Use{Name: short(lt), Pos: s.pos(n)})
	}
	if n.Kind() == "augmented_assignment" {
		return
	}
	if s.resolve(l) == "torch.backends.cudnn.benchmark" || strings.HasSuffix(lt, "cudnn.benchmark") {
		s.f.Features.CudnnBenchmark = append(s.f.Features.CudnnBenchmark, Use{Name: "torch.backends.cudnn.benchmark", Value: s.value(r), InBranch: inBranch(n), Pos: s.pos(n)})
	}
	if s.resolve(l) == "torch.backends.cudnn.deterministic" || strings.HasSuffix(lt, "cudnn.deterministic") {
		s.f.Features.Deterministic = append(s.f.Features.Deterministic, Use{Name: "torch.backends.cudnn.deterministic", Value: s.value(r), InBranch: inBranch(n), Pos: s.pos(n)})
	}
}

// finish sorts the comment-derived lists by position.
func (s *scanner) finish() {
	// Conditions by position (step functions are walked after the main
	// walk), with the calls' Guard indexes moved along.
	order := make([]int, len(s.f.Conditions))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(i, j int) int {
		a, b := &s.f.Conditions[i], &s.f.Conditions[j]
		if a.Line != b.Line {
			return a.Line - b.Line
		}
		return a.Column - b.Column
	})
	moved := make([]int, len(order))
	sorted := make([]Condition, len(order))
	for to, from := range order {
		moved[from] = to
		sorted[to] = s.f.Conditions[from]
	}
	s.f.Conditions = sorted
	for i := range s.f.Calls {
		if g := s.f.Calls[i].Guard; g >= 0 {
			s.f.Calls[i].Guard = moved[g]
		}
	}
	s.iterated()
	slices.SortStableFunc(s.f.Ignores, func(a, b Ignore) int { return a.Line - b.Line })
	slices.SortStableFunc(s.f.Diagnostics, func(a, b Diagnostic) int {
		if a.Line != b.Line {
			return a.Line - b.Line
		}
		return a.Column - b.Column
	})
}

// iterated fills Function.Iterates: the parameters a for loop in the
// function (nested defs included) iterates, then, one hand-off further,
// those it passes to a function of the script that iterates the parameter
// receiving them (validate(val_loader) -> run_validate(loader)). Functions
// are found by name, a method call (.name) past its self.
func (s *scanner) iterated() {
	fs := s.f.Functions
	byName := map[string][]int{}
	for i, fn := range fs {
		byName[fn.Name] = append(byName[fn.Name], i)
	}
	// enclosing lists the functions whose lines hold line.
	enclosing := func(line int) []int {
		var out []int
		for i, fn := range fs {
			if fn.Line <= line && line <= fn.EndLine {
				out = append(out, i)
			}
		}
		return out
	}
	direct := make([]map[string]bool, len(fs))
	for i, fn := range fs {
		if fn.Module != "" { // imported: looped over in its own module
			direct[i] = map[string]bool{}
			for _, p := range fn.Iterates {
				direct[i][p] = true
			}
		}
	}
	for _, l := range s.f.Loops {
		if l.Kind != "for" {
			continue
		}
		in := enclosing(l.Line)
		innermost := -1
		for _, i := range in {
			if innermost < 0 || fs[i].Line >= fs[innermost].Line {
				innermost = i
			}
		}
		for _, i := range in {
			// A name read from outside counts for the def the loop is in
			// (an outer def may hold it as a nested def's parameter).
			if slices.Contains(fs[i].Params, l.Iter) || isMethod(fs[i]) && selfAttr(l.Iter) || i == innermost && s.freeName(fs[i], l.Iter) {
				if direct[i] == nil {
					direct[i] = map[string]bool{}
				}
				direct[i][l.Iter] = true
			}
		}
	}
	all := make([]map[string]bool, len(fs))
	for i := range fs {
		all[i] = map[string]bool{}
		for p := range direct[i] {
			all[i][p] = true
		}
	}
	for _, c := range s.f.Calls {
		for _, g := range s.callees(c, byName) {
			for p := range direct[g] {
				self := selfAttr(p)
				if self && (c.Receiver != "self" || !isMethod(fs[g])) || !self && slices.Contains(fs[g].Params, p) {
					continue
				}
				for _, i := range enclosing(c.Line) {
					if i != g && (self && isMethod(fs[i]) || !self && s.freeName(fs[i], p)) {
						all[i][p] = true
					}
				}
			}
			for k, p := range s.receiving(c, fs[g]) {
				if !direct[g][p] {
					continue
				}
				for _, i := range enclosing(c.Line) {
					if i != g && slices.Contains(fs[i].Params, k) {
						all[i][k] = true
					}
				}
			}
		}
	}
	for i := range fs {
		fs[i].Iterates = slices.Sorted(maps.Keys(all[i]))
	}
}

// freeName reports whether t is a plain name that fn reads from an
// enclosing scope: not one of its parameters, and bound nowhere in its
// lines (a loader built at module level and looped over in train()).
func (s *scanner) freeName(fn Function, t string) bool {
	if t == "" || t == "self" || !isIdentifier(t) || slices.Contains(fn.Params, t) {
		return false
	}
	for _, a := range s.allAssigns[t] {
		if l := int(a.v.StartPosition().Row) + 1; fn.Line <= l && l <= fn.EndLine {
			return false
		}
	}
	for _, r := range s.rebound[t] {
		if fn.Line <= r.line && r.line <= fn.EndLine {
			return false
		}
	}
	return true
}

// isIdentifier reports whether t is a Python identifier (ASCII letters,
// digits and underscores, not starting with a digit).
func isIdentifier(t string) bool {
	for i, r := range t {
		if r != '_' && !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || i > 0 && '0' <= r && r <= '9') {
			return false
		}
	}
	return t != ""
}

// isMethod reports whether fn's first parameter is self.
func isMethod(fn Function) bool { return len(fn.Params) > 0 && fn.Params[0] == "self" }

// selfAttr reports whether t is an attribute of self: "self.train_loader".
func selfAttr(t string) bool {
	a, ok := strings.CutPrefix(t, "self.")
	return ok && a != "" && !strings.ContainsAny(a, ".[( ")
}

// callees are the functions of the script call c may run: by name, or,
// for a method call, a method (its first parameter self) of that name.
func (s *scanner) callees(c Call, byName map[string][]int) []int {
	name, method := strings.CutPrefix(c.Name, ".")
	var out []int
	for _, i := range byName[name] {
		ps := s.f.Functions[i].Params
		if !method || len(ps) > 0 && ps[0] == "self" {
			out = append(out, i)
		}
	}
	return out
}

// receiving maps the text of each argument of c that is a plain name to
// the parameter of fn receiving it (positional past self for a method
// call, or by keyword).
func (s *scanner) receiving(c Call, fn Function) map[string]string {
	out := map[string]string{}
	off := 0
	if strings.HasPrefix(c.Name, ".") {
		off = 1
	}
	for k, a := range c.Args {
		if a.Kind == "name" && k+off < len(fn.Params) {
			out[a.Text] = fn.Params[k+off]
		}
	}
	for name, a := range c.Keywords {
		if a.Kind == "name" && slices.Contains(fn.Params, name) {
			out[a.Text] = name
		}
	}
	return out
}

// params lists a def's parameter names in order (self included; *args
// and **kwargs by their names), never nil.
func (s *scanner) params(def *sitter.Node) []string {
	out := []string{}
	ps := def.ChildByFieldName("parameters")
	if ps == nil {
		return out
	}
	for _, p := range namedChildren(ps) {
		switch p.Kind() {
		case "identifier":
			out = append(out, s.text(p))
		case "default_parameter", "typed_parameter", "typed_default_parameter":
			if nm := p.ChildByFieldName("name"); nm != nil {
				out = append(out, s.text(nm))
			} else if c := namedChildren(p); len(c) > 0 {
				switch c[0].Kind() {
				case "identifier":
					out = append(out, s.text(c[0]))
				case "list_splat_pattern", "dictionary_splat_pattern": // *args: int
					if in := namedChildren(c[0]); len(in) > 0 {
						out = append(out, s.text(in[0]))
					}
				}
			}
		case "list_splat_pattern", "dictionary_splat_pattern":
			if c := namedChildren(p); len(c) > 0 {
				out = append(out, s.text(c[0]))
			}
		}
	}
	return out
}

// addImported adds the functions imported from sibling modules
// (s.imported) after the script's own defs, once each.
func (s *scanner) addImported() {
	seen := map[string]bool{}
	for _, fn := range s.imported {
		if !seen[fn.Name] {
			seen[fn.Name] = true
			s.f.Functions = append(s.f.Functions, fn)
		}
	}
}

// functions records every def with its first line (decorators included,
// as Python's co_firstlineno) and last line.
func (s *scanner) functions(n *sitter.Node) {
	if n.Kind() == "function_definition" {
		if name := n.ChildByFieldName("name"); name != nil {
			first := n
			if p := n.Parent(); p != nil && p.Kind() == "decorated_definition" {
				first = p
			}
			s.f.Functions = append(s.f.Functions, Function{
				Name: s.text(name), Params: s.params(n), Line: int(first.StartPosition().Row) + 1, EndLine: int(n.EndPosition().Row) + 1,
			})
		}
	}
	for _, c := range children(n) {
		s.functions(c)
	}
}
