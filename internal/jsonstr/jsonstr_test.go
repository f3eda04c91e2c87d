package jsonstr

import (
	"bytes"
	"encoding/json"
	"testing"
)

// encode is what encoding/json writes for s, with or without HTML escaping.
func encode(t *testing.T, s string, html bool) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(html)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

var samples = []string{
	"", "plain", `quote " and \ backslash`, "<b>&amp;</b>", "tab\tnew\nline\rcr\bbs\fff", "\x00\x01\x1f\x7f",
	"caf\xc3\xa9", "bad \xff utf8 \xc3", "line\u2028sep\u2029para", "emoji 😀", string([]byte{0xed, 0xa0, 0x80}),
}

func TestAppendWritesWhatEncodingJSONWrites(t *testing.T) {
	for _, html := range []bool{false, true} {
		for _, s := range samples {
			want := encode(t, s, html)
			if got := Append(nil, s, html); !bytes.Equal(got, want) {
				t.Errorf("Append(%q, html %v) = %s, encoding/json writes %s", s, html, got, want)
			}
			if n := Len(s, html); n != len(want) {
				t.Errorf("Len(%q, html %v) = %d, want %d", s, html, n, len(want))
			}
			if plain := Plain(s, html); plain != (len(want) == len(s)+2 && string(want[1:len(want)-1]) == s) {
				t.Errorf("Plain(%q, html %v) = %v", s, html, plain)
			}
		}
	}
}

func FuzzAppend(f *testing.F) {
	for _, s := range samples {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, html := range []bool{false, true} {
			want := encode(t, s, html)
			if got := Append(nil, s, html); !bytes.Equal(got, want) {
				t.Fatalf("Append(%q, html %v) = %s, encoding/json writes %s", s, html, got, want)
			}
			if Len(s, html) != len(want) {
				t.Fatalf("Len(%q, html %v) = %d, want %d", s, html, Len(s, html), len(want))
			}
		}
	})
}
