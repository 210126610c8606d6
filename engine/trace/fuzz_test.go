package trace_test

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stepdoctor/stepdoctor/engine/facts"
	"github.com/stepdoctor/stepdoctor/engine/trace"
)

// seedLimit caps the bytes taken from each shared trace as a fuzz seed, so
// the fuzzer mutates small inputs; the prefixes are themselves truncated
// traces, which the reader must recover.
const seedLimit = 8 << 10

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"traceEvents":[{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":10,"dur":5,"args":{"correlation":1}}]}`,
		`[{"ph":"B","name":"a","pid":"1","tid":"x","ts":"5"},{"ph":"E","pid":"1","tid":"x","ts":"9.5"}]`,
		`{"traceEvents":[{"ph":"X","name":"ProfilerStep#1","cat":"user_annotation","pid":1,"tid":1,"ts":0,"dur":100},{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":1,"dur":3,"args":{"correlation":7}},{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":50,"dur":90,"args":{"correlation":7}},],}`,
		`{"traceEvents":[{"ph":"X","name":"a","ts":NaN,"dur":-inf,"args":{"x":"C:\path"}}`,
		`{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":N/A,"args":{"bytes":N/A,"l":[N/A]}}]}`,
		`{"nodes":[]}`,
		// The side tables: byte counts, record_shapes args, a repeated args object.
		`{"traceEvents":[{"ph":"i","s":"t","name":"[memory]","pid":1,"tid":1,"ts":1,"args":{"Bytes":-64,"Total Allocated":4096,"Total Reserved":8192,"Device Type":1,"Device Id":0}},{"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD (Pageable -> Device)","pid":0,"tid":7,"ts":2,"dur":1,"args":{"bytes":1024,"device":0,"stream":7}}]}`,
		`{"traceEvents":[{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":1,"dur":5,"args":{"Input type":["float",""]},"args":{"Input Dims":[[8,4],[4,2]],"Concrete Inputs":["",""]}}]}`,
	} {
		f.Add([]byte(s))
	}
	dir := filepath.Join("..", "..", "..", "shared", "traces")
	paths, _ := filepath.Glob(filepath.Join(dir, "*", "*", "*.json*"))
	more, _ := filepath.Glob(filepath.Join(dir, "*", "*", "*", "*.json*"))
	for _, p := range append(paths, more...) {
		if data := seed(p); data != nil {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := trace.Parse(bytes.NewReader(data), "fuzz.json")
		// The parallel read at any seams, and the serial read through a
		// window refilled a byte at a time, give the same result.
		for _, opt := range [][2]int{{2, 1}, {3, 64}} {
			got, gerr := trace.ParseWith(bytes.NewReader(data), "fuzz.json", opt[0], opt[1])
			if fmt.Sprint(gerr) != fmt.Sprint(err) || err == nil && !reflect.DeepEqual(got, tr) {
				t.Fatalf("%d workers, chunk %d: the parallel read differs from the serial one (error %v, serial %v)", opt[0], opt[1], gerr, err)
			}
		}
		if got, gerr := trace.ParseGeneral(bytes.NewReader(data), "fuzz.json", 1, 0); fmt.Sprint(gerr) != fmt.Sprint(err) || err == nil && !reflect.DeepEqual(got, tr) {
			t.Fatalf("the general read differs from the fast path's (error %v, fast %v)", gerr, err)
		}
		if got, gerr := trace.ParseWith(iotest.OneByteReader(bytes.NewReader(data)), "fuzz.json", 1, 0); fmt.Sprint(gerr) != fmt.Sprint(err) || err == nil && !reflect.DeepEqual(got, tr) {
			t.Fatalf("one-byte reads: the read differs (error %v, serial %v)", gerr, err)
		}
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.json") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		for i := range tr.Events {
			if tr.Events[i].Dur < 0 {
				t.Fatalf("event %d has negative duration %d", i, tr.Events[i].Dur)
			}
		}
		checkFacts(t, reflect.ValueOf(facts.Derive(tr, facts.DefaultConfig())).Elem(), "")
	})
}

// checkFacts asserts every *_ratio field is in [0,1] and every other
// number is finite and non-negative where it is a duration or count.
func checkFacts(t *testing.T, v reflect.Value, path string) {
	typ := v.Type()
	for i := 0; i < v.NumField(); i++ {
		fv, name := v.Field(i), typ.Field(i).Tag.Get("json")
		name, _, _ = strings.Cut(name, ",")
		if fv.Kind() == reflect.Pointer {
			if fv.IsNil() {
				continue
			}
			fv = fv.Elem()
		}
		switch fv.Kind() {
		case reflect.Struct:
			checkFacts(t, fv, path+name+".")
		case reflect.Float64:
			x := fv.Float()
			if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
				t.Fatalf("%s%s = %v: not a finite non-negative number", path, name, x)
			}
			if strings.HasSuffix(name, "_ratio") && x > 1+1e-12 {
				t.Fatalf("%s%s = %v > 1", path, name, x)
			}
		case reflect.Int, reflect.Int64:
			if fv.Int() < 0 && name != "rank" && name != "world_size" && name != "primary_device" && name != "id" {
				t.Fatalf("%s%s = %d < 0", path, name, fv.Int())
			}
		}
	}
}

func seed(path string) []byte {
	fh, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer fh.Close()
	var r io.Reader = fh
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(fh)
		if err != nil {
			return nil
		}
		r = zr
	}
	data, _ := io.ReadAll(io.LimitReader(r, seedLimit))
	return data
}
