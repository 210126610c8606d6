//go:build cgo

package script

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	sitter "github.com/tree-sitter/go-tree-sitter"
)

// smallLayers are the torch.nn classes without parameters, or with a
// handful (norms), that a small fully connected model is built from.
var smallLayers = map[string]bool{
	"Sequential": true, "ModuleList": true, "ModuleDict": true, "Identity": true, "Flatten": true, "Unflatten": true,
	"ReLU": true, "ReLU6": true, "LeakyReLU": true, "PReLU": true, "ELU": true, "SELU": true, "CELU": true, "GELU": true,
	"SiLU": true, "Mish": true, "Tanh": true, "Sigmoid": true, "Softplus": true, "Softmax": true, "LogSoftmax": true,
	"Hardtanh": true, "Hardswish": true, "Dropout": true, "AlphaDropout": true, "LayerNorm": true, "BatchNorm1d": true,
}

// Most nn.Linear layers, and the widest known layer size, of a model
// judged small.
const (
	smallMaxLinear = 8
	smallMaxWidth  = 1024
)

// builderCall matches lowercase helpers that may build a large model.
var builderCall = regexp.MustCompile(`(?i)model|pretrained|load|create|build|timm|hub`)

// smallNet says whether the calls under n (a class's __init__ body or a
// constructor expression) build only a few narrow nn.Linear layers and
// parameter-free layers: the reason, or "" when that is not known. Layer
// sizes are integer literals or parameters of the enclosing def with an
// integer default; each Linear needs one known size, none above
// smallMaxWidth, and none may be built in a loop or comprehension.
func (s *scanner) smallNet(n *sitter.Node) string {
	if why, ok := s.smallNets[n.Id()]; ok {
		return why
	}
	why := s.smallNetOf(n)
	s.smallNets[n.Id()] = why
	return why
}

func (s *scanner) smallNetOf(n *sitter.Node) string {
	defaults := s.intDefaults(n)
	linear, widest, ok := 0, 0, true
	dim := func(v *sitter.Node) (int, bool) {
		if v == nil {
			return 0, false
		}
		if v.Kind() == "identifier" {
			d, found := defaults[s.text(v)]
			return d, found
		}
		if v.Kind() != "integer" {
			return 0, false
		}
		i, err := strconv.Atoi(strings.ReplaceAll(s.text(v), "_", ""))
		return i, err == nil
	}
	// addLinear counts an nn.Linear call, its sizes read through arg (the
	// caller's arguments for one a helper builds; nil: as written).
	addLinear := func(lin *sitter.Node, arg func(*sitter.Node) *sitter.Node) {
		linear++
		known := false
		for i, kw := range []string{"in_features", "out_features"} {
			v := s.argNode(lin, kw, i)
			if arg != nil {
				v = arg(v)
			}
			if d, found := dim(v); found {
				known = true
				widest = max(widest, d)
				if d > smallMaxWidth {
					ok = false
				}
			}
		}
		if !known {
			ok = false
		}
	}
	var visit func(n *sitter.Node, inLoop bool)
	visit = func(n *sitter.Node, inLoop bool) {
		if !ok {
			return
		}
		switch n.Kind() {
		case "list_comprehension", "generator_expression", "set_comprehension", "dictionary_comprehension",
			"for_statement", "while_statement":
			inLoop = true
		case "function_definition", "class_definition", "lambda":
			return
		case "call":
			name := s.calleeName(n)
			base := name[strings.LastIndex(name, ".")+1:]
			switch {
			case name == "torch.nn.Linear":
				if inLoop {
					ok = false
					return
				}
				addLinear(n, nil)
			case strings.HasPrefix(name, "torch.nn."):
				if base == "" || base[0] < 'A' || base[0] > 'Z' {
					break // torch.nn.init.*, torch.nn.functional.*
				}
				if !smallLayers[base] {
					ok = false
				}
			case s.classes[name] != nil && s.classes[name].module:
				if s.classes[name].small == "" {
					ok = false
				}
			case base != "" && base[0] >= 'A' && base[0] <= 'Z':
				if !strings.HasSuffix(base, "Error") && !strings.HasSuffix(base, "Exception") {
					ok = false // a class of another library: its size is unknown
				}
			case builderCall.MatchString(name):
				ok = false
			case s.defs[name] != nil:
				// layer(obs_dim, 64): a helper of the script that builds
				// and returns an nn.Linear (cleanRL's layer_init shape,
				// written as def layer(i, o): l = nn.Linear(i, o); ...).
				def, call := s.defs[name], n
				for _, lin := range s.linearsIn(def) {
					addLinear(lin, func(v *sitter.Node) *sitter.Node {
						if v != nil && v.Kind() == "identifier" {
							if k := slices.Index(s.params(def), s.text(v)); k >= 0 {
								return s.argNode(call, s.text(v), k) // the caller's argument
							}
						}
						return v
					})
				}
			}
		}
		for _, c := range children(n) {
			visit(c, inLoop)
		}
	}
	visit(n, false)
	if !ok || linear == 0 || linear > smallMaxLinear {
		return ""
	}
	layers := "layers"
	if linear == 1 {
		layers = "layer"
	}
	return fmt.Sprintf("%d nn.Linear %s at most %d wide", linear, layers, widest)
}

// linearsIn returns the torch.nn.Linear calls in a def's body, nested defs
// and classes excepted.
func (s *scanner) linearsIn(def *sitter.Node) []*sitter.Node {
	var out []*sitter.Node
	var visit func(n *sitter.Node)
	visit = func(n *sitter.Node) {
		switch n.Kind() {
		case "function_definition", "class_definition", "lambda":
			if n.Id() != def.Id() {
				return
			}
		case "call":
			if s.calleeName(n) == "torch.nn.Linear" {
				out = append(out, n)
			}
		}
		for _, c := range children(n) {
			visit(c)
		}
	}
	visit(def)
	return out
}

// argNode returns the node of a call's argument passed as keyword name or
// at position i.
func (s *scanner) argNode(call *sitter.Node, name string, i int) *sitter.Node {
	al := call.ChildByFieldName("arguments")
	if al == nil || al.Kind() != "argument_list" {
		return nil
	}
	k := 0
	var at *sitter.Node
	for _, a := range namedChildren(al) {
		switch a.Kind() {
		case "keyword_argument":
			if nm := a.ChildByFieldName("name"); nm != nil && s.text(nm) == name {
				return a.ChildByFieldName("value")
			}
		case "comment", "list_splat", "dictionary_splat":
		default:
			if k == i {
				at = a
			}
			k++
		}
	}
	return at
}

// intDefaults maps the parameters with an integer default of the def
// enclosing n (n itself when it is a def) to that default.
func (s *scanner) intDefaults(n *sitter.Node) map[string]int {
	out := map[string]int{}
	fn := n
	for fn != nil && fn.Kind() != "function_definition" {
		fn = fn.Parent()
	}
	if fn == nil {
		return out
	}
	ps := fn.ChildByFieldName("parameters")
	if ps == nil {
		return out
	}
	for _, p := range namedChildren(ps) {
		if p.Kind() != "default_parameter" && p.Kind() != "typed_default_parameter" {
			continue
		}
		nm, v := p.ChildByFieldName("name"), p.ChildByFieldName("value")
		if nm == nil || v == nil || v.Kind() != "integer" {
			continue
		}
		if i, err := strconv.Atoi(strings.ReplaceAll(s.text(v), "_", "")); err == nil {
			out[s.text(nm)] = i
		}
	}
	return out
}

// classSizes fills classInfo.small for the Module classes of the script,
// once imports resolve (after the prepass). A class built from another
// class of the script is judged after it when defined later.
func (s *scanner) classSizes() {
	for range 2 {
		for _, ci := range s.classes {
			if ci.module && ci.init != nil && ci.small == "" {
				ci.small = s.smallNet(ci.init)
			}
		}
	}
}

// smallModel follows a model expression (a name, self.<attr>, a
// constructor, .to() / .cuda() chains, DDP / FSDP / tensor-parallel /
// torch.compile wrappers)
// through its assignments and says why it is small, or "" when that is not
// known for every value it may hold.
func (s *scanner) smallModel(n *sitter.Node, seen map[uintptr]bool, depth int) string {
	if n == nil || depth > 6 {
		return ""
	}
	if seen[n.Id()] {
		return cycle
	}
	seen[n.Id()] = true
	switch n.Kind() {
	case "identifier", "attribute":
		key := s.text(n)
		if n.Kind() == "attribute" {
			o := n.ChildByFieldName("object")
			if o == nil || s.text(o) != "self" {
				return ""
			}
			key = "self." + s.lastName(n)
		}
		why := cycle // every value already on the path: no new information
		for _, a := range s.allAssigns[key] {
			if seen[a.v.Id()] {
				continue
			}
			w := ""
			if rs := s.returned(a.v, a.idx); len(rs) > 0 {
				seen[a.v.Id()] = true
				w = s.smallOfAll(rs, seen, depth+1)
			} else if a.idx < 0 {
				w = s.smallModel(a.v, seen, depth+1)
			}
			switch w {
			case "":
				return ""
			case cycle:
			default:
				why = w
			}
		}
		if why == cycle && len(s.allAssigns[key]) == 0 {
			return ""
		}
		return why
	case "parenthesized_expression":
		if n.NamedChildCount() == 1 {
			return s.smallModel(n.NamedChild(0), seen, depth+1)
		}
	case "call":
		if rs := s.returned(n, -1); len(rs) > 0 {
			return s.smallOfAll(rs, seen, depth+1)
		}
		name := s.calleeName(n)
		switch {
		case name == ".to" || name == ".cuda" || name == ".train" || name == ".float" || name == ".double" ||
			name == ".bfloat16" || name == ".half" || name == ".share_memory":
			return s.smallModel(s.receiver(n), seen, depth+1)
		case name == "torch.compile" || strings.HasSuffix(name, "DataParallel") || strings.HasSuffix(name, "FullyShardedDataParallel") ||
			strings.HasSuffix(name, ".parallelize_module") || strings.HasSuffix(name, ".fully_shard"):
			// The tensor-parallel and FSDP2 wrappers shard the module they
			// are given and return it: its size is the model's.
			return s.smallModel(s.argNode(n, "module", 0), seen, depth+1)
		case strings.HasPrefix(name, "torch.nn."):
			if why := s.smallNet(n); why != "" {
				return fmt.Sprintf("%s: %s", cut(s.firstLine(n), 40), why)
			}
		case s.classes[name] != nil && s.classes[name].small != "":
			return fmt.Sprintf("%s: %s", name[strings.LastIndex(name, ".")+1:], s.classes[name].small)
		}
	}
	return ""
}

// smallOfAll is smallModel of the values a function may return: small
// only when every one is.
func (s *scanner) smallOfAll(rs []*sitter.Node, seen map[uintptr]bool, depth int) string {
	why := cycle
	for _, r := range rs {
		switch w := s.smallModel(r, seen, depth); w {
		case "":
			return ""
		case cycle:
		default:
			why = w
		}
	}
	return why
}

// optimizerModel says why the model an optimizer updates is small, "" when
// not known: its params are <model>.parameters() of a small model.
func (s *scanner) optimizerModel(call *sitter.Node) string {
	p := s.argNode(call, "params", 0)
	if p == nil || p.Kind() != "call" {
		return ""
	}
	if name := s.calleeName(p); name != ".parameters" {
		return ""
	}
	r := s.receiver(p)
	if r == nil {
		return ""
	}
	// The answer for a name depends on its assignments alone, all known
	// before the walk (prepass): a script that builds an optimizer per
	// block asks once, not once per optimizer over every assignment.
	key := r.Kind() + " " + s.text(r)
	if why, ok := s.smallOf[key]; ok {
		return why
	}
	why := s.smallModel(r, map[uintptr]bool{}, 0)
	if why == cycle {
		why = ""
	}
	if r.Kind() == "identifier" || r.Kind() == "attribute" {
		s.smallOf[key] = why
	}
	return why
}

// cycle is smallModel's answer for a name whose values are all on the
// path already (agent = DDP(agent)).
const cycle = "\x00cycle"

// siblings resolves what the script takes from Python modules of its own
// directory (dir): the classes it imports from them (whether they are
// Modules, small, in-memory datasets), the mixed precision they set up
// (Features.MixedPrecision: an FSDP2 MixedPrecisionPolicy in the
// parallelize function a script passes on, autocast in an imported
// training step), and whether a module that imports this one uses a GPU
// (Features.GPUHints).
func (s *scanner) siblings(dir string) {
	s.siblingPrecision(dir)
	for _, im := range s.f.Imports {
		mod, cls, ok := strings.Cut(im.Name, ".")
		if !ok {
			continue
		}
		// from a.b import C: the module is everything before the last dot.
		if i := strings.LastIndex(im.Name, "."); i > 0 {
			mod, cls = im.Name[:i], im.Name[i+1:]
		}
		if _, known := s.classes[im.Name]; known || cls == "" || cls[0] < 'A' || cls[0] > 'Z' {
			continue
		}
		sub := siblingModule(dir, mod)
		if sub == "" {
			continue
		}
		src, err := s.readSibling(sub)
		if err != nil {
			continue
		}
		classes := scanClasses(sub, src)
		if ci, ok := classes[cls]; ok {
			s.classes[im.Name] = ci
		}
	}
	self := strings.TrimSuffix(filepath.Base(s.f.File), ".py")
	if self == "__init__" || !identRE.MatchString(self) {
		return
	}
	importRE := regexp.MustCompile(`(?m)^\s*(from\s+` + self + `\s+import\b|import\s+` + self + `\b)`)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".py") || name == filepath.Base(s.f.File) {
			continue
		}
		path := filepath.Join(dir, name)
		src, err := s.readSibling(path)
		if err != nil || !importRE.Match(src) {
			continue
		}
		f, err := scanIn(path, src, "")
		if err != nil {
			continue
		}
		ft := f.Features
		if len(ft.CUDA)+len(ft.DDP)+len(ft.Frameworks)+len(ft.Accelerator) == 0 {
			continue
		}
		u := Use{Name: "imported by " + name}
		for _, im := range f.Imports {
			if im.Name == self || strings.HasPrefix(im.Name, self+".") {
				u.Pos = im.Pos
				break
			}
		}
		s.f.Features.GPUHints = append(s.f.Features.GPUHints, u)
	}
}

// siblingPrecision adds to Features.MixedPrecision the autocast and
// mixed precision set up in the sibling modules the script imports from,
// once per module, at the first import of it; and to Features.Conv,
// CudnnBenchmark and Deterministic what those modules build and set. The
// functions the script imports from them that loop over a parameter are
// kept (importFunction) for addImported.
func (s *scanner) siblingPrecision(dir string) {
	scanned := map[string]*Facts{}
	for _, im := range s.f.Imports {
		mod := im.Name
		if i := strings.LastIndex(mod, "."); i > 0 && siblingModule(dir, mod) == "" {
			mod = mod[:i] // from a.b import f: module a.b
		}
		sub := siblingModule(dir, mod)
		if sub == "" || sub == s.f.File {
			continue
		}
		if f, ok := scanned[sub]; ok {
			s.importFunction(im, mod, sub, f)
			continue
		}
		scanned[sub] = nil
		src, err := s.readSibling(sub)
		if err != nil {
			continue
		}
		f, err := scanIn(sub, src, "")
		if err != nil {
			continue
		}
		scanned[sub] = f
		s.importFunction(im, mod, sub, f)
		for _, u := range append(f.Features.Autocast, f.Features.MixedPrecision...) {
			s.f.Features.MixedPrecision = append(s.f.Features.MixedPrecision, Use{Name: fmt.Sprintf("%s in %s (line %d)", u.Name, filepath.Base(sub), u.Line), Pos: im.Pos})
			break
		}
		// The model's convolutions are often built in a module of the
		// script's directory (transformer_net.py, model.py), and cuDNN's
		// settings may be made there too: cudnn-benchmark-off reads both.
		for _, u := range f.Features.Conv {
			if s.siblingConv == nil {
				s.siblingConv = map[int]string{}
			}
			s.siblingConv[len(s.f.Features.Conv)] = mod
			s.f.Features.Conv = append(s.f.Features.Conv, Use{Name: fmt.Sprintf("%s in %s (line %d)", u.Name, filepath.Base(sub), u.Line), Pos: im.Pos})
			break
		}
		for _, u := range f.Features.CudnnBenchmark {
			u.Pos = im.Pos
			s.f.Features.CudnnBenchmark = append(s.f.Features.CudnnBenchmark, u)
		}
		for _, u := range f.Features.Deterministic {
			u.Pos = im.Pos
			s.f.Features.Deterministic = append(s.f.Features.Deterministic, u)
		}
	}
}

// importFunction keeps the module-level functions of a sibling module
// (sub its file, f its facts) that loop over a parameter, for the script
// to hand a DataLoader to: the one `from mod import name` (im) names, or
// every one for `import mod` (as m). Each is a Function named as the
// script's calls name it once resolved (mod.name), with Module set, its
// Iterates cut to its parameters, its lines 0 (they are in sub).
func (s *scanner) importFunction(im Import, mod, sub string, f *Facts) {
	if f == nil {
		return
	}
	name, one := strings.CutPrefix(im.Name, mod+".")
	if !one && im.Name != mod {
		return
	}
	for i, fn := range f.Functions {
		if one && fn.Name != name || len(fn.Params) > 0 && fn.Params[0] == "self" || nested(f.Functions, i) {
			continue
		}
		var it []string
		for _, p := range fn.Iterates {
			if slices.Contains(fn.Params, p) {
				it = append(it, p)
			}
		}
		if len(it) > 0 {
			s.imported = append(s.imported, Function{Name: mod + "." + fn.Name, Params: fn.Params, Iterates: it, Module: filepath.Base(sub)})
		}
	}
}

// nested reports whether fs[i] lies inside another def of fs.
func nested(fs []Function, i int) bool {
	for j, g := range fs {
		if j != i && g.Line <= fs[i].Line && fs[i].EndLine <= g.EndLine && (g.Line != fs[i].Line || g.EndLine != fs[i].EndLine) {
			return true
		}
	}
	return false
}

// placeSiblingConv moves a sibling module's convolution from the import
// line to the script's first construction of a class from that module
// (TransformerNet() for `from transformer_net import TransformerNet`),
// where the convolutional model is built; it stays at the import when the
// script builds none.
func (s *scanner) placeSiblingConv() {
	for i, mod := range s.siblingConv {
		var first *Call
		for j := range s.f.Calls {
			c := &s.f.Calls[j]
			cls, ok := strings.CutPrefix(c.Name, mod+".")
			if !ok || cls == "" || strings.Contains(cls, ".") || cls[0] < 'A' || cls[0] > 'Z' {
				continue
			}
			if first == nil || c.Line < first.Line || c.Line == first.Line && c.Column < first.Column {
				first = c
			}
		}
		if first != nil {
			s.f.Features.Conv[i].Pos = first.Pos
		}
	}
}

var identRE = regexp.MustCompile(`^[A-Za-z_]\w*$`)

// siblingModule returns the file of module mod ("a.b": a/b.py or
// a/b/__init__.py) under dir, "" when there is none.
func siblingModule(dir, mod string) string {
	parts := strings.Split(mod, ".")
	for _, p := range parts {
		if !identRE.MatchString(p) {
			return ""
		}
	}
	base := filepath.Join(append([]string{dir}, parts...)...)
	for _, c := range []string{base + ".py", filepath.Join(base, "__init__.py")} {
		if st, err := os.Stat(c); err == nil && st.Mode().IsRegular() {
			return c
		}
	}
	return ""
}

// readSibling reads a sibling module once per scan (readCapped): the
// class imports, the mixed precision and the importers may each need it.
func (s *scanner) readSibling(path string) ([]byte, error) {
	if r, ok := s.siblingSrc[path]; ok {
		return r.src, r.err
	}
	src, err := readCapped(path)
	if s.siblingSrc == nil {
		s.siblingSrc = map[string]siblingRead{}
	}
	s.siblingSrc[path] = siblingRead{src, err}
	return src, err
}

type siblingRead struct {
	src []byte
	err error
}

// errTooLarge is readCapped's error for a file over MaxScriptBytes.
var errTooLarge = fmt.Errorf("over the %d MiB a script may have (scanning takes about 0.5 GB per MiB; a generated or data file?)", MaxScriptBytes>>20)

// readCapped reads a script or a sibling module: a regular file (a FIFO
// would block) of at most MaxScriptBytes, read through a limit so a file
// growing after the check is cut there too.
func readCapped(path string) ([]byte, error) {
	if st, err := os.Stat(path); err != nil {
		return nil, err
	} else if !st.Mode().IsRegular() {
		return nil, errors.New("not a regular file") // checked before opening: opening a FIFO blocks
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxScriptBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxScriptBytes {
		return nil, errTooLarge
	}
	return b, nil
}
