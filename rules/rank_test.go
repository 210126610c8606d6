package rules

import "testing"

// A finding ranked below a less severe one takes that severity; a severity
// a team pinned is kept, and the finding leads its severity: a team's high
// ranks above every medium (the README's "a finding never ranks above a
// more severe one" holds for it too; before, it stayed below them).
func TestRankSeverityFollowsOrder(t *testing.T) {
	fs := []Finding{
		{Rule: "a-high-likely", Severity: SeverityHigh, Impact: 0.25, Confidence: Likely},           // score 0.15
		{Rule: "b-medium-confirmed", Severity: SeverityMedium, Impact: 0.19, Confidence: Confirmed}, // score 0.19
		{Rule: "c-pinned-high", Severity: SeverityHigh, Impact: 0.01, Confidence: Confirmed, SeverityPinned: true},
		{Rule: "d-low", Severity: SeverityLow, Impact: 0.001, Confidence: Confirmed},
	}
	Rank(fs)
	want := []struct {
		rule string
		sev  Severity
	}{{"c-pinned-high", SeverityHigh}, {"b-medium-confirmed", SeverityMedium}, {"a-high-likely", SeverityMedium}, {"d-low", SeverityLow}}
	for i, w := range want {
		if fs[i].Rule != w.rule || fs[i].Severity != w.sev {
			t.Errorf("%d: %s %s, want %s %s", i, fs[i].Rule, fs[i].Severity, w.rule, w.sev)
		}
	}
}

// An info finding is a note: with the largest impact it still does not
// demote the graded findings after it (a team's info rule at 5% turned
// every medium into info, and --fail-on medium stopped failing); it stays
// info and moves below them.
func TestRankInfoDoesNotDemote(t *testing.T) {
	fs := []Finding{
		{Rule: "a-medium", Severity: SeverityMedium, Impact: 0.03, Confidence: Confirmed},
		{Rule: "team-note", Severity: SeverityInfo, Impact: 0.05, Confidence: Confirmed},
		{Rule: "b-low", Severity: SeverityLow, Impact: 0.01, Confidence: Confirmed},
	}
	Rank(fs)
	want := []struct {
		rule string
		sev  Severity
	}{{"a-medium", SeverityMedium}, {"b-low", SeverityLow}, {"team-note", SeverityInfo}}
	for i, w := range want {
		if fs[i].Rule != w.rule || fs[i].Severity != w.sev {
			t.Errorf("%d: %s %s, want %s %s", i, fs[i].Rule, fs[i].Severity, w.rule, w.sev)
		}
	}
}
