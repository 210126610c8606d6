package facts

// StepDurationsUS returns each step's duration for the step statistics, in
// step order and microseconds: the extended step spans of Steps with the
// last step's drain (LastStepDrainUS) cut off (docs/ARCHITECTURE.md "Steps and
// their statistics"). These are the durations step_time_us and
// step_time_cv summarise, and the ones diff and the baseline gate compare.
// Nil without steps.
func (f *Facts) StepDurationsUS() []float64 {
	if len(f.Steps) == 0 {
		return nil
	}
	out := make([]float64, len(f.Steps))
	for i, s := range f.Steps {
		out[i] = s.DurUS
	}
	if f.LastStepDrainUS != nil {
		out[len(out)-1] = max(0, out[len(out)-1]-*f.LastStepDrainUS)
	}
	return out
}

// TopRows is the length of the top_ops, top_kernels and labels tables: a
// table that long may have left names out.
const TopRows = topN
