package engine

import (
	"math"
	"sort"

	"github.com/stepdoctor/stepdoctor/engine/facts"
)

// Step-time comparison (stepdoctor diff and the --baseline gate).
//
// Each side's capped per-step durations (facts.StepDurationsUS) are
// summarised by their median and a 20% trimmed mean. The change is the log
// ratio of the medians, ln(before / after): positive is faster, and swapping
// BEFORE and AFTER only flips its sign, so the verdict is mirrored exactly.
// The noise band comes from both runs' spread, measured robustly: per side
// the median absolute deviation of the log durations (times 1.4826, a
// standard deviation for normal data), the larger of the two sides for both,
// turned into the standard error of a median (1.2533 sigma / sqrt(n)) and
// combined over both sides; the band is StepNoiseZ standard errors, at least
// ln(1 + MinNoise). A slow outlier step moves neither the median nor the MAD,
// so two outliers cannot hide a real change. With fewer than MinSteps steps
// on a side the spread is unknown: the ratio is still given, marked "too few
// steps to judge", and the band is the MinNoise floor.

// MinSteps is the fewest steps a side needs for its spread, and so the
// verdict, to be measured.
const MinSteps = 3

// StepNoiseZ is the width of the noise band in standard errors of the log
// ratio of medians.
const StepNoiseZ = 3

// TrimFraction is the share of steps dropped from each end for the trimmed
// mean (floor(n * 0.2) steps each side).
const TrimFraction = 0.2

// Verdicts of a step-time comparison.
const (
	VerdictFaster   = "faster"
	VerdictSlower   = "slower"
	VerdictNoise    = "within noise"
	VerdictTooFew   = "too few steps to judge"
	VerdictNoSteps  = "no step time on both sides"
	verdictDisabled = ""
)

// StepSide summarises one side's step durations (microseconds).
type StepSide struct {
	Steps         int     `json:"steps"`
	MedianUS      float64 `json:"median_us"`
	TrimmedMeanUS float64 `json:"trimmed_mean_us"`
	MeanUS        float64 `json:"mean_us"`
	// Spread is the robust standard deviation of the log durations
	// (1.4826 MAD); 0 with fewer than MinSteps steps.
	Spread float64 `json:"spread"`
	// BatchSize is the samples per step when known (facts batch_size).
	BatchSize *int64 `json:"batch_size"`
	// PerSampleUS is MedianUS / BatchSize when the comparison is per
	// sample, else nil.
	PerSampleUS *float64 `json:"per_sample_us"`
}

// StepComparison compares the step times of before and after.
type StepComparison struct {
	Before StepSide `json:"before"`
	After  StepSide `json:"after"`
	// PerSample is true when the batch sizes differ: the medians are
	// compared per sample.
	PerSample bool `json:"per_sample"`
	// LogRatio is ln(before / after) of the medians (per sample when
	// PerSample): > 0 is faster. SpeedUp is exp(LogRatio).
	LogRatio float64 `json:"log_ratio"`
	SpeedUp  float64 `json:"speed_up"`
	// Band is the noise band of LogRatio: |LogRatio| <= Band is noise.
	Band float64 `json:"band"`
	// Measured is false when a side has fewer than MinSteps steps (the
	// band is then the MinNoise floor).
	Measured bool   `json:"measured"`
	Verdict  string `json:"verdict"`
}

// Factor is how many times faster or slower after is (>= 1).
func (c *StepComparison) Factor() float64 { return math.Exp(math.Abs(c.LogRatio)) }

// RelChange is after / before - 1 of the compared medians (0.25 = 25%
// slower).
func (c *StepComparison) RelChange() float64 { return math.Exp(-c.LogRatio) - 1 }

// compareSteps compares two sides' step durations; nil when a side has
// none.
func compareSteps(b, a *facts.Facts) *StepComparison {
	bs, as := stepSide(b), stepSide(a)
	if bs == nil || as == nil || bs.MedianUS <= 0 || as.MedianUS <= 0 {
		return nil
	}
	c := &StepComparison{Before: *bs, After: *as, Measured: bs.Steps >= MinSteps && as.Steps >= MinSteps}
	bm, am := bs.MedianUS, as.MedianUS
	if bs.BatchSize != nil && as.BatchSize != nil && *bs.BatchSize != *as.BatchSize && *bs.BatchSize > 0 && *as.BatchSize > 0 {
		c.PerSample = true
		bm, am = bm/float64(*bs.BatchSize), am/float64(*as.BatchSize)
		c.Before.PerSampleUS, c.After.PerSampleUS = ptr(bm), ptr(am)
	}
	c.LogRatio = math.Log(bm / am)
	c.SpeedUp = math.Exp(c.LogRatio)
	c.Band = math.Log1p(MinNoise)
	if c.Measured {
		sigma := max(bs.Spread, as.Spread)
		se := 1.2533 * sigma * math.Sqrt(1/float64(bs.Steps)+1/float64(as.Steps))
		c.Band = max(c.Band, StepNoiseZ*se)
	}
	switch {
	case !c.Measured:
		c.Verdict = VerdictTooFew
	case math.Abs(c.LogRatio) <= c.Band:
		c.Verdict = VerdictNoise
	case c.LogRatio > 0:
		c.Verdict = VerdictFaster
	default:
		c.Verdict = VerdictSlower
	}
	return c
}

// stepSide summarises the capped step durations of f; without per-step
// durations (an old facts file) it falls back to step_time_us as a single
// unmeasured value.
func stepSide(f *facts.Facts) *StepSide {
	durs := f.StepDurationsUS()
	if len(durs) == 0 {
		if f.StepTimeUS == nil {
			return nil
		}
		return &StepSide{Steps: min(f.StepsCount, 1), MedianUS: f.StepTimeUS.P50, TrimmedMeanUS: f.StepTimeUS.Mean, MeanUS: f.StepTimeUS.Mean, BatchSize: f.BatchSize}
	}
	s := &StepSide{Steps: len(durs), BatchSize: f.BatchSize}
	sorted := append([]float64(nil), durs...)
	sort.Float64s(sorted)
	s.MedianUS = medianSorted(sorted)
	var sum float64
	for _, v := range sorted {
		sum += v
	}
	s.MeanUS = sum / float64(len(sorted))
	k := int(math.Floor(TrimFraction * float64(len(sorted))))
	trimmed := sorted[k : len(sorted)-k]
	sum = 0
	for _, v := range trimmed {
		sum += v
	}
	s.TrimmedMeanUS = sum / float64(len(trimmed))
	if len(sorted) >= MinSteps && s.MedianUS > 0 {
		lm := math.Log(s.MedianUS)
		dev := make([]float64, 0, len(sorted))
		for _, v := range sorted {
			if v > 0 {
				dev = append(dev, math.Abs(math.Log(v)-lm))
			}
		}
		sort.Float64s(dev)
		if len(dev) > 0 {
			s.Spread = 1.4826 * medianSorted(dev)
		}
	}
	return s
}

// medianSorted of sorted values (the mean of the middle two for an even count).
func medianSorted(sorted []float64) float64 {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}
