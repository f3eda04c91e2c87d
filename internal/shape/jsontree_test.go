package shape

import (
	"encoding/json"
	"errors"
	"testing"

	"pgregory.net/rapid"
)

func TestQuotedLenMatchesEncodingJSON(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.OneOf(rapid.String(), multilingual(), rawBytes()).Draw(t, "s")
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendQuoted(nil, s); string(got) != string(want) {
			t.Fatalf("appendQuoted(%q) = %s, encoding/json writes %s", s, got, want)
		}
		if got := quotedLen(s); got != len(want) {
			t.Fatalf("quotedLen(%q) = %d, want %d", s, got, len(want))
		}
		if isPlain(s) != (len(want) == len(s)+2) {
			t.Fatalf("isPlain(%q) = %v, but encoding/json writes %s", s, isPlain(s), want)
		}
	})
}

func TestParseEncodeRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		v := jsonValue(4).Draw(t, "v")
		raw, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		n, err := parseJSON(raw)
		if err != nil {
			t.Fatalf("parseJSON(%s): %v", raw, err)
		}
		if got := n.encode(nil); string(got) != string(raw) {
			t.Fatalf("encode(parse(%s)) = %s", raw, got)
		}
		if n.size() != len(raw) {
			t.Fatalf("size of %s = %d, want %d", raw, n.size(), len(raw))
		}
	})
}

func TestParseKeepsMemberOrderAndCompacts(t *testing.T) {
	n, err := parseJSON([]byte("{ \"z\" : 1 ,\n \"a\" : [ true , null, \"\\u00e9\\n\" ] , \"m\":{}}"))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"z":1,"a":[true,null,"é\n"],"m":{}}`
	if got := string(n.encode(nil)); got != want {
		t.Errorf("encode = %s, want %s", got, want)
	}
}

func TestParseRejectsMalformedInput(t *testing.T) {
	for _, in := range []string{``, `{`, `{"a":}`, `[1,]`, `{"a":1} x`, `"\x`, `nul`} {
		if _, err := parseJSON([]byte(in)); !errors.Is(err, errNotJSON) {
			t.Errorf("parseJSON(%q) error = %v, want errNotJSON", in, err)
		}
	}
}

// rawBytes draws byte strings that are often not valid UTF-8.
func rawBytes() *rapid.Generator[string] {
	return rapid.Custom(func(t *rapid.T) string { return string(rapid.SliceOf(rapid.Byte()).Draw(t, "bytes")) })
}

// jsonValue draws arbitrary JSON-marshalable values nested up to depth levels.
func jsonValue(depth int) *rapid.Generator[any] {
	return rapid.Custom(func(t *rapid.T) any {
		kinds := 4
		if depth > 0 {
			kinds = 6
		}
		switch rapid.IntRange(0, kinds-1).Draw(t, "kind") {
		case 0:
			return rapid.OneOf(rapid.String(), multilingual()).Draw(t, "string")
		case 1:
			return rapid.Float64().Filter(func(f float64) bool { return f == f && f < 1e300 && f > -1e300 }).Draw(t, "number")
		case 2:
			return rapid.Bool().Draw(t, "bool")
		case 3:
			return nil
		case 4:
			return rapid.SliceOfN(jsonValue(depth-1), 0, 5).Draw(t, "array")
		default:
			return rapid.MapOfN(rapid.OneOf(rapid.StringN(0, 8, -1), multilingual()), jsonValue(depth-1), 0, 5).Draw(t, "object")
		}
	})
}
