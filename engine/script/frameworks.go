//go:build cgo

package script

import (
	"regexp"
	"strings"

	sitter "github.com/tree-sitter/go-tree-sitter"
)

// classInfo is what the scanner knows of a class defined in the script.
type classInfo struct {
	module   bool // a base names Module (nn.Module, LightningModule, ...)
	iterable bool // a base names IterableDataset
	// sliceItem is true when __getitem__ only returns subscripts of self
	// attributes (return self.data[i], or a tuple of them).
	sliceItem bool
	// small says why a Module class is small (a few narrow nn.Linear
	// layers, see smallNet); "" when not known.
	small string
	// init is the body of __init__ while the tree is alive (nil after).
	init *sitter.Node
}

// classDefs records the classes of the script before the prepass, so that
// constructions anywhere resolve.
func (s *scanner) classDefs(n *sitter.Node) {
	if n.Kind() == "function_definition" {
		if nm := n.ChildByFieldName("name"); nm != nil && !s.inClass(n) {
			s.defs[s.text(nm)] = n
		}
	}
	if n.Kind() == "class_definition" {
		if nm := n.ChildByFieldName("name"); nm != nil {
			ci := &classInfo{}
			if sc := n.ChildByFieldName("superclasses"); sc != nil {
				bases := s.text(sc)
				ci.module = strings.Contains(bases, "Module")
				ci.iterable = strings.Contains(bases, "IterableDataset")
			}
			for _, st := range methods(n) {
				if fn := st.ChildByFieldName("name"); fn != nil && s.text(fn) == "__getitem__" {
					ci.sliceItem = s.slicesOnly(st.ChildByFieldName("body"))
				}
				if fn := st.ChildByFieldName("name"); fn != nil && s.text(fn) == "__init__" {
					ci.init = st.ChildByFieldName("body")
				}
			}
			s.classes[s.text(nm)] = ci
		}
	}
	for _, c := range children(n) {
		s.classDefs(c)
	}
}

// inClass reports whether n lies inside a class body.
func (s *scanner) inClass(n *sitter.Node) bool {
	for p := n.Parent(); p != nil; p = p.Parent() {
		if p.Kind() == "class_definition" {
			return true
		}
	}
	return false
}

// slicesOnly reports whether a function body (docstrings and comments
// aside) is a single return of self.<x>[...] or a tuple of those.
func (s *scanner) slicesOnly(body *sitter.Node) bool {
	if body == nil {
		return false
	}
	var ret *sitter.Node
	for _, st := range namedChildren(body) {
		switch st.Kind() {
		case "comment":
		case "expression_statement":
			if st.NamedChildCount() == 1 && st.NamedChild(0).Kind() == "string" {
				continue
			}
			return false
		case "return_statement":
			if ret != nil {
				return false
			}
			ret = st
		default:
			return false
		}
	}
	if ret == nil || ret.NamedChildCount() != 1 {
		return false
	}
	v := ret.NamedChild(0)
	parts := []*sitter.Node{v}
	if v.Kind() == "tuple" || v.Kind() == "expression_list" {
		parts = namedChildren(v)
	}
	for _, p := range parts {
		if p.Kind() != "subscript" {
			return false
		}
		if o := p.ChildByFieldName("value"); o == nil || !strings.HasPrefix(s.text(o), "self.") {
			return false
		}
	}
	return len(parts) > 0
}

// bind remembers the value last assigned to each plain name of an
// assignment target (each name of a tuple target gets the whole value, and
// its position in the tuple is kept in allAssigns and elemIdx).
func (s *scanner) bind(l, r *sitter.Node) { s.bindAt(l, r, -1) }

func (s *scanner) bindAt(l, r *sitter.Node, idx int) {
	key := ""
	switch l.Kind() {
	case "identifier":
		key = s.text(l)
	case "attribute":
		if o := l.ChildByFieldName("object"); o != nil && s.text(o) == "self" {
			key = "self." + s.lastName(l)
		}
	case "pattern_list", "tuple_pattern", "list_pattern":
		for i, c := range namedChildren(l) {
			if idx < 0 {
				s.bindAt(c, r, i)
			} else {
				s.bindAt(c, r, -1) // nested patterns: the whole value
			}
		}
	}
	if key != "" {
		s.assigns[key] = r
		s.elemIdx[key] = idx
		s.allAssigns[key] = append(s.allAssigns[key], assigned{r, idx})
	}
}

// assigned is one value assigned to a name: idx is the name's position
// in a tuple target (a, b = f()), -1 for the whole value.
type assigned struct {
	v   *sitter.Node
	idx int
}

// returned lists what a call of a module-level function of the script
// returns: the value of each return statement, or its element idx when
// it returns a tuple (idx >= 0); nil when the callee is not such a function.
func (s *scanner) returned(call *sitter.Node, idx int) []*sitter.Node {
	fn := call.ChildByFieldName("function")
	if fn == nil || fn.Kind() != "identifier" {
		return nil
	}
	def := s.defs[s.text(fn)]
	if def == nil {
		return nil
	}
	var out []*sitter.Node
	var visit func(n *sitter.Node)
	visit = func(n *sitter.Node) {
		switch n.Kind() {
		case "function_definition", "class_definition", "lambda":
			return
		case "return_statement":
			if n.NamedChildCount() != 1 {
				return
			}
			v := n.NamedChild(0)
			if idx >= 0 {
				if (v.Kind() == "expression_list" || v.Kind() == "tuple") && int(v.NamedChildCount()) > idx {
					out = append(out, v.NamedChild(uint(idx)))
				}
				return
			}
			out = append(out, v)
			return
		}
		for _, c := range children(n) {
			visit(c)
		}
	}
	if b := def.ChildByFieldName("body"); b != nil {
		visit(b)
	}
	return out
}

// isModuleCtor reports whether a call of name builds an nn.Module.
func (s *scanner) isModuleCtor(name string) bool {
	if rest, ok := strings.CutPrefix(name, "torch.nn."); ok {
		base := rest[strings.LastIndex(rest, ".")+1:]
		return base != "" && base[0] >= 'A' && base[0] <= 'Z' && !strings.Contains(rest, "utils") && !strings.Contains(rest, "Parameter")
	}
	if strings.HasPrefix(name, "torchvision.models.") {
		return true
	}
	ci, ok := s.classes[name]
	return ok && ci.module
}

// isFramework reports whether name constructs an accelerate or Lightning
// object that places the model and batches itself.
func isFramework(name string) bool {
	root, _, _ := strings.Cut(name, ".")
	base := name[strings.LastIndex(name, ".")+1:]
	switch root {
	case "accelerate":
		return base == "Accelerator" || base == "PartialState"
	case "lightning", "pytorch_lightning", "lightning_fabric":
		return base == "Fabric" || base == "Trainer"
	case "transformers", "trl":
		// transformers.Trainer places the model and batches on the GPU.
		return strings.HasSuffix(base, "Trainer")
	}
	return false
}

// lightningTrainer reports whether name is Lightning's Trainer.
func lightningTrainer(name string) bool {
	root, _, _ := strings.Cut(name, ".")
	return (root == "lightning" || root == "pytorch_lightning") && strings.HasSuffix(name, ".Trainer")
}

// moduleName matches receiver names that are models.
var moduleName = regexp.MustCompile(`(?i)^(self\.)?(\w*_)?(model|net|network|module|generator|discriminator|netg|netd|encoder|decoder|transformer|backbone)$`)

// onModule reports whether method call n is invoked on an nn.Module.
func (s *scanner) onModule(n *sitter.Node) bool {
	if p := n.Parent(); p != nil && p.Kind() == "attribute" {
		if a := p.ChildByFieldName("attribute"); a != nil {
			switch s.text(a) {
			case "train", "eval", "parameters", "named_parameters", "modules", "state_dict", "share_memory":
				return true
			}
		}
	}
	r := s.receiver(n)
	if r == nil {
		return false
	}
	if r.Kind() == "call" && s.isModuleCtor(s.calleeName(r)) {
		return true
	}
	if r.Kind() != "identifier" && r.Kind() != "attribute" {
		return false
	}
	return s.modules[s.lastName(r)] || moduleName.MatchString(s.text(r))
}

// frameworkDevice reports whether a .to() call moves to <fw>.device of a
// framework whose loaders the script prepares.
func (s *scanner) frameworkDevice(pos []Value, kw map[string]Value) bool {
	v := param(pos, kw, "device", 0)
	fw, ok := strings.CutSuffix(v.Text, ".device")
	return ok && v.Kind == "name" && s.fws[fw] && s.prepped[fw]
}

// mixedPrecision reports whether a call sets reduced precision outside
// autocast (see Features.MixedPrecision).
func (s *scanner) mixedPrecision(n *sitter.Node, name string, pos []Value, kw map[string]Value) bool {
	if isFramework(name) {
		for _, k := range []string{"mixed_precision", "precision"} {
			v, ok := kw[k]
			if !ok {
				continue
			}
			if str, isStr := v.Value.(string); isStr {
				return str != "no" && !strings.HasPrefix(str, "32") && !strings.HasPrefix(str, "64")
			}
			if i, isInt := v.Value.(int64); isInt {
				return i == 16
			}
			return v.Kind != "none" // a variable: trusted to choose it
		}
		return false
	}
	// FSDP's MixedPrecision / FSDP2's MixedPrecisionPolicy cast parameters
	// and compute to param_dtype.
	if strings.HasSuffix(name, "FullyShardedDataParallel") || name == "torch.distributed.fsdp.fully_shard" || name == "torch.distributed._composable.fsdp.fully_shard" {
		if v, ok := kw["mixed_precision"]; ok {
			return v.Kind != "none"
		}
		if v, ok := kw["mp_policy"]; ok {
			return v.Kind != "none"
		}
		return false
	}
	// A policy object built with a reduced param_dtype is built to be
	// passed on (often through **kwargs, which the call above cannot see).
	if strings.HasSuffix(name, "MixedPrecisionPolicy") || name == "torch.distributed.fsdp.MixedPrecision" {
		v := kw["param_dtype"]
		return strings.HasSuffix(v.Text, "bfloat16") || strings.HasSuffix(v.Text, "float16") || strings.HasSuffix(v.Text, ".half")
	}
	switch name {
	case ".half", ".bfloat16":
		return s.onModule(n)
	case ".to":
		for _, v := range append(append([]Value{}, pos...), kw["dtype"]) {
			if strings.HasSuffix(v.Text, "bfloat16") || strings.HasSuffix(v.Text, "float16") || strings.HasSuffix(v.Text, ".half") {
				return s.onModule(n)
			}
		}
	}
	return false
}

// inMemoryDatasets are dataset classes known to hold their data in memory.
var inMemoryDatasets = map[string]string{
	"torch.utils.data.TensorDataset":    "TensorDataset",
	"lightning.pytorch.demos.WikiText2": "a demo dataset held in memory",
	"pytorch_lightning.demos.WikiText2": "a demo dataset held in memory",
}

var randomDataset = regexp.MustCompile(`^Random\w*Dataset$`)

// tokenDatasets are the InMemory reasons whose batches are token ids
// (tokenData reads the others by name).
var tokenDatasets = map[string]bool{
	"a tokenized dataset":           true,
	"a demo dataset held in memory": true, // lightning's WikiText2
}

// datasetFacts fills a DataLoader's InMemory, Eval, OneBatch and
// LiveSource from its call node.
func (s *scanner) datasetFacts(n *sitter.Node, dl *DataLoader, pos []Value, kw map[string]Value) {
	// The dataset expression: dataset= or the first positional argument.
	var ds *sitter.Node
	if al := n.ChildByFieldName("arguments"); al != nil {
		for _, a := range namedChildren(al) {
			if a.Kind() == "keyword_argument" {
				if nm := a.ChildByFieldName("name"); nm != nil && s.text(nm) == "dataset" {
					ds = a.ChildByFieldName("value")
					break
				}
				continue
			}
			if ds == nil && a.Kind() != "comment" && a.Kind() != "list_splat" && a.Kind() != "dictionary_splat" {
				ds = a
			}
		}
	}
	dl.InMemory, dl.LiveSource = s.datasetKind(ds, 0)
	dl.Tokens = tokenDatasets[dl.InMemory] || s.tokenData(ds, 0)
	// Eval: by the variable or the enclosing function's name.
	for _, name := range []string{dl.Var, s.text(s.enclosingDefOr(n))} {
		if evalNamed(name) {
			dl.Eval = true
		}
	}
	// next(iter(DataLoader(...))).
	if p := n.Parent(); p != nil && p.Kind() == "argument_list" {
		if it := p.Parent(); it != nil && it.Kind() == "call" && s.calleeName(it) == "iter" {
			if p2 := it.Parent(); p2 != nil && p2.Kind() == "argument_list" {
				if nx := p2.Parent(); nx != nil && nx.Kind() == "call" && s.calleeName(nx) == "next" {
					dl.OneBatch = true
				}
			}
		}
	}
}

// evalWord matches a word of a name that says evaluation, at the word's
// start (val_loader, testloader, validate, run_evaluation, predict_step,
// evalDataloader), not inside another word (retrieval, interval, latest).
var evalWord = regexp.MustCompile(`^(val|eval|test|predict)`)

// evalNamed reports whether a variable or function name says evaluation
// (val_loader, testloader, validate, run_evaluation, predict) and not
// training (train_and_validate). The words of a name are split at
// underscores, dots, digits and lower-to-upper case changes; value and
// values are not evaluation.
func evalNamed(name string) bool {
	if strings.Contains(strings.ToLower(name), "train") {
		return false
	}
	for _, w := range nameWords(name) {
		if evalWord.MatchString(w) && w != "value" && w != "values" {
			return true
		}
	}
	return false
}

// nameWords splits an identifier (or dotted, called text) into lower-case
// words: "evalDataloader" -> eval, dataloader; "val_loader2" -> val, loader.
func nameWords(name string) []string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	prevLower := false
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z':
			cur = append(cur, r)
			prevLower = true
		case r >= 'A' && r <= 'Z':
			if prevLower {
				flush()
			}
			cur = append(cur, r)
			prevLower = false
		default:
			flush()
			prevLower = false
		}
	}
	flush()
	return words
}

// tokenWord matches the names and arguments of token-id data: input_ids,
// tokens, token_ids, a (Random)TokenDataset class.
var tokenWord = regexp.MustCompile(`(?i)(input_ids|token)`)

// tokenData follows a dataset expression as datasetKind does and reports
// whether its items are token ids by name: a dataset class named for
// tokens (TokenDataset), or one built from input_ids or tokens
// (TensorDataset(enc["input_ids"], ...)).
func (s *scanner) tokenData(ds *sitter.Node, depth int) bool {
	if ds == nil || depth > 4 {
		return false
	}
	switch ds.Kind() {
	case "identifier", "attribute":
		key := s.text(ds)
		if tokenWord.MatchString(key) {
			return true
		}
		if ds.Kind() == "attribute" {
			key = "self." + s.lastName(ds)
		}
		if v, ok := s.assigns[key]; ok && v != ds {
			return s.tokenData(v, depth+1)
		}
	case "subscript":
		return s.tokenData(ds.ChildByFieldName("value"), depth+1)
	case "call":
		name := s.calleeName(ds)
		if tokenWord.MatchString(name[strings.LastIndex(name, ".")+1:]) {
			return true
		}
		if al := ds.ChildByFieldName("arguments"); al != nil && tokenWord.MatchString(s.text(al)) {
			return true
		}
	}
	return false
}

// datasetKind follows a dataset expression through assignments (a few
// hops) and says whether it is in memory (the reason) or a live source.
func (s *scanner) datasetKind(ds *sitter.Node, depth int) (string, bool) {
	if ds == nil || depth > 4 {
		return "", false
	}
	switch ds.Kind() {
	case "identifier", "attribute":
		key := s.text(ds)
		if ds.Kind() == "attribute" {
			key = "self." + s.lastName(ds)
		}
		if strings.Contains(strings.ToLower(key), "tokeniz") {
			return "a tokenized dataset", false
		}
		if s.transformed[key] {
			return "", false // ds.set_transform(f): f runs per sample, in the workers
		}
		if v, ok := s.assigns[key]; ok && v != ds {
			if rs := s.returned(v, s.elemIdx[key]); len(rs) > 0 {
				return s.datasetOfAll(rs, depth+1)
			}
			return s.datasetKind(v, depth+1)
		}
	case "subscript":
		return s.datasetKind(ds.ChildByFieldName("value"), depth+1)
	case "call":
		name := s.calleeName(ds)
		base := name[strings.LastIndex(name, ".")+1:]
		if why, ok := inMemoryDatasets[name]; ok {
			return why, false
		}
		if randomDataset.MatchString(base) {
			return "a synthetic random dataset", false
		}
		if rs := s.returned(ds, -1); len(rs) > 0 {
			return s.datasetOfAll(rs, depth+1)
		}
		if ci, ok := s.classes[name]; ok {
			if ci.sliceItem {
				return "a class whose __getitem__ returns self.<x>[i]", false
			}
			if ci.iterable && strings.Contains(s.text(ds), "self.") {
				return "", true
			}
		}
		if al := ds.ChildByFieldName("arguments"); al != nil && strings.Contains(strings.ToLower(s.text(al)), "tokeniz") {
			return "a tokenized dataset", false
		}
		// ds.map(group_texts) keeps what ds is: a tokenized table stays
		// tokenized; a table of images decoded per item does not become one.
		if name == ".map" {
			if r := s.receiver(ds); r != nil {
				if why, _ := s.datasetKind(r, depth+1); why == "a tokenized dataset" {
					return why, false
				}
			}
		}
		// random_split(ds, ...), Subset(ds, ...): the first argument.
		if base == "random_split" || base == "Subset" {
			if al := ds.ChildByFieldName("arguments"); al != nil && al.NamedChildCount() > 0 {
				return s.datasetKind(al.NamedChild(0), depth+1)
			}
		}
	}
	return "", false
}

// datasetOfAll is datasetKind of the values a function may return: in
// memory only when every one is (the first reason), live when any is.
func (s *scanner) datasetOfAll(rs []*sitter.Node, depth int) (string, bool) {
	why := ""
	for _, r := range rs {
		w, live := s.datasetKind(r, depth)
		if live {
			return "", true
		}
		if w == "" {
			return "", false
		}
		if why == "" {
			why = w
		}
	}
	return why, false
}

// enclosingDefOr returns the name node of the innermost def around n, or
// n itself at module level (whose text then names no function).
func (s *scanner) enclosingDefOr(n *sitter.Node) *sitter.Node {
	if fn := s.enclosingDef(n); fn != nil {
		return fn
	}
	return n.ChildByFieldName("function")
}

// enclosingDef returns the name node of the innermost def around n.
func (s *scanner) enclosingDef(n *sitter.Node) *sitter.Node {
	for p := n.Parent(); p != nil; p = p.Parent() {
		if p.Kind() == "function_definition" {
			return p.ChildByFieldName("name")
		}
	}
	return nil
}

// forwardAndGrads reports whether a loop body (nested loops included,
// defs, lambdas and classes not) runs a model's forward, a call of a name
// like model or net or of its .forward (Loop.Forward), and whether it
// reads gradients: .backward(), .grad, requires_grad, torch.autograd.*
// (Loop.UsesGrad).
func (s *scanner) forwardAndGrads(n *sitter.Node) (forward, grads bool) {
	switch n.Kind() {
	case "function_definition", "class_definition", "lambda":
		return false, false
	case "call":
		if fn := n.ChildByFieldName("function"); fn != nil {
			t := s.text(fn)
			if moduleName.MatchString(t) {
				forward = true
			} else if o, ok := strings.CutSuffix(t, ".forward"); ok && moduleName.MatchString(o) {
				forward = true
			}
			if strings.HasPrefix(s.calleeName(n), "torch.autograd.") {
				grads = true
			}
		}
	case "attribute":
		switch s.text(n.ChildByFieldName("attribute")) {
		case "backward", "grad", "requires_grad", "requires_grad_":
			grads = true
		}
	}
	for _, c := range children(n) {
		f, g := s.forwardAndGrads(c)
		forward, grads = forward || f, grads || g
	}
	return forward, grads
}

// callsModel reports whether a loop body calls a model outside nested
// loops and functions (see Loop.CallsModel).
func (s *scanner) callsModel(n *sitter.Node) bool {
	switch n.Kind() {
	case "for_statement", "while_statement", "function_definition", "class_definition":
		return false
	case "call":
		if fn := n.ChildByFieldName("function"); fn != nil {
			t := s.text(fn)
			if t == "self" || moduleName.MatchString(t) {
				return true
			}
			if fn.Kind() == "attribute" {
				if o := fn.ChildByFieldName("object"); o != nil && moduleName.MatchString(s.text(o)) {
					return true
				}
			}
		}
	}
	for _, c := range children(n) {
		if s.callsModel(c) {
			return true
		}
	}
	return false
}
