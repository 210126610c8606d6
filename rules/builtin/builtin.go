// Package builtin embeds stepdoctor's shipped rule pack: one Rego module or
// expr YAML file per rule, and cases/<rule-id>.yaml proving each rule fires
// and stays quiet. Package rules loads it (rules.Builtin).
package builtin

import "embed"

// FS holds the rule files (*.rego, *.yaml) at its root and the case files
// under cases/.
//
//go:embed *.rego *.yaml cases/*.yaml
var FS embed.FS
