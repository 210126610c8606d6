package rules

import (
	"strings"
	"testing"

	"github.com/stepdoctor/stepdoctor/engine/facts"
)

// The built-in script rules carry their trace links, and a confirming
// threshold is the trace rule's param with the configured value.
func TestTraceLinkThresholdFollowsConfig(t *testing.T) {
	set, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	l, ok := set.TraceLink("dataloader-num-workers")
	if !ok || l.Confirms == nil || l.Confirms.Rule != "dataloader-bound" || l.Confirms.Param != "min_ratio" || l.Confirms.Min != 0.05 || l.StackSite != "dataloader" {
		t.Fatalf("dataloader-num-workers link %+v %+v", l, l.Confirms)
	}
	f := &facts.Facts{DataloaderTimeRatio: f64(0.07), DataloaderSingleProcess: boolp(true)}
	c, ok := set.Confirm("dataloader-num-workers", f)
	if !ok || c.Impact != 0.07 || c.Why != "the trace shows a single-process DataLoader taking 7.0% of step time" {
		t.Errorf("default threshold: %+v %v", c, ok)
	}
	raised, err := set.With(Config{Params: Params{"dataloader-bound": {"min_ratio": 0.1}}})
	if err != nil {
		t.Fatal(err)
	}
	if l, _ := raised.TraceLink("dataloader-num-workers"); l.Confirms.Min != 0.1 {
		t.Errorf("configured min_ratio 0.1 not in the link: %v", l.Confirms.Min)
	}
	if c, ok := raised.Confirm("dataloader-num-workers", f); ok {
		t.Errorf("min_ratio 0.1 still confirms a 7%% DataLoader share: %+v", c)
	}
	// A disabled confirming rule still lends its (configured) threshold.
	off, err := set.With(Config{Disable: []string{"dataloader-bound"}, Params: Params{"dataloader-bound": {"min_ratio": 0.1}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := off.Confirm("dataloader-num-workers", f); ok {
		t.Error("disabled dataloader-bound: the configured min_ratio 0.1 was not applied")
	}
	if _, ok := set.Confirm("dataloader-num-workers", &facts.Facts{DataloaderTimeRatio: f64(0.4), DataloaderSingleProcess: boolp(false)}); ok {
		t.Error("a multi-process DataLoader confirmed dataloader-num-workers")
	}
	// at_least thresholds; a null impact fact keeps the prior.
	c, ok = set.Confirm("blocking-copy", &facts.Facts{MemcpyPageableHtoDCount: i64(1)})
	if !ok || c.HasImpact || c.Why != "the trace shows 1 pageable host-to-device copies" || len(c.Evidence) != 1 || c.Evidence[0].Unit != "count" {
		t.Errorf("blocking-copy on one copy: %+v %v", c, ok)
	}
	c, ok = set.Confirm("host-sync-in-loop", &facts.Facts{SyncPerStep: f64(1), SyncTimeRatio: f64(0.12)})
	if !ok || c.Impact != 0.12 || c.Why != "the trace shows 1.0 host syncs per step blocking the host 12.0% of step time" || len(c.Evidence) != 2 {
		t.Errorf("host-sync-in-loop: %+v %v", c, ok)
	}
	// Every link names existing trace rules.
	for _, r := range set.Rules() {
		l, ok := set.TraceLink(r.ID)
		if r.Category != CategoryScript && ok {
			t.Errorf("trace rule %s has a trace link", r.ID)
		}
		for _, id := range l.SameCause {
			if tr, ok := set.Rule(id); !ok || tr.Category == CategoryScript {
				t.Errorf("%s: same_cause %s is no trace rule", r.ID, id)
			}
		}
	}
}

func TestTraceLinkLoadErrors(t *testing.T) {
	link := func(block string) string {
		return strings.Replace(teamScriptRule, "package stepdoctor", "#   trace:\n"+block+"package stepdoctor", 1)
	}
	confirms := "#     confirms:\n#       rule: dataloader-bound\n#       fact: dataloader_time_ratio\n#       impact: dataloader_time_ratio\n#       shows: x\n"
	for name, tt := range map[string]struct{ src, want string }{
		"unknown key":       {link("#     same_cuase: [dataloader-bound]\n"), `unknown key "same_cuase"`},
		"no such rule":      {link("#     same_cause: [no-such-rule]\n"), `same_cause "no-such-rule": no such trace rule`},
		"script rule cause": {link("#     same_cause: [blocking-copy]\n"), `same_cause "blocking-copy": no such trace rule`},
		"no threshold":      {link(confirms), "give one of above or at_least"},
		"no such param":     {link(confirms + "#       above: max_ratio\n"), `confirms param "max_ratio": rule dataloader-bound has no number param`},
		"no such fact":      {link(strings.Replace(confirms, "fact: dataloader_time_ratio", "fact: dataloader_ratio", 1) + "#       above: min_ratio\n"), `"dataloader_ratio" is no trace fact`},
		"when not bool":     {link(confirms + "#       above: min_ratio\n#       when: [sync_per_step]\n"), `when "sync_per_step" is not a boolean fact`},
		"trace rule link":   {strings.Replace(regoRule("team-r", `f := {"msg": "m", "impact": 0}`), "package stepdoctor", "#   trace:\n#     same_cause: [dataloader-bound]\npackage stepdoctor", 1), "only script rules link to the trace"},
	} {
		dir := writeRules(t, map[string]string{"a.rego": tt.src})
		if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %v, want %q", name, err, tt.want)
		}
	}
	// A team script rule with a valid link loads and confirms.
	ok := link("#     same_cause: [dataloader-bound]\n" + confirms + "#       above: min_ratio\n")
	set, err := Load(writeRules(t, map[string]string{"a.rego": ok}))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := set.Confirm("team-no-print", &facts.Facts{DataloaderTimeRatio: f64(0.5)}); !ok {
		t.Error("team link does not confirm")
	}
}
