package jsonread

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
)

// reference decodes data as the validators used to: encoding/json's Decoder with UseNumber,
// then the end of the input.
func reference(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("unexpected data after the top-level value")
	}
	return v, nil
}

var decodeSeeds = []string{
	`{}`, `[]`, `""`, `0`, `-0`, `-0.5e+10`, `1E-2`, `true`, `false`, `null`, ` {"a" : [1, 2.5, "x", null, {}]} `,
	`{"a":1,"a":2}`, `{"a":{"b":1},"a":[]}`, `"\u00e9\n\t\"\\\/\b\f\r"`, `"\ud83d\ude00"`, `"\ud83d"`, `"\ud83dx"`,
	`"\ud83d\u0041"`, `"\ude00\ud83d"`, "\"\xff\xfe\"", "\"a\xc3\"", "\"\xed\xa0\x80\"", "\"é😀\"", `"\u12"`, `"\x"`,
	"\"\x01\"", `01`, `-`, `1.`, `.5`, `1e`, `1e+`, `+1`, `[1,]`, `{"a":1,}`, `{"a"}`, `{a:1}`, `[1 2]`, `{} {}`,
	`{} x`, ``, ` `, `tru`, `nul`, `truex`, `[`, `{"a":`, `"abc`, "{\"k\":\"v\"}\n", `"\u0000"`, `{"":""}`,
	`1.0e400`, `123456789012345678901234567890`, "\t\r\n[\t]\r\n",
}

// FuzzDecodeAgreesWithEncodingJSON holds Decode to encoding/json: both accept or both refuse,
// and what both accept decodes to the same value.
func FuzzDecodeAgreesWithEncodingJSON(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := Decode(data)
		want, wantErr := reference(data)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("Decode(%q): error %v, encoding/json's %v", data, err, wantErr)
		}
		if err == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("Decode(%q) = %#v, encoding/json's %#v", data, got, want)
		}
	})
}

func TestDecodeAgreesWithEncodingJSON(t *testing.T) {
	for _, s := range decodeSeeds {
		got, err := Decode([]byte(s))
		want, wantErr := reference([]byte(s))
		if (err != nil) != (wantErr != nil) || err == nil && !reflect.DeepEqual(got, want) {
			t.Errorf("Decode(%q) = %#v, %v; encoding/json: %#v, %v", s, got, err, want, wantErr)
		}
	}
}

// The nesting bound is encoding/json's: MaxDepth levels decode, one more does not.
func TestDecodeNestsAsDeepAsEncodingJSON(t *testing.T) {
	for _, depth := range []int{MaxDepth, MaxDepth + 1} {
		for _, open := range []string{"[", `{"k":`} {
			close := map[string]string{"[": "]", `{"k":`: "}"}[open]
			data := []byte(strings.Repeat(open, depth) + "1" + strings.Repeat(close, depth))
			_, err := Decode(data)
			_, wantErr := reference(data)
			if (err != nil) != (wantErr != nil) || (err != nil) != (depth > MaxDepth) {
				t.Errorf("%d levels of %s: error %v, encoding/json's %v", depth, open, err, wantErr)
			}
		}
	}
}

func BenchmarkDecode(b *testing.B) {
	data := []byte(`{"corpus":{"documentCount":2,"fingerprint":"0181d3ba1aba0891","root":"docs"},"count":2,"docs":[{"description":"Build, migrate and roll out a release.","slug":"deploy","title":"Deploying"},{"description":"Background jobs.","slug":"jobs","title":"Jobs"}],"page":{"returned":2,"total":2,"truncated":false}}`)
	b.Run("jsonread", func(b *testing.B) {
		for b.Loop() {
			if _, err := Decode(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		for b.Loop() {
			if _, err := reference(data); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// FuzzMembersAgreesWithEncodingJSON holds Members to json.Unmarshal into a
// map[string]json.RawMessage: both accept or both refuse, and what both accept has the same
// names and the same raw values.
func FuzzMembersAgreesWithEncodingJSON(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add([]byte(s))
	}
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_docs","arguments":{}}}`,
		`{"id":"a\u0062","method":"ping","id":2}`, `{ "x" : [ 1 , { "y" : "\ud800" } ] , "z":null }`,
		`{"a":[1,2}`, `{"a":{"b":}}`, `{"a":"\q"}`, "{\"a\":\"\x01\"}", `{"a":1}}`, `{"a":01}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := Members(data)
		var want map[string]json.RawMessage
		wantErr := json.Unmarshal(data, &want)
		if wantErr == nil && want == nil {
			wantErr = errors.New("not an object") // null decodes to a nil map; Members wants an object
		}
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("Members(%q): error %v, encoding/json's %v", data, err, wantErr)
		}
		if err == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("Members(%q) = %q, encoding/json's %q", data, got, want)
		}
	})
}

func TestMembersNestAsDeepAsEncodingJSON(t *testing.T) {
	for _, depth := range []int{MaxDepth - 1, MaxDepth} {
		data := []byte(`{"k":` + strings.Repeat("[", depth) + strings.Repeat("]", depth) + "}")
		_, err := Members(data)
		var want map[string]json.RawMessage
		wantErr := json.Unmarshal(data, &want)
		if (err != nil) != (wantErr != nil) || (err != nil) != (depth >= MaxDepth) {
			t.Errorf("an object holding %d levels: error %v, encoding/json's %v", depth, err, wantErr)
		}
	}
}

// The raw values are the map's own: changing the input afterwards changes none of them.
func TestMembersOwnTheirBytes(t *testing.T) {
	data := []byte(`{"a":[1,2],"b":"x"}`)
	m, err := Members(data)
	if err != nil {
		t.Fatal(err)
	}
	for i := range data {
		data[i] = ' '
	}
	if string(m["a"]) != "[1,2]" || string(m["b"]) != `"x"` {
		t.Errorf("members changed with their input: %q", m)
	}
}
