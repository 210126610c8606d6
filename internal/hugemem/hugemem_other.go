//go:build !linux

package hugemem

// advise is a no-op off Linux (see hugemem_linux.go).
func advise[T any]([]T) {}
