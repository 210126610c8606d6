package hugemem

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// TestHeapMappings reads a maps text: the run of adjacent mappings around
// the address, its private anonymous read-write ones on 2 MiB boundaries
// only.
func TestHeapMappings(t *testing.T) {
	maps := []byte(`00400000-0469e000 r-xp 00000000 08:01 1234 /usr/bin/stepdoctor
0469e000-066f3000 rw-p 00000000 00:00 0
42646000-42667000 rw-p 00000000 00:00 0                                  [heap]
c000000000-c000400000 rw-p 00000000 00:00 0
c000400000-c000600000 rw-p 00000000 00:00 0 [anon: Go: heap]
c000600000-c004000000 ---p 00000000 00:00 0
c004000000-c004400000 rw-p 00000000 00:00 0
c004400000-c004600000 rw-s 00000000 00:05 99 /dev/shm/x
c004600000-c004800000 rw-p 00000000 08:01 77 /tmp/mapped trace.json (deleted)
c004800000-c004a00000 rw-p 00000000 00:00 0
c004a00000-c004a01000 ---p 00000000 00:00 0
c004a01000-c005201000 rw-p 00000000 00:00 0
c005201000-c005400000 rw-p 00000000 00:00 0 [anon_shmem:x]
not a mapping line
c005600000-c005800000 rw-p 00000000 00:00 0
7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0                          [stack]
ffffffffffe00000-ffffffffffffffff rw-p 00000000 00:00 0
`)
	got := heapMappings(maps, 0xc004000010)
	want := [][2]uintptr{{0xc000000000, 0xc000400000}, {0xc000400000, 0xc000600000}, {0xc004000000, 0xc004400000}, {0xc004800000, 0xc004a00000}}
	if !slices.Equal(got, want) {
		t.Errorf("heapMappings = %x, want %x (shared, file and named mappings, a thread stack off 2 MiB boundaries and what lies past the gap at c005400000 are left)", got, want)
	}
	if got := heapMappings(maps, 0x42646100); len(got) != 0 {
		t.Errorf("the brk heap: %x, want none", got)
	}
	if got := heapMappings(maps, 0x1000); got != nil {
		t.Errorf("an address in no mapping: %x, want none", got)
	}
	if got := heapMappings(maps, 0xfffffffffff00000); len(got) != 0 {
		t.Errorf("a mapping ending off a 2 MiB boundary at the top of the address space: %x, want none", got)
	}
}

// sink keeps test objects on the heap.
var sink []*[64]int64

// TestMakeAdvisesHeap: once Make returns a large array, the mapping that
// holds a small heap object allocated before it carries the huge-page
// advice ("hg" in its VmFlags). Skipped where the kernel shows no VmFlags
// or does not take the advice even for the array itself.
func TestMakeAdvisesHeap(t *testing.T) {
	if thpDisabled {
		t.Skip("skipping: GODEBUG=disablethp=1 is set")
	}
	small := new([64]int64)
	sink = append(sink, small)
	big := Make[int64](0, 16<<20/8)
	big = append(big, 1)
	flags := vmFlags(t, uintptr(unsafe.Pointer(&big[0]))+4<<20)
	if !strings.Contains(flags, " hg") {
		t.Skipf("the kernel did not take MADV_HUGEPAGE for a 16 MiB array (VmFlags:%s)", flags)
	}
	if f := vmFlags(t, uintptr(unsafe.Pointer(small))); !strings.Contains(f, " hg") {
		t.Errorf("the heap mapping holding a small object is not advised (VmFlags:%s)", f)
	}
}

// TestDisableTHP: with GODEBUG=disablethp=1 (run in a child process, as
// the runtime reads it at start) neither a large array nor the heap
// around it is advised.
func TestDisableTHP(t *testing.T) {
	if os.Getenv("HUGEMEM_DISABLETHP_CHILD") == "1" {
		if !thpDisabled {
			t.Fatal("GODEBUG=disablethp=1 not seen")
		}
		small := new([64]int64)
		sink = append(sink, small)
		big := Make[int64](0, 16<<20/8)
		big = append(big, 1)
		for _, addr := range []uintptr{uintptr(unsafe.Pointer(&big[0])) + 4<<20, uintptr(unsafe.Pointer(small))} {
			if f := vmFlags(t, addr); strings.Contains(f, " hg") {
				t.Errorf("advised for huge pages at %#x under disablethp (VmFlags:%s)", addr, f)
			}
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestDisableTHP$", "-test.v")
	cmd.Env = append(os.Environ(), "HUGEMEM_DISABLETHP_CHILD=1", "GODEBUG=disablethp=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if !bytes.Contains(out, []byte("--- PASS: TestDisableTHP")) {
		t.Skipf("skipping: the child did not run the check:\n%s", out)
	}
}

// vmFlags returns the VmFlags of the mapping in /proc/self/smaps that
// holds addr.
func vmFlags(t *testing.T, addr uintptr) string {
	t.Helper()
	b, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Skipf("skipping: no /proc/self/smaps: %v", err)
	}
	in := false
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		if f := strings.Fields(line); len(f) > 0 && strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":") {
			lo, hi, _ := strings.Cut(f[0], "-")
			l, err1 := strconv.ParseUint(lo, 16, 64)
			h, err2 := strconv.ParseUint(hi, 16, 64)
			in = err1 == nil && err2 == nil && uintptr(l) <= addr && addr < uintptr(h)
			continue
		}
		if in && strings.HasPrefix(line, "VmFlags:") {
			return strings.TrimPrefix(line, "VmFlags:")
		}
	}
	t.Skipf("skipping: no mapping with VmFlags holds %#x", addr)
	return ""
}
