package trace_test

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/stepdoctor/stepdoctor/engine/trace"
)

// Crafted events for the fast path (fast.go): each is read with it and
// with the general read alone, after prefixes that leave the reader in
// different states, and cut short; the two reads must agree in every
// case (the whole Trace and the error).

// fastVsGeneral parses data with the fast path and without, and reports a
// difference.
func fastVsGeneral(data []byte) string {
	fast, ferr := trace.ParseWith(bytes.NewReader(data), "t.json", 1, 0)
	gen, gerr := trace.ParseGeneral(bytes.NewReader(data), "t.json", 1, 0)
	if fmt.Sprint(ferr) != fmt.Sprint(gerr) {
		return fmt.Sprintf("error: fast %v, general %v", ferr, gerr)
	}
	if ferr == nil && !reflect.DeepEqual(fast, gen) {
		return "trace: " + firstDiff(fast, gen) + fmt.Sprintf("\n fast health %+v\n gen  health %+v", fast.Health, gen.Health)
	}
	return ""
}

var fastCases = []string{
	// ts/dur forms
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":+5,"dur":1}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":.5,"dur":1}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":5,"dur":+1}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":5,"dur":.1}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1e3,"dur":-0}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":01,"dur":1E2}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":e5,"dur":1}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":-5,"dur":1}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":5.5.5,"dur":1}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":99999999999999999999,"dur":1}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":-1}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":700000000000}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":null,"dur":1}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":true,"dur":1}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":-,"dur":1}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":"5","dur":1}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":5 ,"dur":1 }`,
	// pid/tid forms
	`{"ph":"X","name":"a","pid":"1","tid":"x","ts":1,"dur":1}`,
	`{"ph":"X","name":"a","pid":"","tid":"x\u0001","ts":1,"dur":1}`,
	"{\"ph\":\"X\",\"name\":\"a\",\"pid\":\"\xff\",\"tid\":\"\x01\",\"ts\":1,\"dur\":1}",
	`{"ph":"X","name":"a","pid":-1,"tid":1.5,"ts":1,"dur":1}`,
	`{"ph":"X","name":"a","pid":+1,"tid":1,"ts":1,"dur":1}`,
	`{"ph":"X","name":"a","pid":1e3,"tid":-0,"ts":1,"dur":1}`,
	`{"ph":"X","name":"a","pid":01,"tid":"01","ts":1,"dur":1}`,
	`{"ph":"X","name":"a","pid":"-4611686018427387904","tid":1,"ts":1,"dur":1}`,
	`{"ph":"X","name":"a","pid":-4611686018427387904,"tid":1,"ts":1,"dur":1}`,
	`{"ph":"X","name":"a","pid":null,"tid":[1],"ts":1,"dur":1}`,
	`{"ph":"X","name":"a","pid":-,"tid":1,"ts":1,"dur":1}`,
	// names and cats
	"{\"ph\":\"X\",\"name\":\"a\x01b\",\"cat\":\"\xffk\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1}",
	"{\"ph\":\"X\",\"cat\":\"\x01\",\"name\":\"\xfe\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1}",
	`{"ph":"X","name":"","cat":"","pid":1,"tid":1,"ts":1,"dur":1}`,
	`{"ph":"X","name":1,"cat":null,"pid":1,"tid":1,"ts":1,"dur":1}`,
	`{"ph":"X","name":"a\u0001","pid":1,"tid":1,"ts":1,"dur":1}`,
	`{"ph":"X","cat":"kernel","name":"k","pid":1,"tid":1,"ts":1,"dur":1}`,
	`{"ph":"X","cat":"python_function","name":"k","pid":1,"tid":1,"ts":1,"dur":1}`,
	"{\"ph\":\"X\",\"name\":\"a\tb\nc\rd\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1}",
	"{\"ph\":\"X\",\"name\":\"a\x7f\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1}",
	// ph forms
	`{"ph":"","name":"a","pid":1,"tid":1,"ts":1,"dur":1}`,
	`{"ph":"XX","name":"a","pid":1,"tid":1,"ts":1,"dur":1}`,
	`{"ph":1,"name":"a","pid":1,"tid":1,"ts":1,"dur":1}`,
	`{"ph":"B","name":"a","pid":1,"tid":1,"ts":1}`,
	`{"ph":"E","name":"a","pid":1,"tid":1,"ts":3}`,
	`{"ph":"E","pid":1,"tid":2,"ts":3}`,
	`{"ph":"i","name":"[memory]","pid":1,"tid":1,"ts":1,"args":{"Total Reserved":10,"Device Type":1,"Bytes":-5,"Total Allocated":7,"Device Id":0}}`,
	`{"ph":"i","name":"[memory]","pid":1,"tid":1,"ts":1,"args":{"Device Type":1,"Total Reserved":10}}`,
	`{"ph":"i","name":"[memory]","pid":1,"tid":1,"ts":1,"args":{"Device Type":3000000000,"Total Reserved":1.5}}`,
	`{"ph":"i","name":"[memory]","pid":1,"tid":1,"ts":1,"args":{"Device Type":"1","Total Reserved":null}}`,
	`{"ph":"I","name":"x","pid":1,"tid":1,"ts":1}`,
	`{"ph":"C","name":"x","pid":1,"tid":1,"ts":1,"args":{"v":1}}`,
	`{"ph":"C","name":"x","pid":1,"tid":1}`,
	`{"ph":"M","name":"process_name","pid":1,"tid":1,"args":{"name":"x"}}`,
	`{"ph":"s","name":"x","pid":1,"tid":1,"ts":1,"id":3,"bp":"e"}`,
	`{"ph":"X","pid":1,"tid":1,"ts":1,"dur":1}`,
	`{}`,
	`{ }`,
	// whitespace placement
	"{ \"ph\" : \"X\" , \"name\" : \"a\" , \"pid\" : 1 , \"tid\" : 1 , \"ts\" : 1 , \"dur\" : 1 , \"args\" : { \"correlation\" : 3 , \"Input Dims\" : [ [ 1 , 2 ] , [ ] ] } }",
	"{\t\"ph\":\"X\",\t\"name\":\"a\",\r\n\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1}",
	"{\"ph\"\t:\"X\",\"name\"\n:\"a\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1}",
	"{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1\x0b}",
	"{\"ph\":\"X\",\x00\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1}",
	// duplicate keys
	`{"ph":"X","ph":"i","name":"a","pid":1,"tid":1,"ts":1,"dur":1}`,
	`{"ph":"X","name":"a","pid":1,"pid":2,"tid":1,"ts":1,"dur":1}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"ts":2,"dur":1}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{},"args":{"correlation":1}}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"correlation":1,"correlation":2}}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"device":1,"Device Id":2}}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"Device Id":2,"device":1}}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"External id":2,"external id":1}}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"bytes":2,"Bytes":1}}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"Input Dims":[[1]],"Input dims":[[2]]}}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"Input type":["float"],"Input type":["int"]}}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":NaN,"ts":1,"dur":1,"dur":2}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"correlation":1,"bytes":3,"Input Dims":[[2]]},"args":{"stream":2}}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"Input Dims":[[1]],"Input Dims":[[]],"Concrete Inputs":["a"],"Concrete Inputs":1}}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"Collective name":"x","Collective name":"y","Group size":2,"Group size":-1}}`,
	`{"ph":"i","name":"[memory]","pid":1,"tid":1,"ts":1,"args":{"Total Reserved":10,"Device Type":1,"Total Reserved":null,"Device Type":1.5}}`,
	// numbers JSON does not allow
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":030000}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":30000.}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1.e3,"dur":00.500}`,
	`{"ph":"X","name":"a","pid":-01,"tid":00,"ts":1,"dur":1,"args":{"correlation":007,"device":0.}}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"Input Dims":[[08,3],[0]]}}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"Input Dims":[[-0,-08]]}}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"x":[01,1.,1e,-]}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"x":00}`,
	// args numbers
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"correlation":1e3,"stream":-0,"device":01,"bytes":1.0,"External id":1.5}}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"stream":3000000000,"device":-2147483649,"correlation":99999999999999999999}}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"stream":"7","device":null,"correlation":[1]}}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"stream":+7}}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"stream":.7}}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"stream":-,"x":1}}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"stream":-Infinity}}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"stream":NaN}}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"x":N/A}}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":[1,2]}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":"x"}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":null}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"Call stack":"a;b"}}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"Call stack":"a;b","x":[1,]}}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"Input Dims":[[1]],"x":[1,]}}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"Collective name":"allreduce","dtype":"Float"}}`,
	// Input Dims forms
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"Input Dims":[[3000000000, 2], [5]]}}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"Input Dims":[[-1, 2]]}}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"Input Dims":[[1-2, 2]]}}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"Input Dims":[[1.5, 2]]}}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"Input Dims":[[1e2]]}}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"Input Dims":[]}}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"Input Dims":[[]]}}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"Input Dims":[[],[]]}}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"Input Dims":[null,[1]]}}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"Input Dims":[[[1]]]}}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"Input Dims":[[1,],[2]]}}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"Input Dims":[[1],]}}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"Input Dims":[,[1]]}}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"Input Dims":[[1][2]]}}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"Input Dims":[[1 2]]}}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"Input Dims":[[--1]]}}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"Input Dims":[[-]]}}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"Input Dims":"[[1]]"}}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"Input Dims":[[1]}}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"Input Dims":[[0, 3], [2]]}}`,
	"{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1,\"args\":{\"Input Dims\":[\t[1,\r\n2]\n]}}",
	// Input type / Concrete Inputs
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"Input type":["", "Scalar", "float"]}}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"Input type":["ScalarList", "TensorList","GenericList"]}}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"Input type":[]}}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"Input type":[""]}}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"Input type":["",""]}}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"Input type":["a",]}}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"Input type":[,"a"]}}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"Input type":["a",1]}}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"Input type":["a","b\"c"]}}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"Input type":"float"}}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"Input type":[ "float" , "int" ]}}`,
	"{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1,\"args\":{\"Input type\":[\"\x01\",\"\xff\"]}}",
	"{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1,\"args\":{\"Input type\":[\"Scalar\",\"\xff\"]}}",
	"{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1,\"args\":{\"Concrete Inputs\":[\"\x01\",\"[2, 2]\"]}}",
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"Concrete Inputs":["", "[2, 2]", "False", "1"]}}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"Concrete Inputs":[]}}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"Concrete Inputs":["",""],"Input type":["",""],"Input Dims":[[],[]]}}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"Concrete Inputs":[""],"Input type":[""],"Input Dims":[]}}`,
	// skipped values
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"x":{"y":[true,false,null,"\"",-1.5e3,{}]}}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"x":[true1]}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"x":true1}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"x":nul}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"x":[-]}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"x":[+1]}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"x":[.1]}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"x":+1}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"x":.1}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"x":[1}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"x":[}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"x":{]}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"x":[:]}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"x":[1:2]}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"x":"a\\"}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"x":["a\\\"b"]}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"x":"C:\path"}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"x":[-inf]}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"x":[N/A]}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"x":[truex]}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"x":[t]}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"x":[True]}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"x":True}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"x":[null/]}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"x":null/}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"x":[1,,2]}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"x":[ , ]}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"x":[]}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"x":{}}`,
	"{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1,\"x\":[\x01]}",
	// keys
	`{"p\u0068":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1}`,
	`{"ph":"X","nam\u0065":"a","pid":1,"tid":1,"ts":1,"dur":1}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"correlatio\u006e":5}}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"":1}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"":1}}`,
	`{"ph":"X" "name":"a","pid":1,"tid":1,"ts":1,"dur":1}`,
	`{"ph":"X",,"name":"a","pid":1,"tid":1,"ts":1,"dur":1}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,}`,
	`{,"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1}`,
	`{"ph":"X","name"1,"pid":1,"tid":1,"ts":1,"dur":1}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"x":1,}}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"x":1 "y":2}}`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{,"x":1}}`,
}

// fastPrefixes set up the state the event is read in.
var fastPrefixes = []string{
	``,
	`{"ph":"X","name":"e\u0001\"","pid":1,"tid":1,"ts":0,"dur":1},`, // leaves escaped true
	"{\"ph\":\"X\",\"name\":\"a\x01b\",\"cat\":\"\xffk\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":1},",
	`{"ph":"X","name":"a\u0001b","cat":"\u00ffk","pid":1,"tid":1,"ts":0,"dur":1},`,
	`{"ph":"X","name":"a","pid":1,"tid":1,"ts":0,"dur":1,"args":{"Input type":["a\u0001b","x"],"Concrete Inputs":["\u0001"]}},`,
	`{"ph":"i","name":"[memory]","pid":1,"tid":1,"ts":1,"args":{"Total Reserved":10}},`,
}

func fastWrap(prefix, ev string, bare bool) []byte {
	if bare {
		return []byte(`[` + prefix + ev + `]`)
	}
	return []byte(`{"traceEvents":[` + prefix + `{"ph":"X","name":"ok","pid":1,"tid":1,"ts":0,"dur":1},` + ev + `]}`)
}

func TestFastPathMatchesGeneral(t *testing.T) {
	bad := 0
	check := func(label string, data []byte) {
		if d := fastVsGeneral(data); d != "" {
			bad++
			if bad < 60 {
				t.Errorf("%s: %q\n  %s", label, data, d)
			}
		}
	}
	for _, ev := range fastCases {
		for pi, pre := range fastPrefixes {
			for _, bare := range []bool{false, true} {
				data := fastWrap(pre, ev, bare)
				check(fmt.Sprintf("prefix %d bare %v", pi, bare), data)
				// Also twice, and cut at every byte of the event.
				check("twice", fastWrap(pre, ev+","+ev, bare))
			}
		}
		full := fastWrap("", ev, false)
		for cut := len(full) - len(ev) - 2; cut < len(full); cut++ {
			check(fmt.Sprintf("cut %d", cut), full[:cut])
		}
	}
}

// TestFastPathLongStrings: strings near shortString and maxString.
func TestFastPathLongStrings(t *testing.T) {
	const maxString = 64 << 10
	fills := []string{"a", "\xff", "\x01", "é"}
	lens := []int{55, 56, 63, 64, 65, 71, 72, 73, maxString - 8, maxString - 2, maxString - 1, maxString, maxString + 1, maxString + 2, maxString + 8}
	bad := 0
	for _, n := range lens {
		for _, f := range fills {
			s := strings.Repeat("a", n-len(f)) + f
			s2 := f + strings.Repeat("a", n-len(f))
			for _, str := range []string{s, s2} {
				q := `"` + str + `"`
				evs := []string{
					`{"ph":"X","name":` + q + `,"pid":1,"tid":1,"ts":1,"dur":1}`,
					`{"ph":"X","cat":` + q + `,"pid":1,"tid":1,"ts":1,"dur":1}`,
					`{"ph":` + q + `,"pid":1,"tid":1,"ts":1,"dur":1}`,
					`{"ph":"X","pid":` + q + `,"tid":1,"ts":1,"dur":1}`,
					`{"ph":"X","pid":1,` + q + `:1,"tid":1,"ts":1,"dur":1}`,
					`{"ph":"X","pid":1,"x":` + q + `,"tid":1,"ts":1,"dur":1}`,
					`{"ph":"X","pid":1,"tid":1,"ts":1,"dur":1,"args":{"Input type":[` + q + `]}}`,
					`{"ph":"X","pid":1,"tid":1,"ts":1,"dur":1,"args":{"Input type":["Scalar",` + q + `]}}`,
					`{"ph":"X","pid":1,"tid":1,"ts":1,"dur":1,"args":{"Concrete Inputs":[` + q + `]}}`,
					`{"ph":"X","pid":1,"tid":1,"ts":1,"dur":1,"args":{` + q + `:5}}`,
				}
				for _, ev := range evs {
					data := fastWrap("", ev, false)
					if d := fastVsGeneral(data); d != "" {
						bad++
						if bad < 20 {
							t.Errorf("len %d fill %q ev %.60q: %s", n, f, ev, d)
						}
					}
				}
			}
		}
	}
	// Shape text near maxShapeText.
	for n := 4090; n <= 4100; n++ {
		evs := []string{
			`{"ph":"X","pid":1,"tid":1,"ts":1,"dur":1,"args":{"Input type":["` + strings.Repeat("f", n) + `"]}}`,
			`{"ph":"X","pid":1,"tid":1,"ts":1,"dur":1,"args":{"Input type":["` + strings.Repeat("f", n-2) + `","x"]}}`,
			`{"ph":"X","pid":1,"tid":1,"ts":1,"dur":1,"args":{"Input type":["` + strings.Repeat("f", n-1) + `",""]}}`,
			`{"ph":"X","pid":1,"tid":1,"ts":1,"dur":1,"args":{"Input type":["Scalar","` + strings.Repeat("f", n-7) + `"]}}`,
			`{"ph":"X","pid":1,"tid":1,"ts":1,"dur":1,"args":{"Input Dims":[[` + strings.Repeat("1,", n/2-2) + `1]]}}`,
			`{"ph":"X","pid":1,"tid":1,"ts":1,"dur":1,"args":{"Input Dims":[[` + strings.Repeat("1, ", n/2-2) + `1]]}}`,
		}
		for _, ev := range evs {
			if d := fastVsGeneral(fastWrap("", ev, false)); d != "" {
				bad++
				if bad < 40 {
					t.Errorf("shape n %d ev %.80q: %s", n, ev, d)
				}
			}
		}
	}
}

// TestFastPathAtWindowEnd places an event across the 1 MiB window end.
func TestFastPathAtWindowEnd(t *testing.T) {
	const window = 1 << 20
	evs := []string{
		`{"ph":"X","cat":"kernel","name":"k\u0001","pid":1,"tid":1,"ts":1,"dur":1,"args":{"Input Dims":[[1,2]],"Input type":["float"],"Concrete Inputs":[""],"correlation":1e3}}`,
		"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\x01\",\"pid\":\"\xff\",\"tid\":1,\"ts\":1.5,\"dur\":1,\"args\":{\"Input Dims\":[[1, 2]],\"Input type\":[\"\xfe\"],\"x\":[1,{\"a\":\"\\\"\"}],\"Total Reserved\":5}}",
	}
	bad := 0
	for _, ev := range evs {
		head := `{"traceEvents":[{"ph":"X","name":"ok","pid":1,"tid":1,"ts":0,"dur":1,"x":"`
		mid := `"},`
		for d := -len(ev) - 4; d <= 4; d++ {
			pad := window + d - len(head) - len(mid)
			data := []byte(head + strings.Repeat("p", pad) + mid + ev + `]}`)
			for _, w := range []int{1} {
				_ = w
				if df := fastVsGeneral(data); df != "" {
					bad++
					if bad < 10 {
						t.Errorf("d %d: %s", d, df)
					}
				}
			}
		}
	}
}
