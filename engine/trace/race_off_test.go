//go:build !race

package trace

const bombSize = 256 << 20
