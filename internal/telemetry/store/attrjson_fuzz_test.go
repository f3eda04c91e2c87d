package store

import (
	"bytes"
	"encoding/json"
	"strconv"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// FuzzAppendAttrsRoundTrips builds an attribute map from arbitrary bytes (NUL-separated keys and
// values, each value typed by the first byte of its text) and checks the stored column: valid
// JSON, no key twice, and read back by decodeAttrs it is exactly the view given to the
// conventions at ingest.
func FuzzAppendAttrsRoundTrips(f *testing.F) {
	for _, s := range []string{
		"http.request.method\x00sGET\x00http.response.status_code\x00i200",
		"db.query.text\x00sSELECT \"x\" FROM t WHERE a = '\\n'\x00ok\x00btrue",
		"bad\xffkey\x00s\xfe\xfd value\x00\u2028\x00d2.5",
		"\xff\x00sfirst\x00\xfe\x00ssecond", // two keys that are one once repaired were both written
		"k\x00sa\x00k\x00sb",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m := pcommon.NewMap()
		parts := bytes.Split(data, []byte{0})
		for i := 0; i+1 < len(parts); i += 2 {
			putTyped(m, string(parts[i]), string(parts[i+1]))
		}
		into := map[string]string{}
		raw := appendAttrs(nil, m, into)
		if !json.Valid(raw) {
			t.Fatalf("appendAttrs wrote invalid JSON %s", raw)
		}
		seen := map[string]bool{}
		dec := json.NewDecoder(bytes.NewReader(raw))
		if _, err := dec.Token(); err != nil {
			t.Fatal(err)
		}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				t.Fatal(err)
			}
			if seen[k.(string)] {
				t.Fatalf("%s holds the key %q twice", raw, k)
			}
			seen[k.(string)] = true
			if _, err := dec.Token(); err != nil {
				t.Fatal(err)
			}
		}
		got := decodeAttrs(string(raw))
		if len(got) != len(into) {
			t.Fatalf("decoded %d attributes from %s, ingest saw %d", len(got), raw, len(into))
		}
		for k, v := range into {
			if got[k] != v {
				t.Fatalf("attribute %q decoded as %q, ingest saw %q", k, got[k], v)
			}
		}
	})
}

// putTyped puts v under k as the type its first byte names: b bool, i int, d double, x bytes,
// anything else a string.
func putTyped(m pcommon.Map, k, v string) {
	if v == "" {
		m.PutStr(k, "")
		return
	}
	switch body := v[1:]; v[0] {
	case 'b':
		m.PutBool(k, body == "true")
	case 'i':
		n, _ := strconv.ParseInt(body, 10, 64)
		m.PutInt(k, n)
	case 'd':
		x, _ := strconv.ParseFloat(body, 64)
		m.PutDouble(k, x)
	case 'x':
		m.PutEmptyBytes(k).FromRaw([]byte(body))
	default:
		m.PutStr(k, body)
	}
}
