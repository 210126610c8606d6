package rules

import (
	"fmt"
	"math"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/topdown"
)

// Bounds on what one evaluation of a Rego rule builds. OPA has no memory
// budget of its own, and a rule chooses the size of what some built-ins
// build: sprintf("%0999999d", [1]) is a megabyte, concat with it as the
// delimiter over a 100,000-element array is 100 GB, asked for at once,
// long before the rule's timeout. Those built-ins are wrapped (once, in
// OPA's global registry, before the first rule compiles) to charge the
// bytes they are about to build, or 16 bytes per array element, against
// regoByteBudget per evaluation (the per-query built-in cache holds what
// is left), and to refuse sprintf widths and precisions over
// exprMaxWidth, as the expr rules' bounds do. Going over is a built-in
// error naming the built-in; rules evaluate with strict built-in errors,
// so the rule fails and is listed under "Rule errors".
//
// What a rule builds with the other built-ins grows with what it already
// holds (split, array.concat, upper, json.marshal, comprehensions), and
// its timeout bounds that.
const (
	regoByteBudget = exprByteBudget
	regoElemBytes  = 16
)

// regoBudget is the per-evaluation key of the bytes left, in the
// built-in cache OPA makes for each query evaluation.
type regoBudget struct{}

var boundRegoOnce sync.Once

// boundRego wraps the sized built-ins (see regoByteBudget).
func boundRego() {
	boundRegoOnce.Do(func() {
		for name, size := range map[string]func([]*ast.Term) (int64, error){
			ast.Sprintf.Name:          sprintfSize,
			ast.Concat.Name:           concatSize,
			ast.Replace.Name:          replaceSize,
			ast.ReplaceN.Name:         replaceNSize,
			ast.RegexReplace.Name:     regexReplaceSize,
			ast.NumbersRange.Name:     rangeSize,
			ast.NumbersRangeStep.Name: rangeSize,
		} {
			orig := topdown.GetBuiltin(name)
			if orig == nil {
				continue
			}
			topdown.RegisterBuiltinFunc(name, boundedBuiltin(name, size, orig))
		}
	})
}

// boundedBuiltin charges size(operands) before running orig. Operands of
// the wrong type are left to orig, which reports them. OPA prefixes the
// errors with the built-in's name. For sprintf, whose bound is loose (a
// verb may render any argument), the bound only has to fit the whole
// budget, and the string built is charged at its length.
func boundedBuiltin(name string, size func([]*ast.Term) (int64, error), orig topdown.BuiltinFunc) topdown.BuiltinFunc {
	loose := name == ast.Sprintf.Name
	return func(bctx topdown.BuiltinContext, operands []*ast.Term, iter func(*ast.Term) error) error {
		n, err := size(operands)
		if err != nil {
			return err
		}
		if loose {
			if n < 0 || n > regoByteBudget {
				return errRegoBudget
			}
			return orig(bctx, operands, func(t *ast.Term) error {
				if s, ok := regoStr(t); ok {
					if err := chargeRego(bctx, int64(len(s))); err != nil {
						return err
					}
				}
				return iter(t)
			})
		}
		if err := chargeRego(bctx, n); err != nil {
			return err
		}
		return orig(bctx, operands, iter)
	}
}

var errRegoBudget = fmt.Errorf("would build more than the %d MiB a Rego rule may build in one evaluation", regoByteBudget>>20)

// chargeRego takes n bytes from what the evaluation may still build.
func chargeRego(bctx topdown.BuiltinContext, n int64) error {
	left := int64(regoByteBudget)
	if bctx.Cache != nil {
		if v, ok := bctx.Cache.Get(regoBudget{}); ok {
			left = v.(int64)
		}
	}
	if n < 0 || n > left {
		return errRegoBudget
	}
	if bctx.Cache != nil {
		bctx.Cache.Put(regoBudget{}, left-n)
	}
	return nil
}

func regoStr(t *ast.Term) (string, bool) {
	if t == nil {
		return "", false
	}
	s, ok := t.Value.(ast.String)
	return string(s), ok
}

// sprintfSize bounds sprintf(format, args): each verb renders at most the
// longest argument plus its width (sprintfBound).
func sprintfSize(ops []*ast.Term) (int64, error) {
	format, ok := regoStr(ops[0])
	if !ok || len(ops) < 2 {
		return 0, nil
	}
	var argMax int64
	if arr, ok := ops[1].Value.(*ast.Array); ok {
		for i := range arr.Len() {
			argMax = max(argMax, renderedSize(arr.Elem(i)))
		}
	}
	return sprintfBound(format, argMax)
}

// renderedSize bounds the length of a term as sprintf renders it: its
// strings and numbers, plus a few bytes of punctuation per element.
func renderedSize(t *ast.Term) int64 {
	switch v := t.Value.(type) {
	case ast.String:
		return int64(len(v)) + 2
	case ast.Number:
		return int64(len(v)) + 2
	case *ast.Array:
		var n int64 = 2
		for i := range v.Len() {
			n += renderedSize(v.Elem(i)) + 2
		}
		return n
	case ast.Set:
		var n int64 = 2
		v.Foreach(func(e *ast.Term) { n += renderedSize(e) + 2 })
		return n
	case ast.Object:
		var n int64 = 2
		v.Foreach(func(k, e *ast.Term) { n += renderedSize(k) + renderedSize(e) + 4 })
		return n
	}
	return 16
}

// concatSize is the length of concat(delimiter, strings).
func concatSize(ops []*ast.Term) (int64, error) {
	delim, ok := regoStr(ops[0])
	if !ok {
		return 0, nil
	}
	var n, count int64
	add := func(t *ast.Term) {
		if s, ok := regoStr(t); ok {
			n += int64(len(s))
		}
		count++
	}
	switch v := ops[1].Value.(type) {
	case *ast.Array:
		for i := range v.Len() {
			add(v.Elem(i))
		}
	case ast.Set:
		v.Foreach(add)
	}
	if count > 1 {
		n += int64(len(delim)) * (count - 1)
	}
	return n, nil
}

// occurrences counts old in s the way strings.Replace does: an empty old
// matches before every rune and at the end.
func occurrences(s, old string) int64 {
	if old == "" {
		return int64(utf8.RuneCountInString(s)) + 1
	}
	return int64(strings.Count(s, old))
}

// replaceSize bounds replace(x, old, new).
func replaceSize(ops []*ast.Term) (int64, error) {
	s, ok1 := regoStr(ops[0])
	old, ok2 := regoStr(ops[1])
	repl, ok3 := regoStr(ops[2])
	if !ok1 || !ok2 || !ok3 {
		return 0, nil
	}
	return int64(len(s)) + occurrences(s, old)*int64(len(repl)), nil
}

// replaceNSize bounds strings.replace_n(patterns, x): every pattern's
// replacement at each of its occurrences.
func replaceNSize(ops []*ast.Term) (int64, error) {
	obj, ok := ops[0].Value.(ast.Object)
	s, ok2 := regoStr(ops[1])
	if !ok || !ok2 {
		return 0, nil
	}
	n := int64(len(s))
	obj.Foreach(func(k, v *ast.Term) {
		old, ok1 := regoStr(k)
		repl, ok2 := regoStr(v)
		if ok1 && ok2 {
			n += occurrences(s, old) * int64(len(repl))
		}
	})
	return n, nil
}

// regexReplaceSize bounds regex.replace(s, pattern, value): each match
// writes value, whose $ references each expand to at most all of s.
func regexReplaceSize(ops []*ast.Term) (int64, error) {
	s, ok1 := regoStr(ops[0])
	pattern, ok2 := regoStr(ops[1])
	value, ok3 := regoStr(ops[2])
	if !ok1 || !ok2 || !ok3 {
		return 0, nil
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return 0, nil // the built-in reports the pattern
	}
	matches := int64(len(re.FindAllStringIndex(s, -1)))
	per := int64(len(value)) + int64(strings.Count(value, "$"))*int64(len(s))
	return int64(len(s)) + matches*per, nil
}

// rangeSize is the array numbers.range(a, b) or numbers.range_step(a, b,
// step) builds, at regoElemBytes an element.
func rangeSize(ops []*ast.Term) (int64, error) {
	a, ok1 := number(ops[0])
	b, ok2 := number(ops[1])
	if !ok1 || !ok2 {
		return 0, nil
	}
	step := 1.0
	if len(ops) >= 3 {
		if st, ok := number(ops[2]); ok && st > 0 {
			step = st
		}
	}
	elems := math.Floor(math.Abs(b-a)/step) + 1
	if elems > math.MaxInt64/regoElemBytes {
		return -1, nil
	}
	return int64(elems) * regoElemBytes, nil
}

func number(t *ast.Term) (float64, bool) {
	if t == nil {
		return 0, false
	}
	n, ok := t.Value.(ast.Number)
	if !ok {
		return 0, false
	}
	return n.Float64()
}
