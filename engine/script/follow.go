//go:build cgo

package script

import (
	"strings"

	sitter "github.com/tree-sitter/go-tree-sitter"
)

// Step functions: bodies that run once per step although no loop of their
// own encloses them.
//
//   - A module-level function of the script called by name from a step loop
//     (for batch in loader: loss = train_step(model, batch)), or a method
//     of the enclosing class called on self (self._run_batch(x, y)), and the
//     functions it calls in turn, up to maxFollowDepth calls deep.
//   - Step hooks (stepHooks): the training_step of a class whose bases name
//     LightningModule, which Lightning's Trainer calls once per batch
//     (LightningModule docs, "training_step"), and the compute_loss /
//     training_step overrides of a transformers Trainer subclass.
//
// Each becomes a Loop of Kind "function" (Step true) whose Parent is the
// calling step loop (-1 for training_step); the calls and conditions of its
// body, already recorded by the walk with no step loop, get that loop as
// their Loop and StepLoop, with InnerLoop and Conditional taken from the
// call site (a helper called under `if step % 100 == 0:` is conditional).
// A function that has a step loop of its own (an evaluate(model, loader)
// called from the training loop) is not followed: its loop is already one.

// maxFollowDepth bounds how many calls deep step functions are followed.
const maxFollowDepth = 3

// follow is a function body queued to be walked as a step function.
type follow struct {
	def    *sitter.Node // the function_definition
	caller ctx          // the call site's position; stepLoop -1 for training_step
	call   *sitter.Node // the call; nil for training_step
	depth  int          // 1 for a call from a step loop
	// framework names the framework that calls a step hook (stepHooks),
	// whose batchParam-th parameter is the batch; "" for a call.
	framework  string
	batchParam int
}

// queueFollow queues the module-level function a call in a step loop
// names, or the method of the enclosing class a self.method(...) call
// names, once per function.
func (s *scanner) queueFollow(n *sitter.Node, c ctx) {
	if c.stepLoop < 0 {
		return
	}
	fn := n.ChildByFieldName("function")
	if fn == nil {
		return
	}
	var def *sitter.Node
	switch fn.Kind() {
	case "identifier":
		def = s.defs[s.text(fn)]
	case "attribute":
		obj, attr := fn.ChildByFieldName("object"), fn.ChildByFieldName("attribute")
		if obj != nil && attr != nil && obj.Kind() == "identifier" && s.text(obj) == "self" {
			def = s.methodOf(n, s.text(attr))
		}
	}
	if def == nil || s.followed[def.StartByte()] || s.hasStepLoop(def) {
		return
	}
	depth := s.f.Loops[c.stepLoop].depth + 1
	if depth > maxFollowDepth {
		return
	}
	s.followed[def.StartByte()] = true
	s.follows = append(s.follows, follow{def: def, caller: c, call: n, depth: depth})
}

// methodOf returns the def of method name in the class that encloses n,
// or nil.
func (s *scanner) methodOf(n *sitter.Node, name string) *sitter.Node {
	cls := n.Parent()
	for cls != nil && cls.Kind() != "class_definition" {
		cls = cls.Parent()
	}
	if cls == nil {
		return nil
	}
	for _, def := range methods(cls) {
		if nm := def.ChildByFieldName("name"); nm != nil && s.text(nm) == name {
			return def
		}
	}
	return nil
}

// methods returns the function_definition nodes of a class's body,
// decorated or not.
func methods(cls *sitter.Node) []*sitter.Node {
	body := cls.ChildByFieldName("body")
	if body == nil {
		return nil
	}
	var out []*sitter.Node
	for _, st := range namedChildren(body) {
		if st.Kind() == "decorated_definition" {
			st = st.ChildByFieldName("definition")
		}
		if st != nil && st.Kind() == "function_definition" {
			out = append(out, st)
		}
	}
	return out
}

// hasStepLoop reports whether a function's body holds a step loop.
func (s *scanner) hasStepLoop(def *sitter.Node) bool {
	lo, hi := def.StartByte(), def.EndByte()
	for at, idx := range s.loopAt {
		if at >= lo && at < hi && s.f.Loops[idx].Step {
			return true
		}
	}
	return false
}

// stepFunctions walks the step functions: LightningModule.training_step
// methods, then the functions queued from step loops, breadth first (a
// step function's own calls queue more).
func (s *scanner) stepFunctions(root *sitter.Node) {
	s.hooks(root)
	for i := 0; i < len(s.follows); i++ {
		s.followBody(s.follows[i])
	}
	for i := range s.f.Calls {
		s.f.Calls[i].StepRoot = s.stepRoot(s.f.Calls[i].StepLoop)
	}
	for i := range s.f.Conditions {
		s.f.Conditions[i].StepRoot = s.stepRoot(s.f.Conditions[i].StepLoop)
	}
}

func (s *scanner) stepRoot(stepLoop int) int {
	if stepLoop < 0 {
		return -1
	}
	return s.f.Loops[stepLoop].Root
}

// stepHooks are methods a training framework calls once per step: the
// class's bases name Base, the method is Method, its Param-th parameter
// (self is 0) receives the batch.
var stepHooks = []struct {
	Base, Method, Framework string
	Param                   int
}{
	// LightningModule.training_step(self, batch, batch_idx)
	{"LightningModule", "training_step", "Lightning", 1},
	// transformers.Trainer.compute_loss(self, model, inputs, ...) and
	// training_step(self, model, inputs, ...), overridden in subclasses.
	{"Trainer", "compute_loss", "the Trainer", 2},
	{"Trainer", "training_step", "the Trainer", 2},
}

// hooks queues the step hooks (stepHooks) of every class that
// overrides one.
func (s *scanner) hooks(n *sitter.Node) {
	if n.Kind() == "class_definition" {
		if sc := n.ChildByFieldName("superclasses"); sc != nil {
			bases := s.text(sc)
			for _, st := range methods(n) {
				nm := st.ChildByFieldName("name")
				if nm == nil || s.followed[st.StartByte()] || s.hasStepLoop(st) {
					continue
				}
				for _, h := range stepHooks {
					if s.text(nm) != h.Method || !strings.Contains(bases, h.Base) || h.Base == "Trainer" && strings.Contains(bases, "LightningModule") {
						continue
					}
					s.followed[st.StartByte()] = true
					if h.Base == "Trainer" {
						// a transformers Trainer subclass: the Trainer picks the GPU
						s.f.Features.Frameworks = append(s.f.Features.Frameworks, Use{Name: "transformers.Trainer", Pos: s.pos(nm)})
					}
					s.follows = append(s.follows, follow{def: st, caller: ctx{loop: -1, stepLoop: -1, profiler: -1}, depth: 1, framework: h.Framework, batchParam: h.Param})
					break
				}
			}
		}
	}
	for _, c := range namedChildren(n) {
		s.hooks(c)
	}
}

// followBody adds the step function's Loop and walks its body.
func (s *scanner) followBody(f follow) {
	body := f.def.ChildByFieldName("body")
	name := f.def.ChildByFieldName("name")
	if body == nil || name == nil {
		return
	}
	l := Loop{Kind: "function", Function: s.text(name), Framework: f.framework, Parent: f.caller.stepLoop, Pos: s.pos(f.def), depth: f.depth}
	l.EndLine = int(body.StartPosition().Row) + 1
	if f.call != nil {
		l.CallLine = s.pos(f.call).Line
	}
	l.Trains = f.framework != "" || s.trainsDirectly(body)
	l.CallsModel = s.callsModel(body)
	l.Step = true
	idx := len(s.f.Loops)
	l.Root = idx
	if f.caller.stepLoop >= 0 {
		l.Root = s.f.Loops[f.caller.stepLoop].Root
	}
	s.f.Loops = append(s.f.Loops, l)

	tensors, strong := map[string]bool{}, map[string]bool{}
	s.collectTensors(f.def, tensors)
	s.collectStrong(f.def, false, strong)
	s.bindParams(f, tensors, strong)
	if s.tensors == nil {
		s.tensors = map[int]map[string]bool{}
	}
	if s.strong == nil {
		s.strong = map[int]map[string]bool{}
	}
	s.tensors[idx], s.strong[idx] = tensors, strong
	// collectStrong learns names from the parameters too: run it again.
	s.collectStrong(f.def, false, strong)

	c := ctx{loop: idx, stepLoop: idx, innerLoop: f.caller.innerLoop, conditional: f.caller.conditional, profiler: -1}
	s.followWalk(body, c)
}

// bindParams marks the parameters that receive tensors: training_step's
// batch; for a called function, the parameters whose argument at the call
// site is a tensor in the caller's step loop.
func (s *scanner) bindParams(f follow, tensors, strong map[string]bool) {
	params := s.paramNames(f.def)
	if f.framework != "" {
		if len(params) > f.batchParam {
			tensors[params[f.batchParam]], strong[params[f.batchParam]] = true, true
		}
		return
	}
	al := f.call.ChildByFieldName("arguments")
	if al == nil || al.Kind() != "argument_list" {
		return
	}
	callerT, callerS := s.tensors[f.caller.stepLoop], s.strong[f.caller.stepLoop]
	bind := func(param string, arg *sitter.Node) {
		if s.strongValued(arg, callerS) {
			tensors[param], strong[param] = true, true
		} else if arg.Kind() == "identifier" && callerT[s.text(arg)] || s.tensorValued(arg) {
			tensors[param] = true
		}
	}
	i := 0
	for _, a := range namedChildren(al) {
		switch a.Kind() {
		case "comment", "list_splat", "dictionary_splat":
			continue
		case "keyword_argument":
			k, v := a.ChildByFieldName("name"), a.ChildByFieldName("value")
			if k != nil && v != nil {
				for _, p := range params {
					if p == s.text(k) {
						bind(p, v)
					}
				}
			}
			continue
		}
		if i < len(params) {
			bind(params[i], a)
		}
		i++
	}
}

// paramNames lists a function's parameter names in order (not *args,
// **kwargs).
func (s *scanner) paramNames(def *sitter.Node) []string {
	ps := def.ChildByFieldName("parameters")
	if ps == nil {
		return nil
	}
	var out []string
	for _, p := range namedChildren(ps) {
		switch p.Kind() {
		case "identifier":
			out = append(out, s.text(p))
		case "typed_parameter":
			if p.NamedChildCount() > 0 && p.NamedChild(0).Kind() == "identifier" {
				out = append(out, s.text(p.NamedChild(0)))
			}
		case "default_parameter", "typed_default_parameter":
			if nm := p.ChildByFieldName("name"); nm != nil {
				out = append(out, s.text(nm))
			}
		}
	}
	return out
}

// followWalk walks a step function's body: it moves the calls and
// conditions the walk recorded outside any step loop into the step
// function, as walk does inside a step loop.
func (s *scanner) followWalk(n *sitter.Node, c ctx) {
	switch n.Kind() {
	case "function_definition", "class_definition", "lambda":
		return
	case "for_statement", "while_statement":
		idx, ok := s.loopAt[n.StartByte()]
		if ok && s.f.Loops[idx].Step {
			return // a step loop of its own: walked already
		}
		inner := c
		inner.innerLoop = true
		if ok {
			inner.loop = idx
		}
		if n.Kind() == "while_statement" {
			s.condition("while", n.ChildByFieldName("condition"), c, c.conditional)
		}
		for _, ch := range children(n) {
			if r := n.ChildByFieldName("right"); r != nil && ch.Id() == r.Id() {
				s.followWalk(ch, c)
				continue
			}
			s.followWalk(ch, inner)
		}
		return
	case "if_statement":
		cond, guard := n.ChildByFieldName("condition"), s.ifCondition(n, c)
		constant := s.runConstant(cond)
		body := n.ChildByFieldName("consequence")
		for _, ch := range children(n) {
			cc := c
			if (cond == nil || ch.Id() != cond.Id()) && !(constant && body != nil && ch.Id() == body.Id()) {
				cc.conditional = true
				cc.guard = guard
			}
			s.followWalk(ch, cc)
		}
		return
	case "elif_clause":
		c.guard = s.elifCondition(n, c)
		c.conditional = true
	case "conditional_expression":
		c.conditional = true
		c.guard = 0 // x if t else y: a test no Condition records
	case "else_clause":
		c.conditional = true
	case "call":
		if i, ok := s.callAt[span{n.StartByte(), n.EndByte()}]; ok && s.f.Calls[i].StepLoop < 0 {
			call := &s.f.Calls[i]
			call.Loop, call.StepLoop, call.InnerLoop, call.Conditional, call.Guard = c.loop, c.stepLoop, c.innerLoop, c.conditional, c.guard-1
			s.stepArgs(n, c.stepLoop, call)
			s.queueFollow(n, c)
		}
	}
	for _, ch := range children(n) {
		s.followWalk(ch, c)
	}
}
