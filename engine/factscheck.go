package engine

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/stepdoctor/stepdoctor/engine/facts"
)

// factTolerance is the slack on a ratio's 0..1 range and a count's 0
// floor for values written with float rounding.
const factTolerance = 1e-6

// Facts whose catalogue unit allows values a plain range check would
// refuse: ratios that may exceed 1 and a signed slope.
var (
	ratiosAboveOne = map[string]bool{
		"step_time_cv": true, "step_time_max_over_p50": true, "rank_step_time_over_median": true,
		"rank_compute_over_median": true, "rank_comm_over_median": true, "ranks_compute_spread_ratio": true,
		"memory_peak_ratio": true,
	}
	signedFacts = map[string]bool{"memory_growth_bytes_per_step": true}
)

// checkFactRanges refuses a facts line with a fact out of its unit's
// range: a ratio outside 0..1 (a few may exceed 1), a negative count,
// time, size or rate, a value that is not a finite number.
func checkFactRanges(line []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(line, &m); err != nil {
		return err
	}
	for _, d := range facts.Catalogue {
		raw, ok := m[d.Name]
		if !ok || string(raw) == "null" {
			continue
		}
		switch d.Unit {
		case facts.UnitRatio, facts.UnitCount, facts.UnitPerStep, facts.UnitPerMS, facts.UnitUS, facts.UnitBytes, facts.UnitBytesPerStep, facts.UnitFLOPS:
			var v float64
			if err := json.Unmarshal(raw, &v); err != nil {
				return fmt.Errorf("fact %s: %w", d.Name, err)
			}
			if err := checkFact(d.Name, d.Unit, v); err != nil {
				return err
			}
		case facts.UnitStatsUS:
			var st map[string]float64
			if err := json.Unmarshal(raw, &st); err != nil {
				return fmt.Errorf("fact %s: %w", d.Name, err)
			}
			for k, v := range st {
				if err := checkFact(d.Name+"."+k, facts.UnitUS, v); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func checkFact(name string, unit facts.Unit, v float64) error {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return fmt.Errorf("fact %s is %v, not a finite number", name, v)
	case signedFacts[name]:
		return nil
	case v < -factTolerance:
		return fmt.Errorf("fact %s is %v, below 0", name, v)
	case unit == facts.UnitRatio && !ratiosAboveOne[name] && v > 1+factTolerance:
		return fmt.Errorf("fact %s is %v, outside 0..1", name, v)
	}
	return nil
}
