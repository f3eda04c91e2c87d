package store

import (
	"slices"
	"strconv"
	"unicode/utf8"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/runlens/runlens/internal/jsonstr"
)

// appendAttrs appends m as a JSON object of string to string, stringifying every value with
// pcommon.Value.AsString exactly as the ClickHouse exporter fills its Map(String, String)
// columns. When a key repeats (OTLP allows it on the wire), or two keys differ only in invalid
// UTF-8 that both write as U+FFFD, the first occurrence wins, like pcommon.Map.Get, so the
// object never holds a duplicate key. When into is not nil it receives
// the same pairs, the view the conventions read.
func appendAttrs(dst []byte, m pcommon.Map, into map[string]string) []byte {
	dst = append(dst, '{')
	n := m.Len()
	var small [16]string
	seen := small[:0]
	var seenSet map[string]struct{}
	if n > len(small) {
		seenSet = make(map[string]struct{}, n)
	}
	first := true
	for k, v := range m.All() {
		if n > 1 {
			// Keys are compared as written: two keys with different invalid bytes are one
			// key once repaired, and json_each would see both.
			key := validUTF8(k)
			if seenSet != nil {
				if _, dup := seenSet[key]; dup {
					continue
				}
				seenSet[key] = struct{}{}
			} else {
				if slices.Contains(seen, key) {
					continue
				}
				seen = append(seen, key)
			}
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		val := v.AsString()
		dst = appendJSONString(dst, k)
		dst = append(dst, ':')
		dst = appendJSONString(dst, val)
		if into != nil {
			into[validUTF8(k)] = validUTF8(val)
		}
	}
	return append(dst, '}')
}

// appendJSONString appends s as a JSON string literal, as encoding/json writes it without HTML
// escaping. Invalid UTF-8 becomes U+FFFD, so the column always holds JSON that SQLite's json
// functions accept.
func appendJSONString(dst []byte, s string) []byte { return jsonstr.Append(dst, s, false) }

// validUTF8 returns s as the JSON text written by appendJSONString reads back: every byte of
// invalid UTF-8 replaced by U+FFFD. Derived columns computed at ingest from the attributes must
// equal those computed later from the stored JSON.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	b := make([]byte, 0, len(s)+8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = utf8.AppendRune(b, utf8.RuneError)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return string(b)
}

// appendInt appends n in decimal.
func appendInt(dst []byte, n int64) []byte { return strconv.AppendInt(dst, n, 10) }
