//go:build !race

package trace

const bombSize = 256 << 20

// raceOn is whether the tests run under the race detector.
const raceOn = false
