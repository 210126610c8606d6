//go:build cgo

package script

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

var _ = flag.Bool("update", false, "accepted for go test ./... -update; this package has no golden files")

func scan(t *testing.T, src string) *Facts {
	t.Helper()
	f, err := Scan("t.py", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestImportAliases(t *testing.T) {
	f := scan(t, `import torch.nn.functional as F
from torch.utils.data import DataLoader as DL
from torch import optim
import torch
x = F.relu(y)
loader = DL(ds, 32, True, None, None, 4, None, True)
opt = optim.AdamW(p, fused=True)
torch.cuda.synchronize()
`)
	want := map[string]bool{"torch.nn.functional.relu": true, "torch.utils.data.DataLoader": true, "torch.optim.AdamW": true, "torch.cuda.synchronize": true}
	for _, c := range f.Calls {
		delete(want, c.Name)
	}
	if len(want) > 0 {
		t.Errorf("unresolved calls: %v (got %+v)", want, f.Calls)
	}
	if len(f.DataLoaders) != 1 {
		t.Fatalf("dataloaders: %+v", f.DataLoaders)
	}
	dl := f.DataLoaders[0]
	if dl.Var != "loader" || dl.BatchSize.Value != int64(32) || dl.NumWorkers.Value != int64(4) || dl.PinMemory.Value != true || dl.PersistentWorkers.Present {
		t.Errorf("positional DataLoader args: %+v", dl)
	}
	if len(f.Optimizers) != 1 || f.Optimizers[0].Fused.Value != true || f.Optimizers[0].Var != "opt" {
		t.Errorf("optimizers: %+v", f.Optimizers)
	}
}

func TestLoopsAndContexts(t *testing.T) {
	f := scan(t, `import torch
for epoch in range(3):
    for i, (x, y) in enumerate(tqdm(train_loader)):
        loss = model(x)
        loss.backward()
        if i % 10 == 0:
            print(loss.item())
        for k in range(4):
            z = torch.cat([a, b])
    print(loss.item())
`)
	if len(f.Loops) != 3 {
		t.Fatalf("loops: %+v", f.Loops)
	}
	if f.Loops[0].Step || !f.Loops[1].Step || !f.Loops[1].OverLoader || !f.Loops[1].Trains || f.Loops[1].Iter != "train_loader" || f.Loops[1].Parent != 0 {
		t.Errorf("loops: %+v", f.Loops)
	}
	byLine := map[int][]Call{}
	for _, c := range f.Calls {
		byLine[c.Line] = append(byLine[c.Line], c)
	}
	item := func(line int) Call {
		for _, c := range byLine[line] {
			if c.Name == ".item" {
				return c
			}
		}
		t.Fatalf("no .item() on line %d", line)
		return Call{}
	}
	if c := item(7); c.StepLoop != 1 || !c.Conditional {
		t.Errorf("guarded item: %+v", c)
	}
	if c := item(10); c.StepLoop != -1 || c.Loop != 0 {
		t.Errorf("per-epoch item: %+v", c)
	}
	if c := byLine[9][0]; c.Name != "torch.cat" || !c.InnerLoop || c.StepLoop != 1 || c.Loop != 2 {
		t.Errorf("cat: %+v", c)
	}
	for _, c := range byLine[4] {
		if c.Name == "model" && strings.Join(c.TensorArgs, ",") != "x" {
			t.Errorf("tensor args of model(x): %v", c.TensorArgs)
		}
	}
}

func TestPositionsCountCodePoints(t *testing.T) {
	f := scan(t, "s = \"é\"; x.item()\n")
	if len(f.Calls) != 1 {
		t.Fatalf("calls: %+v", f.Calls)
	}
	// "s = \"é\"; x." is 11 code points (12 bytes): item starts at column 12.
	if c := f.Calls[0]; c.Line != 1 || c.Column != 12 {
		t.Errorf("position %d:%d, want 1:12", c.Line, c.Column)
	}
}

func TestSyntaxErrorGivesPartialFacts(t *testing.T) {
	f := scan(t, `from torch.utils.data import DataLoader
loader = DataLoader(ds, batch_size=8)
def broken(:
    pass
for x in loader:
    x.item()
`)
	if len(f.Diagnostics) == 0 {
		t.Fatal("no diagnostic for a syntax error")
	}
	if d := f.Diagnostics[0]; d.Line != 3 || d.Kind == "" || d.Message == "" {
		t.Errorf("diagnostic %+v", d)
	}
	if len(f.DataLoaders) != 1 {
		t.Errorf("facts before the error lost: %+v", f.DataLoaders)
	}
	found := false
	for _, c := range f.Calls {
		found = found || (c.Name == ".item" && c.Line == 6)
	}
	if !found {
		t.Errorf("facts after the error lost: %+v", f.Calls)
	}
}

func TestIgnoreComments(t *testing.T) {
	f := scan(t, `x.item()  # stepdoctor: ignore[host-sync-in-loop, blocking-copy] logged once
# stepdoctor: ignore[data-parallel]
m = nn.DataParallel(m)
`)
	if len(f.Ignores) != 2 {
		t.Fatalf("ignores: %+v", f.Ignores)
	}
	a, b := f.Ignores[0], f.Ignores[1]
	if a.Line != 1 || a.Standalone || strings.Join(a.Rules, ",") != "host-sync-in-loop,blocking-copy" || a.Reason != "logged once" {
		t.Errorf("trailing ignore: %+v", a)
	}
	if b.Line != 2 || !b.Standalone || b.Reason != "" {
		t.Errorf("standalone ignore: %+v", b)
	}
}

func TestProfilerFacts(t *testing.T) {
	f := scan(t, `from torch.profiler import profile, schedule, tensorboard_trace_handler as tth
with profile(schedule=schedule(wait=1, warmup=1, active=3), on_trace_ready=tth("./log"), with_stack=True) as prof:
    for b in loader:
        step(b)
        prof.step()
`)
	if len(f.Profilers) != 1 {
		t.Fatalf("profilers: %+v", f.Profilers)
	}
	p := f.Profilers[0]
	if p.Var != "prof" || !p.Schedule.Present || !p.CallsStep || !p.WrapsStepLoop || p.WithStack.Value != true || p.ExportsTrace {
		t.Errorf("profiler: %+v", p)
	}
}

func FuzzScan(f *testing.F) {
	files, _ := filepath.Glob("../../testdata/scripts/*.py")
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("for x in (:\n\twith profile( as p:\n"))
	f.Add([]byte("def f(q, k, v):\n    a = b = F.softmax(q @ k.mT, dim=-1)\n    return (a @ v) if x else torch.einsum('bqk,bkd->bqd', b, v)\n"))
	f.Add([]byte("X = X.to(d)\nfor i in range(-3, 9, 2):\n    for X, (Y, *Z) in s:\n        X[i].cuda()\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		fs, err := Scan("f.py", src)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range fs.Calls {
			if c.Loop >= len(fs.Loops) || c.StepLoop >= len(fs.Loops) || c.Line < 1 || c.Column < 1 {
				t.Fatalf("bad call %+v", c)
			}
		}
		for _, l := range fs.Loops {
			if l.Trips < 0 || l.Runs < 0 {
				t.Fatalf("bad loop counts %+v", l)
			}
		}
		for _, u := range fs.Features.ManualAttention {
			if u.Line < 1 || u.Line > fs.Lines {
				t.Fatalf("bad manual attention %+v", u)
			}
		}
	})
}

func TestSyntaxErrorsSayWhatTreeSitterFound(t *testing.T) {
	for _, tc := range []struct{ src, node, msg string }{
		{"import torch\nfor x in loader\n    y = x.item()\n", "ERROR", `syntax error: missing ':' after "for x in loader"`},
		{"import torch\nfor x in loader:\n    x.item(\n", "ERROR", `syntax error: unclosed '(' in "x.item("`},
		{"import torch\ndef f(:\n    pass\n", "MISSING )", `syntax error: missing ')' after "def f("`},
	} {
		f := scan(t, tc.src)
		if len(f.Diagnostics) != 1 {
			t.Errorf("%q: diagnostics %+v, want one (nested ERROR nodes are not repeated)", tc.src, f.Diagnostics)
			continue
		}
		d := f.Diagnostics[0]
		if d.Node != tc.node || d.Near == "" || !strings.HasPrefix(d.Message, tc.msg) {
			t.Errorf("%q: %+v, want node %s and message %q", tc.src, d, tc.node, tc.msg)
		}
	}
}

func TestWhileStepLoops(t *testing.T) {
	f := scan(t, `import torch
it = iter(train_loader)
while step < n:
    x, y = next(it)
while step < n:
    optimizers[0].step()
while step < n:
    torch.autograd.backward(loss)
solver = torch.optim.LBFGS(p)
while step < n:
    solver.step(closure)
while step < n:
    x = make().cuda()
`)
	if len(f.Loops) != 5 {
		t.Fatalf("loops %+v", f.Loops)
	}
	for i, want := range []bool{true, true, true, true, false} {
		if f.Loops[i].Step != want {
			t.Errorf("loop %d (line %d): step %v, want %v", i, f.Loops[i].Line, f.Loops[i].Step, want)
		}
	}
	if !f.Loops[0].OverLoader || f.Loops[1].OverLoader {
		t.Errorf("over loader: %+v", f.Loops[:2])
	}
}

func TestConditionsAndStrictTensors(t *testing.T) {
	f := scan(t, `import torch
import time
for i, (x, y) in enumerate(loader):
    loss = criterion(model(x), y)
    n = len(x)
    t0 = time.time()
    lr = sched.get_last_lr()[0]
    if loss > 0 and i > 3:
        pass
    elif torch.isnan(loss).any():
        pass
    if x is None or n > 2 or lr < 1:
        pass
    a = float(loss)
    b = float(lr)
    c = int(i)
    d = float(t0)
while loss > 1:
    loss = model(x).sum()
    loss.backward()
`)
	byLine := map[int]Condition{}
	for _, k := range f.Conditions {
		byLine[k.Line] = k
	}
	check := func(line int, kind string, tensors ...string) {
		t.Helper()
		k, ok := byLine[line]
		if !ok {
			t.Fatalf("no condition on line %d: %+v", line, f.Conditions)
		}
		if k.Kind != kind || strings.Join(k.Tensors, ",") != strings.Join(tensors, ",") {
			t.Errorf("line %d: %+v, want %s with tensors %v", line, k, kind, tensors)
		}
	}
	check(8, "if", "loss")
	check(10, "elif", "torch.isnan(loss).any()")
	check(12, "if")
	check(18, "while", "loss")
	if !byLine[10].Conditional || byLine[8].Conditional || byLine[18].StepLoop != 1 {
		t.Errorf("contexts: %+v", f.Conditions)
	}
	got := map[int][]string{}
	for _, c := range f.Calls {
		if c.Name == "float" || c.Name == "int" {
			got[c.Line] = c.Tensors
		}
	}
	if len(got[14]) != 1 || len(got[15]) != 0 || len(got[16]) != 0 || len(got[17]) != 0 {
		t.Errorf("float/int tensors: %v", got)
	}
}

// TestStepFunctions: calls in a module-level function called from a step
// loop (and the functions it calls) run every step; a LightningModule's
// training_step is a step body; a conditional call site makes the body
// conditional; a function with its own step loop, recursion and calls past
// the depth limit are not followed.
func TestStepFunctions(t *testing.T) {
	f := scan(t, `import torch
import lightning as L

def metric(out):
    return out.sum().item()

def train_step(model, opt, x):
    loss = model(x).sum()
    loss.backward()
    opt.step()
    for p in model.parameters():
        p.grad.norm().item()
    return metric(loss)

def log_every(loss):
    print(loss.item())

def evaluate(model, loader):
    for xb in loader:
        model(xb)
    return torch.zeros(1).item()

def recurse(n):
    return recurse(n - 1).item()

class Lit(L.LightningModule):
    def training_step(self, batch, batch_idx):
        x, y = batch
        if y > 0:
            pass
        return x.sum()

for x in loader:
    train_step(model, opt, x.cuda())
    if step % 100 == 0:
        log_every(x)
    evaluate(model, val_loader)
    recurse(3)
`)
	byLine := map[int]Call{}
	for _, c := range f.Calls {
		if c.Name == ".item" || c.Name == "print" {
			byLine[c.Line] = c
		}
	}
	loopOf := func(line int) Loop {
		c, ok := byLine[line]
		if !ok || c.StepLoop < 0 {
			t.Fatalf("line %d: %+v not in a step", line, c)
		}
		return f.Loops[c.StepLoop]
	}
	if l := loopOf(5); l.Kind != "function" || l.Function != "metric" || f.Loops[l.Parent].Function != "train_step" || l.CallLine != 13 {
		t.Errorf("metric: %+v", l)
	}
	root := loopOf(5).Root
	if f.Loops[root].Kind != "for" || byLine[5].StepRoot != root || byLine[16].StepRoot != root {
		t.Errorf("root %d: %+v; step roots %d %d", root, f.Loops[root], byLine[5].StepRoot, byLine[16].StepRoot)
	}
	if c := byLine[12]; !c.InnerLoop || c.Conditional {
		t.Errorf("the .item() in the parameter loop: %+v", c)
	}
	if c := byLine[16]; !c.Conditional || f.Loops[c.StepLoop].Function != "log_every" {
		t.Errorf("log_every is called under if step %% 100: %+v", c)
	}
	if c := byLine[21]; c.StepLoop >= 0 {
		t.Errorf("evaluate has a step loop of its own, its tail is not per step: %+v", c)
	}
	if c := byLine[24]; c.StepLoop < 0 || f.Loops[c.StepLoop].Function != "recurse" {
		t.Errorf("recurse is followed once: %+v", c)
	}
	var lit *Loop
	for i := range f.Loops {
		if f.Loops[i].Function == "training_step" {
			lit = &f.Loops[i]
		}
	}
	if lit == nil || lit.Parent != -1 || !lit.Trains || lit.Line != 27 {
		t.Fatalf("training_step: %+v", lit)
	}
	var cond *Condition
	for i := range f.Conditions {
		if f.Conditions[i].Line == 29 {
			cond = &f.Conditions[i]
		}
	}
	if cond == nil || len(cond.Tensors) != 1 || cond.Tensors[0] != "y" {
		t.Errorf("`if y > 0` in training_step turns the batch's y into a bool: %+v", cond)
	}
	n := 0
	for _, l := range f.Loops {
		if l.Kind == "function" {
			n++
		}
	}
	if n != 5 { // train_step, metric, log_every, recurse, training_step
		t.Errorf("%d step functions, want 5: %+v", n, f.Loops)
	}
}

// TestStepFunctionDepth: calls are followed at most three deep.
func TestStepFunctionDepth(t *testing.T) {
	f := scan(t, `def a(x):
    return b(x)
def b(x):
    return c(x)
def c(x):
    return d(x)
def d(x):
    return x.item()
for x in loader:
    a(x)
`)
	for _, c := range f.Calls {
		if c.Name == ".item" && c.StepLoop >= 0 {
			t.Errorf("followed four calls deep: %+v", c)
		}
	}
	seen := map[string]bool{}
	for _, l := range f.Loops {
		seen[l.Function] = true
	}
	if !seen["a"] || !seen["b"] || !seen["c"] || seen["d"] {
		t.Errorf("step functions %v, want a, b, c", seen)
	}
}

// Evaluation loops: a step loop that does not train, under no_grad or
// inference_mode (a block, a decorator, or around the loop's forward), in
// a function named for evaluation, or over an evaluation loader.
func TestEvalLoops(t *testing.T) {
	f := scan(t, `@torch.inference_mode()
def check(model, loader):
    for x, y in loader:
        total += model(x).sum().item()
def validate(model, loader):
    for x, y in loader:
        correct += (model(x).argmax(1) == y).sum().item()
def run(loader):
    with torch.no_grad():
        for x, y in loader:
            total += model(x).sum().item()
for step, batch in enumerate(eval_dataloader):
    out = model(batch)
for batch in loader:
    with torch.no_grad():
        out = model(batch)
def train_and_validate(loader):
    for x, y in loader:
        loss = model(x).sum()
        loss.backward()
        opt.step()
with torch.no_grad():
    for x, y in train_loader:
        loss = model(x).sum()
        loss.backward()
for x, y in train_loader:
    out = model(x)
`)
	want := []bool{true, true, true, true, true, false, false, false}
	// Autograd is off for the decorated def, the no_grad block around the
	// loop, the no_grad block around the forward, and the block around the
	// training loop; not in validate(), which no block or decorator covers.
	noGrad := []bool{true, false, true, false, true, false, true, false}
	if len(f.Loops) != len(want) {
		t.Fatalf("%d loops, want %d: %+v", len(f.Loops), len(want), f.Loops)
	}
	for i, l := range f.Loops {
		if l.Eval != want[i] {
			t.Errorf("loop at line %d (%s): eval %v, want %v", l.Pos.Line, l.Iter, l.Eval, want[i])
		}
		if l.NoGrad != noGrad[i] {
			t.Errorf("loop at line %d (%s): no_grad %v, want %v", l.Pos.Line, l.Iter, l.NoGrad, noGrad[i])
		}
		if !l.Forward {
			t.Errorf("loop at line %d (%s): forward false, want true (every loop calls model(x))", l.Pos.Line, l.Iter)
		}
	}
}

// Loop.Forward counts a model's call or its .forward, not its methods;
// Loop.UsesGrad sees gradients read in the body; Call.NoGrad marks a call
// made under a no_grad block or in a decorated def.
func TestForwardGradsAndNoGradCalls(t *testing.T) {
	f := scan(t, `for b in loader:
    out = model.generate(b)
for b in loader:
    out = self.net.forward(b)
for x in loader:
    x.requires_grad_()
    g, = torch.autograd.grad(model(x).sum(), x)
for x in loader:
    out = encoder(x)
    norms.append(x.grad)
with torch.no_grad():
    evaluate(model, loader)
evaluate(model, loader)
@torch.inference_mode()
def predict(x):
    return helper(x)
`)
	type lw struct{ forward, grads bool }
	want := []lw{{false, false}, {true, false}, {true, true}, {true, true}}
	if len(f.Loops) != len(want) {
		t.Fatalf("%d loops, want %d", len(f.Loops), len(want))
	}
	for i, l := range f.Loops {
		if (lw{l.Forward, l.UsesGrad}) != want[i] {
			t.Errorf("loop at line %d: forward %v uses_grad %v, want %+v", l.Line, l.Forward, l.UsesGrad, want[i])
		}
	}
	got := map[string][]bool{}
	for _, c := range f.Calls {
		if c.Name == "evaluate" || c.Name == "helper" {
			got[c.Name] = append(got[c.Name], c.NoGrad)
		}
	}
	if !slices.Equal(got["evaluate"], []bool{true, false}) || !slices.Equal(got["helper"], []bool{true}) {
		t.Errorf("no_grad of the calls: %v, want evaluate [true false], helper [true]", got)
	}
}

// Mixed precision set up in a sibling module the script imports from (an
// FSDP2 MixedPrecisionPolicy passed through **kwargs in its parallelize
// function) counts as the script's own.
func TestSiblingMixedPrecision(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) string { return writeScript(t, dir, name, src) }
	write("parallelism.py", `import torch
from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
def parallelize(model, mesh):
    mp_policy = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    cfg = {"mesh": mesh, "mp_policy": mp_policy}
    fully_shard(model, **cfg)
    return model
`)
	train := write("train.py", `import torch
from parallelism import parallelize
model = parallelize(Net().cuda(), mesh)
`)
	plain := write("plain.py", `import torch
import parallelism_missing
model = Net().cuda()
`)
	f, err := ScanFile(train)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Features.MixedPrecision) != 1 || !strings.Contains(f.Features.MixedPrecision[0].Name, "parallelism.py (line 4)") || f.Features.MixedPrecision[0].Line != 2 {
		t.Errorf("mixed precision from the sibling: %+v, want one use naming parallelism.py (line 4) at the import (line 2)", f.Features.MixedPrecision)
	}
	g, err := ScanFile(plain)
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Features.MixedPrecision) != 0 {
		t.Errorf("mixed precision without a sibling that sets it: %+v", g.Features.MixedPrecision)
	}
}

// TestSiblingConvPlacedAtConstruction: a convolution built in a module of
// the script's directory is placed where the script constructs a class
// from that module, not at the import; without a construction it stays at
// the import.
func TestSiblingConvPlacedAtConstruction(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) string { return writeScript(t, dir, name, src) }
	write("net.py", `import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
def helper():
    pass
`)
	built := write("train.py", `import torch
from net import Net, helper
helper()
device = torch.device("cuda")
model = Net().to(device)
`)
	imported := write("other.py", `import torch
from net import helper
helper()
`)
	for _, c := range []struct {
		path string
		line int
	}{{built, 5}, {imported, 2}} {
		f, err := ScanFile(c.path)
		if err != nil {
			t.Fatal(err)
		}
		if len(f.Features.Conv) != 1 || f.Features.Conv[0].Line != c.line || !strings.Contains(f.Features.Conv[0].Name, "net.py (line 5)") {
			t.Errorf("%s: conv %+v, want one at line %d naming net.py (line 5)", filepath.Base(c.path), f.Features.Conv, c.line)
		}
	}
}

// writeScript writes src to dir/name and returns the path.
func writeScript(t *testing.T, dir, name, src string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestEvalNamed: a name says evaluation by a word that starts with val,
// eval, test or predict, not by those letters inside another word.
func TestEvalNamed(t *testing.T) {
	for name, want := range map[string]bool{
		"val_loader": true, "testloader": true, "validate": true, "run_evaluation": true,
		"predict_step": true, "evalDataloader": true, "eval_dataloader2": true, "self.val_dl": true,
		"retrieval_loader": false, "interval_loader": false, "latest_batches": false,
		"value_loader": false, "train_and_validate": false, "loader": false, "attestation": false,
	} {
		if got := evalNamed(name); got != want {
			t.Errorf("evalNamed(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestFunctionParams: a def's parameters in order, with defaults, types
// and splats by name; a method keeps self.
func TestFunctionParams(t *testing.T) {
	f := scan(t, "def train(model, loader: DataLoader, opt=None, *args, epochs: int = 3, **kw):\n    pass\nclass T:\n    def fit(self, loader):\n        pass\ndef none():\n    pass\ndef typed(a: int, *rest: int, b=1, **kw: str):\n    pass\n")
	want := map[string][]string{"train": {"model", "loader", "opt", "args", "epochs", "kw"}, "fit": {"self", "loader"}, "none": {}, "typed": {"a", "rest", "b", "kw"}}
	if len(f.Functions) != len(want) {
		t.Fatalf("functions %+v, want %d", f.Functions, len(want))
	}
	for _, fn := range f.Functions {
		if w, ok := want[fn.Name]; !ok || !reflect.DeepEqual(fn.Params, w) {
			t.Errorf("%s: params %q, want %q", fn.Name, fn.Params, w)
		}
	}
}

// TestGradSyncSwitches: the attributes that skip the gradient all-reduce
// are found called, passed around or assigned.
func TestGradSyncSwitches(t *testing.T) {
	f := scan(t, "ctx = model.no_sync if skip else nullcontext\nmodel.require_backward_grad_sync = last\nwith accelerator.accumulate(model):\n    pass\nx = meter.total\n")
	var got []string
	for _, u := range f.Features.GradSyncSwitches {
		got = append(got, u.Name)
	}
	if want := []string{"no_sync", "require_backward_grad_sync", "accumulate"}; !reflect.DeepEqual(got, want) {
		t.Errorf("grad sync switches %q, want %q", got, want)
	}
}

// TestConditionSkipsAndAssigned: an if that starts with continue, and the
// value a bare-name condition was last assigned in its block.
func TestConditionSkipsAndAssigned(t *testing.T) {
	f := scan(t, "for x, y in loader:\n    loss = model(x).sum()\n    loss.backward()\n    update = (i + 1) % k == 0\n    if update:\n        opt.step()\n    if i % k != 0:\n        continue\n    if loss > 0:\n        print(1)\n")
	if len(f.Conditions) != 3 {
		t.Fatalf("conditions %+v", f.Conditions)
	}
	got := [][2]any{}
	for _, k := range f.Conditions {
		got = append(got, [2]any{k.Skips, k.Assigned})
	}
	want := [][2]any{{false, "(i + 1) % k == 0"}, {true, ""}, {false, ""}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("skips, assigned %v, want %v", got, want)
	}
}

// TestReceiverAssigned: the call last assigned to a method's receiver
// name by the statements before, unless it was made with device=.
func TestReceiverAssigned(t *testing.T) {
	f := scan(t, "import torch\nz = torch.randn(4, 8)\nz = z.type_as(x)\nw = torch.ones(2, device=d)\nw = w.cuda()\nv = z.cuda()\n")
	got := map[string]string{}
	for _, c := range f.Calls {
		if strings.HasPrefix(c.Name, ".") {
			got[c.Text] = c.ReceiverAssigned
		}
	}
	// z.cuda() follows z = z.type_as(x): the last assignment counts.
	want := map[string]string{"z.type_as(x)": "torch.randn", "w.cuda()": "", "z.cuda()": ".type_as"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("receiver_assigned %v, want %v", got, want)
	}
}

// TestFunctionIterates: parameters a function's loops iterate, nested defs
// included, and one hand-off further, by position, keyword and method.
func TestFunctionIterates(t *testing.T) {
	f := scan(t, `def train(model, loader):
    for x in loader:
        pass
def validate(val_loader, model):
    def run(loader):
        for x in enumerate(loader):
            pass
    run(val_loader)
def handoff(a, b):
    train(model, loader=b)
def other(a, b):
    for x in a:
        pass
    train(b, model)
class T:
    def fit(self, dl):
        for x in dl:
            pass
`)
	got := map[string][]string{}
	for _, fn := range f.Functions {
		got[fn.Name] = fn.Iterates
	}
	want := map[string][]string{"train": {"loader"}, "validate": {"val_loader"}, "run": {"loader"}, "handoff": {"b"}, "other": {"a"}, "fit": {"dl"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("iterates %v, want %v", got, want)
	}
}

// TestCallGuardAfterSort: a step function's conditions are found after the
// main walk and sorted into place; its calls' Guard follows them.
func TestCallGuardAfterSort(t *testing.T) {
	f := scan(t, `def train_step(x, y, i):
    loss = model(x).sum()
    loss.backward()
    if (i + 1) % k == 0:
        opt.step()
for i, (x, y) in enumerate(loader):
    if i % 100 == 0:
        print(i)
    train_step(x, y, i)
`)
	for _, c := range f.Calls {
		if c.Name == ".step" {
			if c.Guard < 0 || f.Conditions[c.Guard].Text != "(i + 1) % k == 0" {
				t.Fatalf("opt.step() guard %d in %+v", c.Guard, f.Conditions)
			}
			return
		}
	}
	t.Fatal("no .step call")
}

// TestManualAttention checks where Features.ManualAttention points in the
// written-out attention of common model code, and what it leaves.
func TestManualAttention(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      []int // lines of the softmax calls reported
	}{
		{"timm ViT", `class Attention(nn.Module):
    def forward(self, x):
        q, k, v = qkv.unbind(0)
        attn = (q @ k.transpose(-2, -1)) * self.scale
        attn = attn.softmax(dim=-1)
        attn = self.attn_drop(attn)
        x = (attn @ v).transpose(1, 2).reshape(B, N, C)
        return x
`, []int{5}},
		{"Hugging Face GPT-2, an nn.Softmax module and a cast between", `from torch import nn
import torch
class Attn(nn.Module):
    def __init__(self):
        self.softmax = nn.Softmax(dim=-1)
    def _attn(self, query, key, value, attention_mask=None):
        attn_weights = torch.matmul(query, key.transpose(-1, -2))
        attn_weights = attn_weights / torch.full([], value.size(-1) ** 0.5)
        if attention_mask is not None:
            attn_weights = attn_weights + attention_mask
        attn_weights = self.softmax(attn_weights)
        attn_weights = attn_weights.type(value.dtype)
        attn_weights = self.attn_dropout(attn_weights)
        attn_output = torch.matmul(attn_weights, value)
        return attn_output, attn_weights
`, []int{11}},
		{"two attentions in one def, the output reused", `import torch.nn.functional as F
def f(q, k, v, q2, k2):
    a = F.softmax(q @ k.transpose(1, 2), dim=-1)
    y = a @ v
    b = F.softmax(q2 @ k2.permute(0, 2, 1), dim=-1)
    return b @ y, y @ w
`, []int{3, 5}},
		{"the output of attention is not attention", `import torch.nn.functional as F
def f(q, k, v, w):
    a = F.softmax(q @ k.transpose(1, 2), dim=-1)
    y = a @ v
    z = F.softmax(y, dim=-1)
    return z @ w
`, []int{3}},
		{"lucidrains: an nn.Softmax module of any name, k transposed the statement before", `import torch
from torch import nn
class Attention(nn.Module):
    def __init__(self):
        self.attend = nn.Softmax(dim = -1)
    def forward(self, q, k, v):
        k_t = k.transpose(-1, -2)
        dots = torch.matmul(q, k_t) * self.scale
        attn = self.attend(dots)
        attn = self.dropout(attn)
        return torch.matmul(attn, v)
`, []int{9}},
		{"Bloom: baddbmm with keyword batches", `import torch.nn.functional as F
import torch
def f(alibi, q, k, v):
    scores = alibi.baddbmm(batch1=q, batch2=k.transpose(1, 2), beta=1.0, alpha=0.1)
    probs = F.softmax(scores, dim=-1, dtype=torch.float32)
    return torch.bmm(probs, v)
`, []int{5}},
		{"slot attention: softmax over the slots, not the keys", `import torch
def f(q, k, v, eps):
    dots = torch.einsum('bid,bjd->bij', q, k) * 0.1
    attn = dots.softmax(dim=1) + eps
    attn = attn / attn.sum(dim=-1, keepdim=True)
    return torch.einsum('bjd,bij->bid', v, attn)
`, nil},
		{"a gate or a lookup against a parameter matrix", `import torch.nn.functional as F
import torch
class MoE(nn.Module):
    def forward(self, x, expert_out, feats, fc):
        gates = F.softmax(x @ self.w_gate.T, -1)
        y = torch.bmm(gates.unsqueeze(1), expert_out)
        probs = (feats @ fc.weight.t()).softmax(-1)
        return y, probs @ self.bin_centers
`, nil},
		{"log_softmax is a loss, not attention", `import torch.nn.functional as F
def f(q, k, v):
    a = F.log_softmax(q @ k.transpose(1, 2), dim=-1)
    return a @ v
`, nil},
		{"a nested def keeps its own names", `import torch.nn.functional as F
def outer(q, k, v):
    a = F.softmax(q @ k.transpose(1, 2), dim=-1)
    def inner(a, v):
        return a @ v
    return inner
`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := scan(t, tc.src)
			var got []int
			for _, u := range f.Features.ManualAttention {
				got = append(got, u.Line)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("manual attention at lines %v, want %v", got, tc.want)
			}
		})
	}
	f := scan(t, "from flash_attn import flash_attn_func\ny = flash_attn_func(q, k, v, causal=True)\nsdpa = getattr(F, \"scaled_dot_product_attention\", None)\nfn = ALL_ATTENTION_FUNCTIONS[self.config._attn_implementation]\n")
	var fused []string
	for _, u := range f.Features.FusedAttention {
		fused = append(fused, fmt.Sprintf("%d %s", u.Line, u.Name))
	}
	// The import names it too; a string, Hugging Face's dispatch.
	want := []string{"1 flash_attn.flash_attn_func", "2 flash_attn.flash_attn_func", "3 scaled_dot_product_attention", "4 ALL_ATTENTION_FUNCTIONS", "4 self.config._attn_implementation"}
	if !reflect.DeepEqual(fused, want) {
		t.Errorf("fused attention %q, want %q", fused, want)
	}
}

// TestManualAttentionLongChain scans a def whose statements multiply the
// softmax in a chain of 3,000 products: each node's facts are computed
// once (walking each product's operands again took 9m50s on this input,
// past go test's default timeout).
func TestManualAttentionLongChain(t *testing.T) {
	var b strings.Builder
	b.WriteString("import torch\ndef f(q, k, v):\n    att = torch.softmax(q @ k.transpose(-2, -1), dim=-1)\n    y = att")
	for range 3000 {
		b.WriteString(" @ att")
	}
	b.WriteString("\n    return y\n")
	f := scan(t, b.String())
	if len(f.Features.ManualAttention) != 1 || f.Features.ManualAttention[0].Line != 3 {
		t.Errorf("manual attention %+v, want the softmax at line 3 once", f.Features.ManualAttention)
	}
	// A chain of 20,000 targets takes its value once (each target walked
	// the rest of the chain again: over 300 s).
	b.Reset()
	b.WriteString("def f(q, k, v):\n    ")
	for i := range 20000 {
		fmt.Fprintf(&b, "a%d = ", i)
	}
	b.WriteString("q @ k.mT\n")
	scan(t, b.String())
}

// TestReceiverOrigin: the call last assigned to the name at the root of a
// device move's receiver, found before the loops that hold the move and
// not past its def.
func TestReceiverOrigin(t *testing.T) {
	f := scan(t, `import torch
X = torch.tensor(data).to(device)
Y = labels
def train(X):
    for epoch in range(3):
        for idx in sampler:
            a = X[idx].to(device)
Z = torch.zeros(4, device="cpu")
for epoch in range(3):
    for idx in sampler:
        b = X[idx][0].to(device)
        c = Y[idx].to(device)
        d = Z[idx].cuda()
W = torch.ones(3).cuda()
V = torch.ones(3).cuda()
V, U = host()
for W in batches:
    e = W.cuda()
    f = V.cuda()
    g = [Z.cuda() for Z in parts]
`)
	got := map[string]string{}
	for _, c := range f.Calls {
		if c.Name == ".to" || c.Name == ".cuda" {
			o := "none"
			if c.ReceiverOrigin != nil {
				o = fmt.Sprintf("%s at line %d", c.ReceiverOrigin.Name, c.ReceiverOrigin.Line)
			}
			got[c.Text] = o
		}
	}
	want := map[string]string{
		"torch.tensor(data).to(device)": "none",
		"X[idx].to(device)":             "none", // X is train's parameter
		"X[idx][0].to(device)":          ".to at line 2",
		"Y[idx].to(device)":             "none", // not assigned from a call
		"Z[idx].cuda()":                 "torch.zeros at line 8",
		"torch.ones(3).cuda()":          "none",
		"W.cuda()":                      "none", // the loop's target
		"V.cuda()":                      "none", // rebound by a tuple
		"Z.cuda()":                      "none", // the comprehension's target
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("receiver_origin %v, want %v", got, want)
	}
}

// TestLoopTrips: the trip counts of for loops over range() with known
// bounds, and 0 for the others.
func TestLoopTrips(t *testing.T) {
	f := scan(t, `import argparse
EPOCHS = 200
STEPS = 10
STEPS = 20
parser = argparse.ArgumentParser()
parser.add_argument("--nEpochs", type=int, default=2)
parser.add_argument("--epochs", type=int, default=90)
opt = parser.parse_args()
for a in range(1, opt.nEpochs + 1): pass
for b in range(EPOCHS): pass
for c in range(opt.epochs * 2): pass
for d in range(0, 10, 3): pass
for e in range(n): pass
for f in range(5, 1): pass
for g in range(STEPS): pass
for h in enumerate(range(3)): pass
for i in range(3, 0, -1): pass
parser.add_argument("--steps", type=int, default=5, required=True)
cfg = load_yaml()
cfg.epochs = 4
for j in range(opt.steps): pass
def f(EPOCHS):
    for k in range(EPOCHS): pass
`)
	var got []int64
	for _, l := range f.Loops {
		got = append(got, l.Trips)
	}
	// The required option's default is never used; EPOCHS is f's parameter.
	// STEPS is assigned twice: unknown; enumerate(range(3)) is not a range.
	want := []int64{2, 200, 180, 4, 0, 0, 0, 0, 3, 0, 0}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("trips %v, want %v", got, want)
	}
}

// TestFunctionIteratesFreeAndSelf: a function lists the module-level
// names and, for a method, the attributes of self it loops over, also one
// call further; a name it assigns is its own.
func TestFunctionIteratesFreeAndSelf(t *testing.T) {
	f := scan(t, `trainloader = make()
def train(epoch):
    for x in trainloader:
        pass
def run():
    train(0)
def local():
    trainloader = make()
    for x in trainloader:
        pass
class T:
    def _epoch(self):
        for b in self.loader:
            pass
    def fit(self):
        self._epoch()
    def other(self, t):
        t._epoch()
`)
	got := map[string][]string{}
	for _, fn := range f.Functions {
		got[fn.Name] = append([]string{}, fn.Iterates...)
	}
	want := map[string][]string{
		"train": {"trainloader"}, "run": {"trainloader"}, "local": {},
		"_epoch": {"self.loader"}, "fit": {"self.loader"}, "other": {},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("iterates %v, want %v", got, want)
	}
}

// TestLoopRuns: a loop's body runs its trips times those of the loops
// around it; unknown when any is.
func TestLoopRuns(t *testing.T) {
	f := scan(t, `for epoch in range(100):
    for phase in range(2):
        for x in loader:
            pass
for i in range(n):
    for j in range(3):
        pass
`)
	var got []int64
	for _, l := range f.Loops {
		got = append(got, l.Runs)
	}
	if want := []int64{100, 200, 0, 0, 0}; !reflect.DeepEqual(got, want) {
		t.Errorf("runs %v, want %v", got, want)
	}
}

// TestSiblingFunctionsImported: the functions of a module beside the script
// that loop over a parameter are listed under the names the script's calls
// resolve to (from engine import f, import engine as E), with the module
// and only their parameters; methods, nested defs, functions that loop
// over nothing handed in, and defs of modules not imported are not.
func TestSiblingFunctionsImported(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) string { return writeScript(t, dir, name, src) }
	write("engine.py", `import torch
def train_one_epoch(model, opt, data_loader, device, logger):
    for images, targets in logger.log_every(data_loader, 10, "train"):
        loss = model(images.to(device)).sum()
        loss.backward()
        opt.step()
def evaluate(model, data_loader):
    for x in data_loader:
        model(x)
def summarize(results):
    for r in global_results:
        print(r)
def outer(model, loader):
    def inner(batches):
        for b in batches:
            model(b)
    inner(loader)
class Runner:
    def run(self, loader):
        for x in loader:
            pass
`)
	write("other.py", `def train_other(loader):
    for x in loader:
        pass
`)
	from := write("from_import.py", `import torch
from engine import train_one_epoch, summarize
`)
	mod := write("module_import.py", `import torch
import engine as E
`)
	names := func(path string) map[string]Function {
		f, err := ScanFile(path)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]Function{}
		for _, fn := range f.Functions {
			if fn.Module != "" {
				out[fn.Name] = fn
			}
		}
		return out
	}
	got := names(from)
	fn, ok := got["engine.train_one_epoch"]
	if len(got) != 1 || !ok {
		t.Fatalf("from engine import train_one_epoch, summarize: imported %v, want engine.train_one_epoch alone", got)
	}
	if fn.Module != "engine.py" || fn.Line != 0 || fn.EndLine != 0 || !slices.Equal(fn.Iterates, []string{"data_loader"}) || len(fn.Params) != 5 {
		t.Errorf("engine.train_one_epoch: %+v, want module engine.py, lines 0, iterates [data_loader] (through log_every), five params", fn)
	}
	got = names(mod)
	if len(got) != 3 || got["engine.evaluate"].Module == "" || got["engine.outer"].Module == "" || got["engine.train_one_epoch"].Module == "" {
		t.Errorf("import engine as E: imported %v, want engine.evaluate, engine.outer and engine.train_one_epoch (not the nested inner, the method run, summarize)", got)
	}
	if !slices.Equal(got["engine.outer"].Iterates, []string{"loader"}) {
		t.Errorf("engine.outer hands loader to a def that loops over it: iterates %v, want [loader]", got["engine.outer"].Iterates)
	}
}

// A file saved with classic Mac line endings (\r alone) has the lines
// Python sees: tree-sitter ends rows at \n only.
func TestLoneCarriageReturnsEndLines(t *testing.T) {
	f := scan(t, "import torch\rfor x in loader:\r    y = x.cuda()\r\n    z = 1\r")
	if len(f.Loops) != 1 || f.Loops[0].Line != 2 {
		t.Fatalf("loops %+v, want one at line 2", f.Loops)
	}
	for _, c := range f.Calls {
		if c.Name == ".cuda" && (c.Line != 3 || c.Column != 11) {
			t.Errorf(".cuda() at %d:%d, want 3:11", c.Line, c.Column)
		}
	}
	if got := f.LineText(3); got != "    y = x.cuda()\r" && got != "    y = x.cuda()" {
		t.Errorf("line 3 %q", got)
	}
}
