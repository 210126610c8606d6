package rules

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/expr-lang/expr"
	exprast "github.com/expr-lang/expr/ast"
	exprbuiltin "github.com/expr-lang/expr/builtin"
	"github.com/expr-lang/expr/vm/runtime"
)

// Bounds on one evaluation of an expr rule (its when, impact, message and
// evidence together, on one set of facts). expr's own VM counts the
// elements of ranges, array and map literals and a few built-ins (at most
// exprVMBudget); everything else that builds a string, an array or a map of
// a size the rule chooses (repeat, replace, join, split, upper, lower,
// string, concat, flatten, sprintf, fixed, string +, ...) goes through the
// bounded versions below, which charge the bytes they are about to build
// against exprByteBudget before building it. Every iteration of a
// predicate (all, map, filter, reduce, sortBy, ...) costs one of
// exprStepBudget and checks whether the evaluation was stopped (its
// timeout passed), so a rule that times out ends at its next iteration or
// allocation instead of running on beside the next rule.
const (
	exprByteBudget = 16 << 20
	exprStepBudget = 1_000_000
	exprVMBudget   = 1_000_000
	// exprRunName is the env field through which the bounded built-ins
	// reach the running evaluation; rules cannot name it (stepdoctor_ is
	// reserved).
	exprRunName     = "stepdoctor_run"
	exprReserved    = "stepdoctor_"
	exprMaxDecimals = 20
	exprMaxWidth    = 1000
)

// Built-ins rules cannot call: the clock and time zones (rules are
// deterministic and read no files), and encoders whose output size is
// not worth bounding for rules over numeric facts.
var exprDisabled = []string{"now", "date", "timezone", "toJSON", "fromJSON", "toBase64", "fromBase64"}

// exprRun is the state of one evaluation.
type exprRun struct {
	bytes   int64       // left of exprByteBudget
	steps   int64       // left of exprStepBudget
	stopped atomic.Bool // set when the evaluation's time is up
}

func newExprRun() *exprRun { return &exprRun{bytes: exprByteBudget, steps: exprStepBudget} }

var errExprStopped = errors.New("evaluation stopped: the rule's timeout passed")

// charge takes n bytes from the budget before they are allocated.
func (r *exprRun) charge(n int64, what string) error {
	if r.stopped.Load() {
		return errExprStopped
	}
	if n < 0 || n > r.bytes {
		return fmt.Errorf("%s would build more than the %d MiB an expr rule may build in one evaluation", what, exprByteBudget>>20)
	}
	r.bytes -= n
	return nil
}

func (r *exprRun) step() error {
	if r.stopped.Load() {
		return errExprStopped
	}
	r.steps--
	if r.steps < 0 {
		return fmt.Errorf("an expr rule may iterate at most %d times in one evaluation", exprStepBudget)
	}
	return nil
}

// exprRunning counts expr evaluations still running (tests check that a
// timed-out one has ended when Evaluate returns).
var exprRunning atomic.Int64

// sizeOf estimates the bytes of v and of its text form, stopping once past
// limit.
func sizeOf(v any, limit int64) int64 {
	var n int64
	var walk func(rv reflect.Value)
	walk = func(rv reflect.Value) {
		if n > limit {
			return
		}
		switch rv.Kind() {
		case reflect.Invalid:
			n += 8
		case reflect.String:
			n += int64(rv.Len()) + 16
		case reflect.Pointer, reflect.Interface:
			if rv.IsNil() {
				n += 8
				return
			}
			walk(rv.Elem())
		case reflect.Slice, reflect.Array:
			n += 24
			for i := 0; i < rv.Len() && n <= limit; i++ {
				walk(rv.Index(i))
			}
		case reflect.Map:
			n += 48
			it := rv.MapRange()
			for it.Next() && n <= limit {
				walk(it.Key())
				walk(it.Value())
			}
		case reflect.Struct:
			for i := 0; i < rv.NumField() && n <= limit; i++ {
				walk(rv.Field(i))
			}
		default:
			n += 32 // a number or bool, as text
		}
	}
	walk(reflect.ValueOf(v))
	return n
}

// runArg takes the evaluation state the patch put first in a bounded call.
func runArg(args []any) (*exprRun, []any, error) {
	if len(args) == 0 {
		return nil, nil, errors.New("internal: bounded call without its evaluation")
	}
	r, ok := args[0].(*exprRun)
	if !ok || r == nil {
		return nil, nil, errors.New("internal: bounded call without its evaluation")
	}
	return r, args[1:], nil
}

func wantArgs(name string, args []any, lo, hi int) error {
	if len(args) < lo || len(args) > hi {
		if lo == hi {
			return fmt.Errorf("%s: want %d arguments, got %d", name, lo, len(args))
		}
		return fmt.Errorf("%s: want %d to %d arguments, got %d", name, lo, hi, len(args))
	}
	return nil
}

func str(name string, v any) (string, error) {
	s, ok := deref(v).(string)
	if !ok {
		return "", fmt.Errorf("%s: %T is not a string", name, v)
	}
	return s, nil
}

func length(v any) int64 {
	rv := reflect.ValueOf(deref(v))
	switch rv.Kind() {
	case reflect.Slice, reflect.Array, reflect.Map, reflect.String:
		return int64(rv.Len())
	}
	return 0
}

// callBuiltin runs expr's own implementation of a built-in.
func callBuiltin(name string, args []any) (any, error) {
	f := exprbuiltin.Builtins[exprbuiltin.Index[name]]
	switch {
	case f.Fast != nil:
		return f.Fast(args[0]), nil
	case f.Safe != nil:
		out, _, err := f.Safe(args...)
		return out, err
	default:
		return f.Func(args...)
	}
}

// bounded is a built-in replaced by a version that charges cost(args)
// bytes before running expr's own implementation.
type bounded struct {
	name   string
	lo, hi int
	cost   func(args []any) (int64, error)
	out    any // a func type: the result type for the checker
}

func sliceCost(args []any) (int64, error) { return 16 * length(args[0]), nil }

var boundedBuiltins = []bounded{
	{name: "repeat", lo: 2, hi: 2, out: new(func(*exprRun, ...any) string), cost: func(a []any) (int64, error) {
		s, err := str("repeat", a[0])
		if err != nil {
			return 0, err
		}
		n := runtime.ToInt(deref(a[1]))
		if n < 0 {
			return 0, fmt.Errorf("repeat: negative count %d", n)
		}
		if len(s) > 0 && n > exprByteBudget/len(s)+1 {
			return exprByteBudget + 1, nil
		}
		return int64(len(s)) * int64(n), nil
	}},
	{name: "replace", lo: 3, hi: 4, out: new(func(*exprRun, ...any) string), cost: func(a []any) (int64, error) {
		var ss [3]string
		for i := range ss {
			s, err := str("replace", a[i])
			if err != nil {
				return 0, err
			}
			ss[i] = s
		}
		n := int64(strings.Count(ss[0], ss[1]))
		if len(a) == 4 {
			if m := int64(runtime.ToInt(deref(a[3]))); m >= 0 && m < n {
				n = m
			}
		}
		return int64(len(ss[0])) + n*int64(len(ss[2])), nil
	}},
	{name: "join", lo: 1, hi: 2, out: new(func(*exprRun, ...any) string), cost: func(a []any) (int64, error) {
		glue := int64(0)
		if len(a) == 2 {
			g, err := str("join", a[1])
			if err != nil {
				return 0, err
			}
			glue = int64(len(g))
		}
		rv := reflect.ValueOf(deref(a[0]))
		if rv.Kind() != reflect.Slice && rv.Kind() != reflect.Array {
			return 0, fmt.Errorf("join: %T is not an array", a[0])
		}
		var n int64
		for i := 0; i < rv.Len() && n <= exprByteBudget; i++ {
			n += glue + sizeOf(rv.Index(i).Interface(), exprByteBudget)
		}
		return n, nil
	}},
	{name: "split", lo: 2, hi: 3, out: new(func(*exprRun, ...any) []string), cost: splitCost("split")},
	{name: "splitAfter", lo: 2, hi: 3, out: new(func(*exprRun, ...any) []string), cost: splitCost("splitAfter")},
	{name: "upper", lo: 1, hi: 1, out: new(func(*exprRun, ...any) string), cost: caseCost("upper")},
	{name: "lower", lo: 1, hi: 1, out: new(func(*exprRun, ...any) string), cost: caseCost("lower")},
	{name: "string", lo: 1, hi: 1, out: new(func(*exprRun, ...any) string), cost: func(a []any) (int64, error) {
		if _, ok := a[0].(string); ok {
			return 0, nil
		}
		return sizeOf(a[0], exprByteBudget), nil
	}},
	{name: "concat", lo: 1, hi: 1 << 20, out: new(func(*exprRun, ...any) []any), cost: func(a []any) (int64, error) {
		var n int64
		for _, x := range a {
			n += 16 * length(x)
		}
		return n, nil
	}},
	{name: "flatten", lo: 1, hi: 1, out: new(func(*exprRun, ...any) []any), cost: func(a []any) (int64, error) {
		var n int64
		var walk func(v reflect.Value)
		walk = func(v reflect.Value) {
			for v.Kind() == reflect.Interface || v.Kind() == reflect.Pointer {
				if v.IsNil() {
					return
				}
				v = v.Elem()
			}
			if v.Kind() != reflect.Slice && v.Kind() != reflect.Array {
				n += 16
				return
			}
			for i := 0; i < v.Len() && n <= exprByteBudget; i++ {
				walk(v.Index(i))
			}
		}
		walk(reflect.ValueOf(a[0]))
		return n, nil
	}},
	{name: "keys", lo: 1, hi: 1, out: new(func(*exprRun, ...any) []any), cost: sliceCost},
	{name: "values", lo: 1, hi: 1, out: new(func(*exprRun, ...any) []any), cost: sliceCost},
	{name: "toPairs", lo: 1, hi: 1, out: new(func(*exprRun, ...any) []any), cost: func(a []any) (int64, error) { return 64 * length(a[0]), nil }},
	{name: "fromPairs", lo: 1, hi: 1, out: new(func(*exprRun, ...any) map[any]any), cost: func(a []any) (int64, error) { return 64 * length(a[0]), nil }},
	{name: "uniq", lo: 1, hi: 1, out: new(func(*exprRun, ...any) []any), cost: func(a []any) (int64, error) { return 64 * length(a[0]), nil }},
	{name: "reverse", lo: 1, hi: 1, out: new(func(*exprRun, ...any) []any), cost: sliceCost},
	{name: "sort", lo: 1, hi: 2, out: new(func(*exprRun, ...any) []any), cost: sliceCost},
}

func splitCost(name string) func([]any) (int64, error) {
	return func(a []any) (int64, error) {
		s, err := str(name, a[0])
		if err != nil {
			return 0, err
		}
		sep, err := str(name, a[1])
		if err != nil {
			return 0, err
		}
		n := int64(strings.Count(s, sep)) + 1
		if sep == "" {
			n = int64(utf8.RuneCountInString(s))
		}
		if len(a) == 3 {
			if m := int64(runtime.ToInt(deref(a[2]))); m >= 0 && m < n {
				n = m
			}
		}
		return 16 * n, nil
	}
}

func caseCost(name string) func([]any) (int64, error) {
	return func(a []any) (int64, error) {
		s, err := str(name, a[0])
		if err != nil {
			return 0, err
		}
		return 3 * int64(len(s)), nil // a case change can grow a rune (at most to 3 bytes)
	}
}

// boundedOptions registers the bounded built-ins, the helpers pct, fixed
// and sprintf, the internal string +, regex match and predicate step,
// and the patch that routes calls through them.
func boundedOptions() []expr.Option {
	opts := []expr.Option{expr.MaxNodes(2000), expr.Patch(exprBounder{})}
	for _, name := range exprDisabled {
		opts = append(opts, expr.DisableBuiltin(name))
	}
	for _, b := range boundedBuiltins {
		opts = append(opts, expr.Function(b.name, func(args ...any) (any, error) {
			r, args, err := runArg(args)
			if err != nil {
				return nil, err
			}
			if err := wantArgs(b.name, args, b.lo, b.hi); err != nil {
				return nil, err
			}
			for i := range args {
				args[i] = deref(args[i])
			}
			n, err := b.cost(args)
			if err != nil {
				return nil, err
			}
			if err := r.charge(n, b.name); err != nil {
				return nil, err
			}
			return callBuiltin(b.name, args)
		}, b.out))
	}
	opts = append(opts,
		expr.Function("pct", func(args ...any) (any, error) {
			_, args, err := runArg(args)
			if err != nil {
				return nil, err
			}
			f, ok := numeric(args[0])
			if !ok {
				return nil, fmt.Errorf("pct: %v is not a number", args[0])
			}
			return strconv.FormatFloat(f*100, 'f', 1, 64) + "%", nil
		}, new(func(*exprRun, any) string)),
		expr.Function("fixed", func(args ...any) (any, error) {
			_, args, err := runArg(args)
			if err != nil {
				return nil, err
			}
			f, ok := numeric(args[0])
			if !ok {
				return nil, fmt.Errorf("fixed: %v is not a number", args[0])
			}
			n := args[1].(int)
			if n < 0 || n > exprMaxDecimals {
				return nil, fmt.Errorf("fixed: %d decimals is outside 0..%d", n, exprMaxDecimals)
			}
			return strconv.FormatFloat(f, 'f', n, 64), nil
		}, new(func(*exprRun, any, int) string)),
		expr.Function("sprintf", func(args ...any) (any, error) {
			r, args, err := runArg(args)
			if err != nil {
				return nil, err
			}
			format := args[0].(string)
			rest := make([]any, len(args)-1)
			var argMax int64
			for i, a := range args[1:] {
				rest[i] = deref(a)
				argMax = max(argMax, sizeOf(rest[i], exprByteBudget))
			}
			n, err := sprintfBound(format, argMax)
			if err != nil {
				return nil, fmt.Errorf("sprintf: %w", err)
			}
			if err := r.charge(n, "sprintf"); err != nil {
				return nil, err
			}
			return fmt.Sprintf(format, rest...), nil
		}, new(func(*exprRun, string, ...any) string)),
		expr.Function("stepdoctor_concat", func(args ...any) (any, error) {
			r, args, err := runArg(args)
			if err != nil {
				return nil, err
			}
			a, b := args[0].(string), args[1].(string)
			if err := r.charge(int64(len(a))+int64(len(b)), "string +"); err != nil {
				return nil, err
			}
			return a + b, nil
		}, new(func(*exprRun, string, string) string)),
		expr.Function("stepdoctor_add", func(args ...any) (any, error) {
			r, args, err := runArg(args)
			if err != nil {
				return nil, err
			}
			a, b := deref(args[0]), deref(args[1])
			if sa, ok := a.(string); ok {
				if sb, ok := b.(string); ok {
					if err := r.charge(int64(len(sa))+int64(len(sb)), "string +"); err != nil {
						return nil, err
					}
					return sa + sb, nil
				}
			}
			return runtime.Add(a, b), nil
		}, new(func(*exprRun, any, any) any)),
		expr.Function("stepdoctor_matches", func(args ...any) (any, error) {
			r, args, err := runArg(args)
			if err != nil {
				return nil, err
			}
			s, err := str("matches", args[0])
			if err != nil {
				return nil, err
			}
			p, err := str("matches", args[1])
			if err != nil {
				return nil, err
			}
			if err := r.charge(64*int64(len(p)), "matches"); err != nil {
				return nil, err
			}
			re, err := regexp.Compile(p)
			if err != nil {
				return nil, fmt.Errorf("matches: %w", err)
			}
			return re.MatchString(s), nil
		}, new(func(*exprRun, any, any) bool)),
		expr.Function("stepdoctor_step", func(args ...any) (any, error) {
			r, _, err := runArg(args)
			if err != nil {
				return nil, err
			}
			return nil, r.step()
		}, new(func(*exprRun) any)),
	)
	return opts
}

// sprintfBound bounds the length of fmt.Sprintf(format, args...) when no
// argument renders longer than argMax: widths and precisions above
// exprMaxWidth and * are refused, and each verb (an explicit [n] index can
// repeat an argument) renders at most argMax plus its width.
func sprintfBound(format string, argMax int64) (int64, error) {
	n := int64(len(format))
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		i++
		num := 0
		for ; i < len(format); i++ {
			c := format[i]
			switch {
			case c >= '0' && c <= '9':
				num = num*10 + int(c-'0')
				if num > exprMaxWidth {
					return 0, fmt.Errorf("width or precision over %d in %q", exprMaxWidth, format)
				}
				continue
			case c == '*':
				return 0, fmt.Errorf("* width or precision in %q is not allowed", format)
			case c == '.' || c == '[' || c == ']' || strings.IndexByte("+-# ", c) >= 0:
				num = 0
				continue
			}
			break
		}
		n += argMax + 2*exprMaxWidth + 64
	}
	return n, nil
}

// exprBounder routes a compiled rule through the bounded built-ins: a
// call of one gets the evaluation state as its first argument, a string
// (or untyped) + becomes a bounded concatenation, a regex match on a
// computed pattern is charged, and every predicate body takes a step
// first.
type exprBounder struct{}

func (exprBounder) Visit(node *exprast.Node) {
	run := func() exprast.Node { return &exprast.IdentifierNode{Value: exprRunName} }
	switch n := (*node).(type) {
	case *exprast.CallNode:
		id, ok := n.Callee.(*exprast.IdentifierNode)
		if !ok || !isBoundedName(id.Value) {
			return
		}
		if len(n.Arguments) > 0 {
			if a, ok := n.Arguments[0].(*exprast.IdentifierNode); ok && a.Value == exprRunName {
				return
			}
		}
		exprast.Patch(node, &exprast.CallNode{Callee: n.Callee, Arguments: append([]exprast.Node{run()}, n.Arguments...)})
	case *exprast.BinaryNode:
		switch n.Operator {
		case "+":
			ls, lu := stringish(n.Left)
			rs, ru := stringish(n.Right)
			switch {
			case ls && rs:
				exprast.Patch(node, &exprast.CallNode{Callee: &exprast.IdentifierNode{Value: "stepdoctor_concat"}, Arguments: []exprast.Node{run(), n.Left, n.Right}})
			case ls || rs || lu || ru:
				exprast.Patch(node, &exprast.CallNode{Callee: &exprast.IdentifierNode{Value: "stepdoctor_add"}, Arguments: []exprast.Node{run(), n.Left, n.Right}})
			}
		case "matches":
			if _, ok := n.Right.(*exprast.StringNode); ok {
				return // compiled once, with the rule
			}
			exprast.Patch(node, &exprast.CallNode{Callee: &exprast.IdentifierNode{Value: "stepdoctor_matches"}, Arguments: []exprast.Node{run(), n.Left, n.Right}})
		}
	case *exprast.PredicateNode:
		if s, ok := n.Node.(*exprast.SequenceNode); ok && len(s.Nodes) == 2 {
			if c, ok := s.Nodes[0].(*exprast.CallNode); ok {
				if id, ok := c.Callee.(*exprast.IdentifierNode); ok && id.Value == "stepdoctor_step" {
					return
				}
			}
		}
		step := &exprast.CallNode{Callee: &exprast.IdentifierNode{Value: "stepdoctor_step"}, Arguments: []exprast.Node{run()}}
		n.Node = &exprast.SequenceNode{Nodes: []exprast.Node{step, n.Node}}
	}
}

func isBoundedName(name string) bool {
	switch name {
	case "pct", "fixed", "sprintf":
		return true
	}
	for _, b := range boundedBuiltins {
		if b.name == name {
			return true
		}
	}
	return false
}

// stringish reports whether a node is statically a string, or of a type
// not known until it runs.
func stringish(n exprast.Node) (isString, unknown bool) {
	t := n.Type()
	if t == nil {
		return false, true
	}
	switch t.Kind() {
	case reflect.String:
		return true, false
	case reflect.Interface:
		return false, true
	}
	return false, false
}

// checkReserved refuses rule text naming the internal stepdoctor_ names.
func checkReserved(tree exprast.Node) error {
	var err error
	exprast.Walk(&tree, visitor(func(n *exprast.Node) {
		if id, ok := (*n).(*exprast.IdentifierNode); ok && strings.HasPrefix(id.Value, exprReserved) && err == nil {
			err = fmt.Errorf("%s: names starting with %s are reserved", id.Value, exprReserved)
		}
	}))
	return err
}
