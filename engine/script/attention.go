//go:build cgo

package script

import (
	"slices"
	"strings"

	sitter "github.com/tree-sitter/go-tree-sitter"
)

// fusedAttention are the names through which a script reaches a fused
// attention kernel (FlashAttention, memory-efficient or cuDNN attention),
// called or only referenced (getattr(F, "scaled_dot_product_attention"),
// attn_fn = F.scaled_dot_product_attention if flash else manual), and
// Hugging Face's dispatch among attention implementations: a file that
// names one has chosen its attention path (Features.FusedAttention).
var fusedAttention = map[string]bool{
	"scaled_dot_product_attention":            true,
	"_scaled_dot_product_flash_attention":     true,
	"_scaled_dot_product_efficient_attention": true,
	"_scaled_dot_product_cudnn_attention":     true,
	"flex_attention":                          true,
	"flash_attn_func":                         true,
	"flash_attn_varlen_func":                  true,
	"flash_attn_qkvpacked_func":               true,
	"flash_attn_kvpacked_func":                true,
	"flash_attn_with_kvcache":                 true,
	"memory_efficient_attention":              true,
	"ALL_ATTENTION_FUNCTIONS":                 true,
	"_attn_implementation":                    true,
}

// fusedAttentionName returns the fused attention name node n is (an
// identifier, an attribute's last name, or a string holding one), "" for
// none. The caller does not pass an attribute's name identifier on its
// own.
func (s *scanner) fusedAttentionName(n *sitter.Node) string {
	switch n.Kind() {
	case "identifier":
		if t := s.text(n); fusedAttention[t] {
			if r := s.resolve(n); r != "" {
				return r
			}
			return t
		}
	case "attribute":
		if fusedAttention[s.lastName(n)] {
			if r := s.resolve(n); r != "" {
				return r
			}
			return s.text(n)
		}
	case "string":
		if t := strings.Trim(s.text(n), `"'`); fusedAttention[t] {
			return t
		}
	}
	return ""
}

// attention records, per def, attention written out by hand
// (Features.ManualAttention): a softmax over the last dimension of scores
// that come from a product of activations with a transposed operand
// (q @ k.transpose(-2, -1), torch.matmul(q, k.mT), torch.bmm(q,
// k.permute(0, 2, 1)), q @ k_t after k_t = k.transpose(2, 3), or an
// einsum that contracts the last index of both inputs,
// "bhqd,bhkd->bhqk"), whose result, directly or through names assigned
// from it (dropout), is multiplied again (att @ v). Names carry the scores
// through the statements between (masked_fill, scaling, an added bias).
// The walk is straight-line over each def's statements in source order,
// branches included and nested defs left to their own walk. A product
// with a transposed parameter (x @ self.w_gate.T, fc.weight.t()) is a
// projection, and a softmax over another dimension (slot attention's
// dim=1) is not what a fused kernel computes: neither counts.
func (s *scanner) attention(root *sitter.Node) {
	mods := s.softmaxModules(root)
	var walk func(n *sitter.Node)
	walk = func(n *sitter.Node) {
		if n.Kind() == "function_definition" {
			if body := n.ChildByFieldName("body"); body != nil {
				a := attentionWalk{s: s, mods: mods, scores: map[string]bool{}, probs: map[string]*sitter.Node{}, transposed: map[string]bool{}, params: map[string]bool{}, seen: map[uint]bool{}}
				a.block(body)
			}
		}
		if name := s.fusedAttentionName(n); name != "" {
			s.f.Features.FusedAttention = append(s.f.Features.FusedAttention, Use{Name: name, Pos: s.pos(n)})
		}
		if n.Kind() == "attribute" { // its name is not a name of its own
			if o := n.ChildByFieldName("object"); o != nil {
				walk(o)
			}
			return
		}
		for _, c := range children(n) {
			walk(c)
		}
	}
	walk(root)
}

// softmaxModules maps the names assigned an nn.Softmax module (self.attend
// = nn.Softmax(dim=-1), sm = torch.nn.Softmax(-1)) to whether its dim is
// the last (-1).
func (s *scanner) softmaxModules(root *sitter.Node) map[string]bool {
	mods := map[string]bool{}
	var walk func(n *sitter.Node)
	walk = func(n *sitter.Node) {
		if n.Kind() == "assignment" {
			l, r := n.ChildByFieldName("left"), n.ChildByFieldName("right")
			if l != nil && r != nil && r.Kind() == "call" && s.calleeName(r) == "torch.nn.Softmax" {
				pos, kw, _ := s.args(r)
				mods[s.text(l)] = lastDim(param(pos, kw, "dim", 0))
			}
		}
		for _, c := range children(n) {
			walk(c)
		}
	}
	walk(root)
	return mods
}

// lastDim reports whether a softmax's dim argument is the literal -1.
func lastDim(v Value) bool {
	return v.Present && (v.Kind == "int" && v.Value == int64(-1) || strings.ReplaceAll(v.Text, " ", "") == "-1")
}

// attentionWalk is the state of one def's walk: the names holding
// attention scores, those holding their softmax (with the softmax call
// that made them), and those holding a transposed activation.
type attentionWalk struct {
	s          *scanner
	mods       map[string]bool // softmaxModules
	scores     map[string]bool
	probs      map[string]*sitter.Node
	transposed map[string]bool
	params     map[string]bool // names assigned a parameter (emb = self.embed.weight)
	seen       map[uint]bool   // softmax calls already reported, by start byte
	// memo holds the current statement's exprInfo per node, so that a
	// product reads its operands' without walking them again.
	memo map[uintptr]exprInfo
}

// exprInfo is what an expression holds, computed once bottom-up.
type exprInfo struct {
	scores  bool         // a product with a transposed operand, or a name holding scores
	probs   *sitter.Node // the softmax behind a name it reads, or a softmax call of scores in it
	product bool         // a product of a softmax of scores (the attention's output)
}

// block walks a def's statements in source order, nested defs and classes
// excepted.
func (a *attentionWalk) block(n *sitter.Node) {
	for _, c := range namedChildren(n) {
		switch c.Kind() {
		case "function_definition", "class_definition", "decorated_definition":
			continue
		case "expression_statement":
			for _, e := range namedChildren(c) {
				if e.Kind() == "assignment" || e.Kind() == "augmented_assignment" {
					a.assignment(e)
				} else {
					a.statement(e)
				}
			}
		case "return_statement":
			a.statement(c)
		default:
			a.block(c)
		}
	}
}

// statement computes what n holds, reporting the products of a softmax of
// scores in it.
func (a *attentionWalk) statement(n *sitter.Node) exprInfo {
	a.memo = map[uintptr]exprInfo{}
	return a.expr(n)
}

// assignment moves the target names between scores, probs and neither by
// what the value holds, and reports a product of probs. A chain
// (a = b = value) assigns every target the one value, computed once.
func (a *attentionWalk) assignment(n *sitter.Node) {
	var names []string
	right := n
	for right != nil && (right.Kind() == "assignment" || right.Kind() == "augmented_assignment") {
		if left := right.ChildByFieldName("left"); left != nil {
			names = append(names, a.targets(left)...)
		}
		right = right.ChildByFieldName("right")
	}
	if right == nil {
		return
	}
	v := a.statement(right)
	transposed := a.transposedActivation(right)
	param := parameter(a.s, a.base(right))
	for _, name := range names {
		a.transposed[name] = transposed
		a.params[name] = param
		switch {
		case v.product: // y = att @ v: the attention's output
			delete(a.scores, name)
			delete(a.probs, name)
		case v.probs != nil: // the softmax, or dropout of it
			delete(a.scores, name)
			a.probs[name] = v.probs
		case v.scores: // the scores, masked or scaled
			delete(a.probs, name)
			a.scores[name] = true
		case n.Kind() != "augmented_assignment":
			delete(a.scores, name)
			delete(a.probs, name)
		}
	}
}

// targets are the plain names an assignment's left side binds.
func (a *attentionWalk) targets(left *sitter.Node) []string {
	switch left.Kind() {
	case "identifier":
		return []string{a.s.text(left)}
	case "pattern_list", "tuple_pattern":
		var out []string
		for _, c := range namedChildren(left) {
			if c.Kind() == "identifier" {
				out = append(out, a.s.text(c))
			}
		}
		return out
	}
	return nil
}

// expr computes what n holds from its parts, once per node: the names it
// reads (not attribute names, the att of self.att, nor keyword names),
// products with a transposed operand, softmax calls of scores, and
// products of such a softmax, which it reports.
func (a *attentionWalk) expr(n *sitter.Node) exprInfo {
	var v exprInfo
	switch n.Kind() {
	case "function_definition", "class_definition":
		return v
	case "identifier":
		name := a.s.text(n)
		v = exprInfo{scores: a.scores[name], probs: a.probs[name]}
	case "attribute":
		if o := n.ChildByFieldName("object"); o != nil {
			v = a.expr(o)
		}
	case "keyword_argument":
		if val := n.ChildByFieldName("value"); val != nil {
			v = a.expr(val)
		}
	default:
		for _, c := range children(n) {
			w := a.expr(c)
			v.scores = v.scores || w.scores
			v.product = v.product || w.product
			if v.probs == nil {
				v.probs = w.probs
			}
		}
	}
	if n.Kind() == "call" {
		if a.softmaxCall(n) {
			v.probs = n
		} else if a.s.calleeName(n) == "torch.einsum" && contractsLast(a.s, n) && a.activations(a.s.productOperands(n)) {
			v.scores = true
		}
	}
	ops := a.s.productOperands(n)
	if a.activations(ops) && slices.ContainsFunc(ops, func(op *sitter.Node) bool {
		return a.transposedActivation(op) || op.Kind() == "identifier" && a.transposed[a.s.text(op)]
	}) {
		v.scores = true
	}
	for _, op := range ops {
		if sm := a.memo[op.Id()].probs; sm != nil {
			a.report(sm)
			v.product = true
		}
	}
	a.memo[n.Id()] = v
	return v
}

// activations reports whether a product's operands are all activations:
// none is a parameter (an attribute of self, a .weight, or a name assigned
// one: emb = self.embed.weight), nor missing. q @ k^T multiplies two;
// x @ self.w_gate.T is a projection or a gate.
func (a *attentionWalk) activations(ops []*sitter.Node) bool {
	if len(ops) < 2 {
		return false
	}
	for _, op := range ops {
		if op == nil {
			return false
		}
		if parameter(a.s, a.base(op)) || a.base(op).Kind() == "identifier" && a.params[a.s.text(a.base(op))] {
			return false
		}
	}
	return true
}

// base strips a transpose and parentheses from an operand: the tensor it
// transposes (self.w of self.w.T, k of k.transpose(-2, -1)).
func (a *attentionWalk) base(n *sitter.Node) *sitter.Node {
	for {
		n = unparen(n)
		next := transposed(a.s, n)
		if next == nil && n.Kind() == "call" {
			switch a.s.calleeName(n) {
			case ".contiguous", ".float", ".to":
				next = a.s.receiver(n)
			}
		}
		if next == nil {
			return n
		}
		n = next
	}
}

// unparen strips the parentheses around one expression.
func unparen(n *sitter.Node) *sitter.Node {
	for n.Kind() == "parenthesized_expression" {
		c := namedChildren(n)
		if len(c) != 1 {
			return n
		}
		n = c[0]
	}
	return n
}

// transposed returns the tensor n transposes when n is a transpose of its
// last two dimensions or a permutation (x.transpose(-2, -1), x.mT, x.T,
// x.t(), x.permute(...), torch.transpose(x, ...)); nil otherwise.
func transposed(s *scanner, n *sitter.Node) *sitter.Node {
	switch n.Kind() {
	case "attribute":
		if l := s.lastName(n); l == "mT" || l == "T" {
			return n.ChildByFieldName("object")
		}
	case "call":
		switch s.calleeName(n) {
		case ".transpose", ".permute", ".t":
			return s.receiver(n)
		case "torch.transpose", "torch.permute":
			if args := n.ChildByFieldName("arguments"); args != nil {
				if c := namedChildren(args); len(c) > 0 {
					return c[0]
				}
			}
		}
	}
	return nil
}

// softmaxCall reports whether call n is a softmax over the last dimension
// (F.softmax / torch.softmax / .softmax with dim -1, or an nn.Softmax(dim=-1)
// module) of scores: its input, or a method's receiver, holds them.
func (a *attentionWalk) softmaxCall(n *sitter.Node) bool {
	name := a.s.calleeName(n)
	fn := n.ChildByFieldName("function")
	module := fn != nil && a.mods[a.s.text(fn)]
	if !module && name != "torch.nn.functional.softmax" && name != "torch.softmax" && name != "torch.special.softmax" && name != ".softmax" {
		return false
	}
	pos, kw, _ := a.s.args(n)
	var input *sitter.Node
	first := func() *sitter.Node {
		if args := n.ChildByFieldName("arguments"); args != nil {
			if c := namedChildren(args); len(c) > 0 && c[0].Kind() != "keyword_argument" {
				return c[0]
			}
		}
		return nil
	}
	switch {
	case module: // self.attend = nn.Softmax(dim=-1)
		input = first()
	case name != ".softmax":
		if !lastDim(param(pos, kw, "dim", 1)) {
			return false
		}
		input = first()
	case name == ".softmax":
		if !lastDim(param(pos, kw, "dim", 0)) {
			return false
		}
		input = a.s.receiver(n)
	}
	return input != nil && a.memo[input.Id()].scores
}

func (a *attentionWalk) report(sm *sitter.Node) {
	if a.seen[sm.StartByte()] {
		return
	}
	a.seen[sm.StartByte()] = true
	a.s.f.Features.ManualAttention = append(a.s.f.Features.ManualAttention, Use{Name: a.s.calleeName(sm), Pos: a.s.pos(sm)})
}

// transposedActivation reports whether n ends in a transpose of an
// activation: x.transpose(-2, -1), x.mT, x.T, x.t(), x.permute(...),
// torch.transpose(x, ...), where x is not a parameter (an attribute of
// self, or a .weight: x @ self.w_gate.T is a projection, not scores).
func (a *attentionWalk) transposedActivation(n *sitter.Node) bool {
	base := transposed(a.s, unparen(n))
	return base != nil && !parameter(a.s, base)
}

// parameter reports whether n names a parameter-like tensor: an attribute
// chain rooted at self (self.w_gate, self.codebook.weight) or ending in
// .weight.
func parameter(s *scanner, n *sitter.Node) bool {
	if n.Kind() != "attribute" {
		return false
	}
	if s.lastName(n) == "weight" {
		return true
	}
	for n.Kind() == "attribute" {
		n = n.ChildByFieldName("object")
		if n == nil {
			return false
		}
	}
	return n.Kind() == "identifier" && s.text(n) == "self"
}

// productOperands returns the operands of a matrix product n (x @ y,
// torch.matmul / torch.bmm / torch.baddbmm, an einsum's tensors), nil
// when n is none.
func (s *scanner) productOperands(n *sitter.Node) []*sitter.Node {
	switch n.Kind() {
	case "binary_operator":
		if op := n.ChildByFieldName("operator"); op != nil && s.text(op) == "@" {
			return []*sitter.Node{n.ChildByFieldName("left"), n.ChildByFieldName("right")}
		}
	case "call":
		switch s.calleeName(n) {
		case "torch.matmul", "torch.bmm", "torch.baddbmm", "torch.einsum", ".matmul", ".bmm", ".baddbmm":
			var ops []*sitter.Node
			if r := s.receiver(n); r != nil {
				ops = append(ops, r)
			}
			if args := n.ChildByFieldName("arguments"); args != nil {
				for _, c := range namedChildren(args) {
					switch c.Kind() {
					case "string":
					case "keyword_argument": // baddbmm(input, batch1=q, batch2=k)
						if v := c.ChildByFieldName("value"); v != nil {
							ops = append(ops, v)
						}
					default:
						ops = append(ops, c)
					}
				}
			}
			return ops
		}
	}
	return nil
}

// contractsLast reports whether an einsum call's equation contracts the
// last index of its two inputs (q k^T written as "bhqd,bhkd->bhqk").
func contractsLast(s *scanner, call *sitter.Node) bool {
	args := call.ChildByFieldName("arguments")
	if args == nil {
		return false
	}
	c := namedChildren(args)
	if len(c) == 0 || c[0].Kind() != "string" {
		return false
	}
	eq := strings.ReplaceAll(strings.Trim(s.text(c[0]), `"'`), " ", "")
	lhs, out, ok := strings.Cut(eq, "->")
	if !ok {
		return false
	}
	in := strings.Split(lhs, ",")
	if len(in) != 2 || in[0] == "" || in[1] == "" {
		return false
	}
	last := in[0][len(in[0])-1]
	return in[1][len(in[1])-1] == last && last != '.' && !strings.ContainsRune(out, rune(last))
}
