package codegen

import (
	"regexp"
	"strings"
	"testing"
)

// TestTranslatedPatternsKeepTheirECMAMeaning checks strings on which RE2's own reading of a
// pattern differs from ECMA-262's: the translation must give ECMA's answer.
func TestTranslatedPatternsKeepTheirECMAMeaning(t *testing.T) {
	tests := []struct {
		pattern string
		input   string
		match   bool
	}{
		{`^\S+$`, "a\u00a0b", false}, // U+00A0 is a space in ECMA-262, not in RE2
		{`^\S+$`, "a\vb", false},
		{`^\S+$`, "abc", true},
		{`^a\sb$`, "a\u2028b", true},
		{`^a\sb$`, "a\ufeffb", true},
		{`^[^\s=]+$`, "a\u3000b", false},
		{`^[^\s=]+$`, "a=b", false},
		{`^[^\s=]+$`, "ab", true},
		{`^a.b$`, "a\rb", false}, // "." stops at every line terminator
		{`^a.b$`, "a\u2029b", false},
		{`^a.b$`, "a\u00e9b", true},
		{`^a.b$`, "a\U0001F600b", true}, // one code point, as with the u flag
		{`^[.]$`, ".", true},
		{`^[.]$`, "x", false},
		{`^\d{2}$`, "\u0663\u0664", false}, // \d is ASCII in both
		{`^\u0041\x42$`, "AB", true},
		{`^\u{1F600}$`, "\U0001F600", true},
		{`^[\w-]{1,3}$`, "a-b", true},
		{`\S`, "   ", false},
	}
	for _, tc := range tests {
		re, err := translatePattern(tc.pattern)
		if err != nil {
			t.Errorf("%s: %v", tc.pattern, err)
			continue
		}
		if got := regexp.MustCompile(re).MatchString(tc.input); got != tc.match {
			t.Errorf("%s (as %s) on %q = %v, want %v", tc.pattern, re, tc.input, got, tc.match)
		}
	}
}

func TestPatternsWithoutAnExactRE2FormAreRefused(t *testing.T) {
	tests := []struct{ pattern, want string }{
		{`^(?=a)`, "(?= has no RE2 equivalent"},
		{`^(?<!a)b`, "(?<! has no RE2 equivalent"},
		{`(a)\1`, `back-reference \1`},
		{`[\S]`, `\S inside a character class`},
		{`[\b]`, `\b inside a character class`},
		{`a[]`, "empty character class"},
		{`\cJ`, `escape \c is not allowed`},
		{`\p{L}`, `escape \p is not allowed`},
		{`[a`, "not closed"},
		{`a\`, "lone backslash"},
		{`a{2,1}`, "not a valid RE2 expression"},
	}
	for _, tc := range tests {
		_, err := translatePattern(tc.pattern)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want it to say %q", tc.pattern, err, tc.want)
		}
	}
}
