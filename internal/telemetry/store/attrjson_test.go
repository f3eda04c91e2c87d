package store

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"pgregory.net/rapid"
)

func TestAppendJSONStringRoundTripsAnyString(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.OneOf(
			rapid.String(),
			rapid.StringOf(rapid.RuneFrom([]rune{'"', '\\', '\n', '\t', 0, 0x1f, 0x7f, 'é', '\u2028', '<'})),
			rapid.Map(rapid.SliceOf(rapid.Byte()), func(b []byte) string { return string(b) }),
		).Draw(t, "s")
		enc := appendJSONString(nil, s)
		var got string
		if err := json.Unmarshal(enc, &got); err != nil {
			t.Fatalf("%q encodes to invalid JSON %s: %v", s, enc, err)
		}
		if want := replaceInvalidBytes(s); got != want {
			t.Fatalf("%q decoded to %q, want %q", s, got, want)
		}
	})
}

// replaceInvalidBytes is the specification of appendJSONString's repair: each byte that does
// not start a valid UTF-8 sequence becomes one U+FFFD.
func replaceInvalidBytes(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func TestAppendAttrsStringifiesValuesLikeTheExporter(t *testing.T) {
	m := pcommon.NewMap()
	m.PutStr("str", "plain")
	m.PutInt("int", -7)
	m.PutDouble("double", 2.5)
	m.PutBool("bool", false)
	m.PutEmptyBytes("bytes").FromRaw([]byte{1, 2, 3})
	m.PutEmptyMap("map").PutStr("k", "<v>")
	m.PutEmptySlice("slice").FromRaw([]any{int64(1), "two"})
	m.PutEmpty("empty")
	var got map[string]string
	raw := appendAttrs(nil, m, nil)
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	want := map[string]string{
		"str": "plain", "int": "-7", "double": "2.5", "bool": "false", "bytes": "AQID",
		"map": `{"k":"<v>"}`, "slice": `[1,"two"]`, "empty": "",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("got %d keys, want %d", len(got), len(want))
	}
}

func TestAppendAttrsKeepsTheFirstOfRepeatedKeys(t *testing.T) {
	for _, n := range []int{2, 40} { // both the small-slice and the set path
		m := attrsWithRepeatedKey(t, n)
		raw := appendAttrs(nil, m, nil)
		var got map[string]string
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if got["dup"] != "first" {
			t.Errorf("with %d keys: dup = %q, want the first occurrence", n, got["dup"])
		}
		if c := strings.Count(string(raw), `"dup"`); c != 1 {
			t.Errorf("with %d keys: the key appears %d times", n, c)
		}
		if len(got) != n-1 {
			t.Errorf("with %d keys: %d distinct keys, want %d", n, len(got), n-1)
		}
	}
}

// attrsWithRepeatedKey decodes an OTLP/JSON resource whose n attributes repeat the key "dup"
// (first "first", last "second") — the wire allows it, pcommon's Put never produces it.
func attrsWithRepeatedKey(t *testing.T, n int) pcommon.Map {
	t.Helper()
	kv := func(k, v string) string {
		return `{"key":"` + k + `","value":{"stringValue":"` + v + `"}}`
	}
	parts := []string{kv("dup", "first")}
	for i := range n - 2 {
		parts = append(parts, kv("k"+strconv.Itoa(i), "v"))
	}
	parts = append(parts, kv("dup", "second"))
	doc := `{"resourceSpans":[{"resource":{"attributes":[` + strings.Join(parts, ",") + `]}}]}`
	td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	m := td.ResourceSpans().At(0).Resource().Attributes()
	if m.Len() != n {
		t.Fatalf("decoded %d attributes, want %d with the repeat", m.Len(), n)
	}
	return m
}

func TestAppendAttrsWritesKeysThatRepairAlikeOnce(t *testing.T) {
	m := pcommon.NewMap()
	m.PutStr("k\xff", "first")
	m.PutStr("k\xfe", "second")
	into := map[string]string{}
	raw := appendAttrs(nil, m, into)
	if want := `{"k\ufffd":"first"}`; string(raw) != want {
		t.Errorf("appendAttrs = %s, want %s: the first of two keys that are one once repaired", raw, want)
	}
	if len(into) != 1 || into["k\uFFFD"] != "first" {
		t.Errorf("the ingest view = %q, want the first value only", into)
	}
}
