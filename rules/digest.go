package rules

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"sort"
	"sync"

	"github.com/stepdoctor/stepdoctor/rules/builtin"
)

// BuiltinDigest identifies the embedded rule pack: "sha256:" and the first
// 12 hex digits of a SHA-256 over every rule and case file (path, length,
// contents, in path order). Two builds report the same digest exactly when
// they ship the same rules.
var BuiltinDigest = sync.OnceValue(func() string {
	var paths []string
	_ = fs.WalkDir(builtin.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			paths = append(paths, p)
		}
		return nil
	})
	sort.Strings(paths)
	h := sha256.New()
	for _, p := range paths {
		b, err := fs.ReadFile(builtin.FS, p)
		if err != nil {
			continue
		}
		h.Write([]byte(p))
		h.Write([]byte{0})
		h.Write([]byte(hex.EncodeToString([]byte{byte(len(b) >> 24), byte(len(b) >> 16), byte(len(b) >> 8), byte(len(b))})))
		h.Write(b)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))[:12]
})
