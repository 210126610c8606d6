//go:build cgo

package script

import (
	"regexp"
	"strings"
)

// argDefault records the literal default of an argparse option:
// parser.add_argument("--num-workers", type=int, default=4) maps the
// destination num_workers to 4 (argparse: the first long option, dashes
// to underscores, unless dest= is given).
func (s *scanner) argDefault(pos []Value, kw map[string]Value) {
	d, ok := kw["default"]
	if !ok || !literalKind(d.Kind) {
		return
	}
	dest := ""
	if v, ok := kw["dest"]; ok && v.Kind == "string" {
		dest, _ = v.Value.(string)
	}
	for _, a := range pos {
		str, isStr := a.Value.(string)
		if dest != "" || !isStr || !strings.HasPrefix(str, "--") {
			continue
		}
		dest = strings.ReplaceAll(strings.TrimPrefix(str, "--"), "-", "_")
	}
	if dest == "" {
		return
	}
	if s.argDefaults == nil {
		s.argDefaults = map[string]any{}
	}
	if _, seen := s.argDefaults[dest]; seen {
		s.argDefaults[dest] = nil // defined twice: ambiguous
		return
	}
	s.argDefaults[dest] = d.Value
}

func literalKind(k string) bool {
	return k == "bool" || k == "int" || k == "float" || k == "string" || k == "none"
}

// optionRef matches a read of a parsed option: args.num_workers,
// self.args.workers, opt.workers.
var optionRef = regexp.MustCompile(`^(?:self\.)?(?:args|opt|opts|cfg|config|flags|FLAGS|hparams|training_args)\.([A-Za-z_][A-Za-z0-9_]*)$`)

// resolveDefaults fills Value.Default of the DataLoader arguments that
// read a parsed option.
func (s *scanner) resolveDefaults() {
	if len(s.argDefaults) == 0 {
		return
	}
	fill := func(v *Value) {
		if v.Kind != "name" {
			return
		}
		if m := optionRef.FindStringSubmatch(v.Text); m != nil {
			if d, ok := s.argDefaults[m[1]]; ok && d != nil {
				v.Default = d
			}
		}
	}
	for i := range s.f.DataLoaders {
		dl := &s.f.DataLoaders[i]
		fill(&dl.NumWorkers)
		fill(&dl.PinMemory)
		fill(&dl.PersistentWorkers)
		fill(&dl.PrefetchFactor)
		fill(&dl.BatchSize)
	}
}
