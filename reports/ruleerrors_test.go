package reports

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stepdoctor/stepdoctor/engine"
)

// Rule failures are their own part of every report: a section (Markdown,
// HTML, text) and a JSON list, apart from trace health, with trace
// strings escaped like everything else.
func TestRuleErrorsInEveryFormat(t *testing.T) {
	res := gpuTraining()
	res.RuleErrors = []engine.RuleError{
		{Trace: "runs/a.json", Rule: "team-slow", Source: "team/slow.rego:3", Message: "timed out after 2s: context deadline exceeded"},
		{Trace: "runs/<b>|c.json", Message: "evaluate rules: encode facts: <bad>"},
	}
	for _, rd := range renderers {
		out := string(render(t, rd.render, res))
		var want []string
		switch rd.ext {
		case "md":
			want = []string{"## Rule errors (2)", "- `team-slow` (team/slow.rego:3) on runs/a.json: timed out after 2s: context deadline exceeded", "&lt;b&gt;\\|c.json"}
		case "html":
			want = []string{"Rule errors (2)</h2>", "<code>team-slow</code> (team/slow.rego:3) on", "runs/&lt;b&gt;|c.json"}
		case "txt", "color.txt":
			want = []string{"rule failed", "runs/a.json: evaluate rule team-slow (team/slow.rego:3): timed out after 2s"}
		case "json":
			var doc struct {
				RuleErrors []map[string]string `json:"rule_errors"`
			}
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatal(err)
			}
			if len(doc.RuleErrors) != 2 || doc.RuleErrors[0]["rule"] != "team-slow" || doc.RuleErrors[0]["source"] != "team/slow.rego:3" ||
				doc.RuleErrors[0]["trace"] != "runs/a.json" || doc.RuleErrors[1]["rule"] != "" {
				t.Errorf("json rule_errors %v", doc.RuleErrors)
			}
		}
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("%s lacks %q", rd.ext, w)
			}
		}
		if strings.Contains(out, "rule_failed") || ((rd.ext == "md" || rd.ext == "html") && strings.Contains(out, "<bad>")) {
			t.Errorf("%s: a rule failure in trace health, or an unescaped string", rd.ext)
		}
	}
	if got := RuleErrorLines(res); len(got) != 2 || got[0] != "runs/a.json: evaluate rule team-slow (team/slow.rego:3): timed out after 2s: context deadline exceeded" {
		t.Errorf("RuleErrorLines %q", got)
	}
	// Without failures nothing is shown, and JSON has an empty list.
	res.RuleErrors = nil
	for _, rd := range renderers {
		out := string(render(t, rd.render, res))
		if strings.Contains(out, "Rule errors") || strings.Contains(out, "rule failed") {
			t.Errorf("%s shows rule errors without any", rd.ext)
		}
		if rd.ext == "json" && !strings.Contains(out, `"rule_errors": []`) {
			t.Error(`json lacks "rule_errors": []`)
		}
	}
}
