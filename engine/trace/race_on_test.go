//go:build race

package trace

// Under the race detector the bomb tests read smaller streams: they are
// there for the goroutines, the plain run checks the memory bounds.
const bombSize = 16 << 20

// raceOn is whether the tests run under the race detector.
const raceOn = true
