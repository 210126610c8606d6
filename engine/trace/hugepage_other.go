//go:build !linux

package trace

// adviseHugePages is a no-op off Linux (see hugepage_linux.go).
func adviseHugePages([]Event) {}
