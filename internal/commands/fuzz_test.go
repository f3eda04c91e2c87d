package commands

import (
	"bytes"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// perInput bounds the time one fuzz input may take: every function fuzzed here is meant to be
// linear in its input, so a slow input is a quadratic path, not a slow machine.
const perInput = time.Second

// slow reports whether run takes longer than perInput twice in a row: a quadratic path is slow
// every time, a pause of a busy machine (the fuzzer runs a worker per core) once.
func slow(run func()) (time.Duration, bool) {
	var took time.Duration
	for range 2 {
		start := time.Now()
		run()
		if took = time.Since(start); took <= perInput {
			return took, false
		}
	}
	return took, true
}

// FuzzDenyRuleSpellings denies one flag with one value and checks that every spelling a common
// parser reads as that flag and value is denied: --name=value, --name:value, the split form,
// the single-dash form and, for a one-letter name, the value glued on, wherever it sits among
// other arguments.
func FuzzDenyRuleSpellings(f *testing.F) {
	for _, s := range []struct{ name, value, other string }{
		{"env", "prod", "--dry-run"},
		{"force", "true", "-v"},
		{"no-verify", "", "x"},
		{"e", "prod", "-estaging"},
		{"c", "./prod.yml", "-count=1"},
		{"Target", "Production ", "--"},
		{"ß", "ǅ", "\u200b"},
		{"config", "a:b=c", "--config"},
		{"\x80", "0", "0"}, // found: a glued value after an invalid byte was not read
	} {
		f.Add(s.name, s.value, s.other)
	}
	c, err := NewCatalog([]Command{{Path: "run", Argv: []string{"x"}}}, nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, name, value, other string) {
		n := normalize(name)
		if n == "" || strings.ContainsAny(n, separators) || strings.HasPrefix(n, "-") || strings.ContainsRune(name, 0) ||
			strings.ContainsRune(value, 0) || strings.ContainsRune(other, 0) || len(name)+len(value) > MaxArgLength-4 || len(other) > MaxArgLength {
			t.Skip("not a flag name a rule can hold, or not an argument a call can pass")
		}
		p, err := NewPolicy([]Rule{{Name: "run", Prefix: []string{"run"}}},
			[]Rule{{Name: "denied", Prefix: []string{"run", "--" + name + "=" + value}}})
		if err != nil {
			t.Fatalf("NewPolicy(--%s=%s): %v", name, value, err)
		}
		spellings := [][]string{
			{"--" + name + "=" + value},
			{"--" + name + ":" + value},
			{"-" + name + "=" + value},
			{"-" + name + " : " + value},
			{"--" + name, value},
		}
		if utf8.RuneCountInString(n) == 1 && normalize(value) != "" {
			// The letter itself: blanks around a name are the rule's to trim, but in "- x" a
			// parser reads the flag " ", not x.
			spellings = append(spellings, []string{"-" + n + value})
		}
		for _, args := range spellings {
			for _, call := range [][]string{args, append([]string{other}, args...), append(append([]string(nil), args...), other)} {
				var d Decision
				if took, ok := slow(func() { d = p.Decide(c, "run", call) }); ok {
					t.Fatalf("Decide(run, %q) took %v", call, took)
				}
				if d.Allowed || d.Rule != "denied" {
					t.Errorf("Decide(run, %q) = %+v, want denied by the rule --%s=%s", call, d, name, value)
				}
			}
		}
	})
}

// FuzzEscapeFilterAndTail feeds arbitrary output through the escape filter in chunks and into a
// tail ring, and checks what the agent would read: no escape sequence, nothing the chunking
// changed, no more than was written, and a tail that is the end of the filtered output.
func FuzzEscapeFilterAndTail(f *testing.F) {
	for _, s := range []string{
		colourful,
		"\x1b[38;5;196mred\x1b[0m \x1b]8;;https://example.com/a-long-link\x07é ",
		"\x1b]0;title\nafter",
		"\x1bPq" + strings.Repeat("t", 100) + "\x1b\\after",
		"\u009d0;title\u009cshown",
		"\xc2A\xc2\xa0\xff",
		"日本語 😀",
		"\xc2\x1b[m\x9b31mred", // a C2 before an escape met the 9B after it: C2 9B, a CSI
		"\xc2\xc2",             // found: a C2 before another C2 was kept
	} {
		f.Add([]byte(s), []byte{3, 1, 7}, uint16(16))
	}
	f.Fuzz(func(t *testing.T, in, cuts []byte, size uint16) {
		var whole []byte
		if took, ok := slow(func() { whole = stripAll(in) }); ok {
			t.Fatalf("filtering %d bytes took %v", len(in), took)
		}

		var chunked bytes.Buffer
		filter := newEscapeFilter(&chunked)
		ring := newTail(int(size%4096) + 1)
		rest := in
		for i := 0; len(rest) > 0; i++ {
			k := len(rest)
			if len(cuts) > 0 {
				k = min(k, int(cuts[i%len(cuts)])+1)
			}
			var out bytes.Buffer
			filter.w = &out
			if n, err := filter.Write(rest[:k]); n != k || err != nil {
				t.Fatalf("Write = %d, %v; want %d, nil", n, err, k)
			}
			chunked.Write(out.Bytes())
			_, _ = ring.Write(out.Bytes())
			rest = rest[k:]
		}

		if !bytes.Equal(whole, chunked.Bytes()) {
			t.Fatalf("filtered in chunks %q, in one write %q", chunked.Bytes(), whole)
		}
		if filter.Total() != int64(len(in)) {
			t.Errorf("Total = %d, want %d", filter.Total(), len(in))
		}
		if len(whole) > len(in) {
			t.Fatalf("filter(%q) = %q grew", in, whole)
		}
		if i := bytes.IndexByte(whole, 0x1b); i >= 0 {
			t.Fatalf("filter(%q) = %q keeps an ESC at %d", in, whole, i)
		}
		for _, c1 := range []byte{0x90, 0x98, 0x9b, 0x9c, 0x9d, 0x9e, 0x9f} {
			if bytes.Contains(whole, []byte{0xc2, c1}) {
				t.Fatalf("filter(%q) = %q keeps the C1 control C2 %X", in, whole, c1)
			}
		}
		if again := stripAll(whole); !bytes.Equal(again, whole) {
			t.Fatalf("filter is not idempotent: %q, then %q", whole, again)
		}

		got, truncated := ring.Bytes()
		if ring.Total() != int64(len(whole)) {
			t.Errorf("tail Total = %d, want %d", ring.Total(), len(whole))
		}
		if truncated != (len(whole) > len(ring.buf)) || len(got) > len(ring.buf) || !bytes.HasSuffix(whole, got) {
			t.Fatalf("tail of %d bytes over %q = %q (truncated %v)", len(ring.buf), whole, got, truncated)
		}
		if truncated && len(got) < len(ring.buf)-(utf8.UTFMax-1) {
			t.Fatalf("tail dropped %d bytes, more than a cut character", len(ring.buf)-len(got))
		}
	})
}
