//go:build cgo

package script

import (
	"strings"

	sitter "github.com/tree-sitter/go-tree-sitter"
)

// fusedAttention are the calls that run attention in one fused kernel
// (FlashAttention, memory-efficient attention): a script that calls one
// has chosen its attention path (Features.FusedAttention).
var fusedAttention = []string{
	"torch.nn.functional.scaled_dot_product_attention",
	"torch.nn.attention.flex_attention.flex_attention",
	"flash_attn.",
	"xformers.ops.memory_efficient_attention",
}

// isFusedAttention reports whether a callee's canonical name is one of
// fusedAttention (a prefix ending in "." covers a package).
func isFusedAttention(name string) bool {
	for _, f := range fusedAttention {
		if name == f || strings.HasSuffix(f, ".") && strings.HasPrefix(name, f) {
			return true
		}
	}
	return false
}

// attention records, per def, attention written out by hand
// (Features.ManualAttention): a softmax over scores that come from a
// product with a transposed operand (q @ k.transpose(-2, -1),
// torch.matmul(q, k.mT), torch.bmm(q, k.permute(0, 2, 1)), or an einsum
// that contracts the last index of both inputs, "bhqd,bhkd->bhqk"), whose
// result, directly or through names assigned from it (dropout), is
// multiplied again (att @ v). Names carry the scores through the
// statements between (masked_fill, scaling, an added bias). The walk is
// straight-line over each def's statements in source order, branches
// included and nested defs left to their own walk.
func (s *scanner) attention(n *sitter.Node) {
	if n.Kind() == "function_definition" {
		if body := n.ChildByFieldName("body"); body != nil {
			a := attentionWalk{s: s, scores: map[string]bool{}, probs: map[string]*sitter.Node{}, seen: map[uint]bool{}}
			a.block(body)
		}
	}
	if n.Kind() == "call" && isFusedAttention(s.calleeName(n)) {
		s.f.Features.FusedAttention = append(s.f.Features.FusedAttention, Use{Name: s.calleeName(n), Pos: s.pos(n)})
	}
	for _, c := range children(n) {
		s.attention(c)
	}
}

// attentionWalk is the state of one def's walk: the names holding
// attention scores, and those holding their softmax (with the softmax
// call that made them).
type attentionWalk struct {
	s      *scanner
	scores map[string]bool
	probs  map[string]*sitter.Node
	seen   map[uint]bool // softmax calls already reported, by start byte
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
// what the value holds, and reports a product of probs.
func (a *attentionWalk) assignment(n *sitter.Node) {
	left, right := n.ChildByFieldName("left"), n.ChildByFieldName("right")
	if left == nil || right == nil {
		return
	}
	if right.Kind() == "assignment" { // a = b = value
		a.assignment(right)
		right = right.ChildByFieldName("right")
		if right == nil {
			return
		}
	}
	var names []string
	if left.Kind() == "identifier" {
		names = []string{a.s.text(left)}
	} else if left.Kind() == "pattern_list" || left.Kind() == "tuple_pattern" {
		for _, c := range namedChildren(left) {
			if c.Kind() == "identifier" {
				names = append(names, a.s.text(c))
			}
		}
	}
	v := a.statement(right)
	for _, name := range names {
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
		if sm := a.softmaxCall(n); sm {
			v.probs = n
		} else if a.s.calleeName(n) == "torch.einsum" && contractsLast(a.s, n) {
			v.scores = true
		}
	}
	for _, op := range a.s.productOperands(n) {
		if op == nil {
			continue
		}
		if transposed(a.s, op) {
			v.scores = true
		}
		if sm := a.memo[op.Id()].probs; sm != nil {
			a.report(sm)
			v.product = true
		}
	}
	a.memo[n.Id()] = v
	return v
}

// softmaxCall reports whether call n is a softmax (F.softmax,
// torch.softmax, .softmax) of scores: its first positional argument, or a
// method's receiver, holds them.
func (a *attentionWalk) softmaxCall(n *sitter.Node) bool {
	name := a.s.calleeName(n)
	if name != "torch.nn.functional.softmax" && name != "torch.softmax" && name != ".softmax" {
		return false
	}
	if args := n.ChildByFieldName("arguments"); args != nil {
		if c := namedChildren(args); len(c) > 0 && c[0].Kind() != "keyword_argument" && a.memo[c[0].Id()].scores {
			return true
		}
	}
	r := a.s.receiver(n)
	return name == ".softmax" && r != nil && a.memo[r.Id()].scores
}

func (a *attentionWalk) report(sm *sitter.Node) {
	if a.seen[sm.StartByte()] {
		return
	}
	a.seen[sm.StartByte()] = true
	a.s.f.Features.ManualAttention = append(a.s.f.Features.ManualAttention, Use{Name: a.s.calleeName(sm), Pos: a.s.pos(sm)})
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
		case "torch.matmul", "torch.bmm", "torch.baddbmm", "torch.einsum", ".matmul", ".bmm":
			var ops []*sitter.Node
			if r := s.receiver(n); r != nil {
				ops = append(ops, r)
			}
			if args := n.ChildByFieldName("arguments"); args != nil {
				for _, c := range namedChildren(args) {
					if c.Kind() != "keyword_argument" && c.Kind() != "string" {
						ops = append(ops, c)
					}
				}
			}
			return ops
		}
	}
	return nil
}

// transposed reports whether n ends in a transpose of its last two
// dimensions or a permutation: x.transpose(-2, -1), x.mT, x.T,
// x.permute(...), torch.transpose(x, ...).
func transposed(s *scanner, n *sitter.Node) bool {
	for n != nil && n.Kind() == "parenthesized_expression" {
		c := namedChildren(n)
		if len(c) != 1 {
			return false
		}
		n = c[0]
	}
	if n == nil {
		return false
	}
	switch n.Kind() {
	case "attribute":
		a := s.lastName(n)
		return a == "mT" || a == "T"
	case "call":
		switch s.calleeName(n) {
		case ".transpose", ".permute", ".t", "torch.transpose", "torch.permute":
			return true
		}
	}
	return false
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
