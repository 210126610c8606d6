//go:build cgo

package script

import (
	"regexp"
	"strings"

	sitter "github.com/tree-sitter/go-tree-sitter"
)

// Run-constant guards. An `if` in a step loop usually makes its body run
// on some steps only (`if step % 100 == 0:`), so the body's syncs are not
// per-step (Call.Conditional). A guard whose value cannot change from one
// step to the next — the process's rank, a command-line flag, whether CUDA
// is available — instead runs its body on every step of the processes and
// runs it selects: `if rank == 0: print(loss.item())` syncs rank 0 every
// step. runConstant recognises such guards by shape; anything it does not
// know (a step counter, `%`, a value computed in the loop,
// accelerator.sync_gradients) keeps the body conditional.

// constNames are plain names that hold a process's fixed role or a flag.
var constNames = map[string]bool{
	"rank": true, "local_rank": true, "global_rank": true, "world_size": true, "is_master": true,
	"master_process": true, "is_main": true, "is_main_process": true, "main_process": true,
	"distributed": true, "is_distributed": true, "ddp": true, "use_ddp": true, "device_type": true,
	"use_amp": true, "amp": true, "use_cuda": true, "cuda": true, "verbose": true, "debug": true,
}

// constAttrs are attributes that hold a process's fixed role.
var constAttrs = map[string]bool{
	"is_main_process": true, "is_local_main_process": true, "is_world_process_zero": true,
	"is_local_process_zero": true, "distributed": true, "rank": true, "local_rank": true,
	"global_rank": true, "world_size": true, "type": true, "is_global_zero": true,
}

// configObjects are the usual names of parsed command lines and configs:
// their attributes are fixed for the run.
var configObjects = regexp.MustCompile(`^(args|opt|opts|cfg|config|conf|flags|FLAGS|hparams|self\.hparams|self\.args|self\.cfg|self\.config|training_args|params|hp)$`)

// constCalls return the same value for the whole run.
var constCalls = map[string]bool{
	"torch.cuda.is_available": true, "torch.distributed.is_initialized": true, "torch.distributed.is_available": true,
	"torch.distributed.get_rank": true, "torch.distributed.get_world_size": true, "torch.cuda.device_count": true,
	"torch.backends.mps.is_available": true, "torch.cuda.is_bf16_supported": true,
}

// runConstant reports whether an if condition is a run-constant guard.
func (s *scanner) runConstant(n *sitter.Node) bool {
	if n == nil {
		return false
	}
	switch n.Kind() {
	case "true", "false", "none", "integer", "float", "string":
		return true
	case "identifier":
		t := s.text(n)
		return constNames[t] || (strings.ToUpper(t) == t && strings.ContainsAny(t, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"))
	case "attribute":
		o, a := n.ChildByFieldName("object"), n.ChildByFieldName("attribute")
		if o == nil || a == nil {
			return false
		}
		return configObjects.MatchString(s.text(o)) || constAttrs[s.text(a)]
	case "call":
		if al := n.ChildByFieldName("arguments"); al != nil && al.NamedChildCount() > 0 {
			return false
		}
		return constCalls[s.calleeName(n)]
	case "not_operator", "boolean_operator", "parenthesized_expression", "comparison_operator", "tuple", "list":
		for _, c := range children(n) {
			if !c.IsNamed() {
				continue
			}
			if !s.runConstant(c) {
				return false
			}
		}
		return n.NamedChildCount() > 0
	}
	return false
}
