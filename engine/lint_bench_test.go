package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stepdoctor/stepdoctor/engine/script"
	"github.com/stepdoctor/stepdoctor/rules"
)

// stepLoopsScript is a CUDA training script of n blocks, each building a
// model and its optimizer and running a step loop with a blocking copy, a
// second one and a host sync: every loop gets a host-sync-in-loop finding
// that names its copies. Each optimizer asks how small its model is, over
// every assignment of the name.
func stepLoopsScript(n int) string {
	var b strings.Builder
	b.WriteString("import torch\n")
	for range n {
		b.WriteString("model = torch.nn.Linear(64, 64).cuda()\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n")
		b.WriteString("for x, y in loader:\n    x = x.to(device)\n    y = y.cuda()\n    loss = model(x).sum()\n    loss.backward()\n    opt.step()\n    print(loss.item())\n")
	}
	return b.String()
}

// TestLintManyStepLoops checks that each of many step loops gets its own
// finding, in that loop, naming that loop's copies only.
func TestLintManyStepLoops(t *testing.T) {
	if !script.Available {
		t.Skip(script.ErrNoParser)
	}
	const n = 40
	path := filepath.Join(t.TempDir(), "loops.py")
	if err := os.WriteFile(path, []byte(stepLoopsScript(n)), 0o644); err != nil {
		t.Fatal(err)
	}
	set, err := rules.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	sr, err := LintFile(context.Background(), path, set)
	if err != nil {
		t.Fatal(err)
	}
	if len(sr.RuleErrors) > 0 {
		t.Fatalf("rule errors: %v", sr.RuleErrors)
	}
	var got int
	for _, f := range sr.Findings {
		if f.Rule != "host-sync-in-loop" {
			continue
		}
		loop := 4 + 9*got
		want := fmt.Sprintf("(step loop at line %d): the host blocks until the GPU queue drains; while the loop syncs, passing non_blocking=True to the copies at lines %d, %d would gain nothing", loop, loop+1, loop+2)
		if f.Location == nil || f.Location.Line != loop+6 || !strings.Contains(f.Message, want) {
			t.Fatalf("finding %d: %v %q, want line %d and %q", got, f.Location, f.Message, loop+6, want)
		}
		got++
	}
	if got != n {
		t.Errorf("%d host-sync-in-loop findings, want %d", got, n)
	}
}

// BenchmarkLintStepLoops lints scripts of 50 and 500 blocks (a model, its
// optimizer, a step loop): MB/s that stays level from one size to the
// other shows the scan and the rules scale linearly with the script.
func BenchmarkLintStepLoops(b *testing.B) {
	if !script.Available {
		b.Skip(script.ErrNoParser)
	}
	set, err := rules.Builtin()
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{50, 500} {
		b.Run(fmt.Sprintf("%dloops", n), func(b *testing.B) {
			src := stepLoopsScript(n)
			path := filepath.Join(b.TempDir(), "loops.py")
			if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				sr, err := LintFile(context.Background(), path, set)
				if err != nil {
					b.Fatal(err)
				}
				if len(sr.RuleErrors) > 0 {
					b.Fatalf("rule errors: %v", sr.RuleErrors)
				}
			}
		})
	}
}
