package shape

import (
	"strings"
	"testing"
	"unicode/utf8"

	"pgregory.net/rapid"
)

func TestCapString(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		max      int
		want     string
		wantTrim bool
	}{
		{name: "a short string is kept", in: "hello", max: 5, want: "hello"},
		{name: "a long ASCII string ends with the marker", in: "hello world", max: 8, want: "hello…", wantTrim: true},
		{name: "CJK is cut between characters", in: "日本語のテキスト", max: 10, want: "日本…", wantTrim: true},
		{name: "an emoji is never split", in: "ab😀😀😀", max: 9, want: "ab😀…", wantTrim: true},
		{name: "a combining accent stays with its letter", in: "cafe\u0301 noir", max: 8, want: "caf…", wantTrim: true},
		{name: "a ZWJ sequence is not left dangling", in: "x👩\u200d💻yz", max: 11, want: "x…", wantTrim: true},
		{name: "no room for text beside the marker keeps the marker", in: "日本語", max: 4, want: "…", wantTrim: true},
		{name: "no room for the marker keeps whole runes only", in: "日本語", max: 3, want: "日", wantTrim: true},
		{name: "a zero budget gives the empty string", in: "abc", max: 0, want: "", wantTrim: true},
		{name: "a negative budget gives the empty string", in: "abc", max: -3, want: "", wantTrim: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, trimmed := CapString(tt.in, tt.max)
			if got != tt.want || trimmed != tt.wantTrim {
				t.Errorf("CapString(%q, %d) = %q, %v; want %q, %v", tt.in, tt.max, got, trimmed, tt.want, tt.wantTrim)
			}
		})
	}
}

func TestCapStringProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.OneOf(rapid.String(), multilingual()).Draw(t, "s")
		maxBytes := rapid.IntRange(-2, len(s)+4).Draw(t, "max")
		got, trimmed := CapString(s, maxBytes)
		if len(got) > max(maxBytes, 0) && trimmed {
			t.Fatalf("CapString(%q, %d) = %q is %d bytes", s, maxBytes, got, len(got))
		}
		if trimmed == (len(s) <= maxBytes) {
			t.Fatalf("CapString(%q, %d) reported trimmed=%v", s, maxBytes, trimmed)
		}
		if utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Fatalf("CapString(%q, %d) = %q is not valid UTF-8", s, maxBytes, got)
		}
		if !strings.HasPrefix(s, strings.TrimSuffix(got, Ellipsis)) {
			t.Fatalf("CapString(%q, %d) = %q is not a prefix of the input", s, maxBytes, got)
		}
	})
}

func TestTailBytes(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		max      int
		want     string
		wantTrim bool
	}{
		{name: "short output is kept whole", in: "ok\n", max: 10, want: "ok\n"},
		{name: "the newest bytes are kept", in: "line1\nline2\n", max: 6, want: "line2\n", wantTrim: true},
		{name: "a cut inside a character moves forward", in: "a日本", max: 4, want: "本", wantTrim: true},
		{name: "zero keeps nothing", in: "abc", max: 0, want: "", wantTrim: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, trimmed := TailBytes([]byte(tt.in), tt.max)
			if string(got) != tt.want || trimmed != tt.wantTrim {
				t.Errorf("TailBytes(%q, %d) = %q, %v; want %q, %v", tt.in, tt.max, got, trimmed, tt.want, tt.wantTrim)
			}
		})
	}
}

func TestTailBytesProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := multilingual().Draw(t, "s")
		maxBytes := rapid.IntRange(0, len(s)+4).Draw(t, "max")
		got, trimmed := TailBytes([]byte(s), maxBytes)
		if len(got) > maxBytes || !strings.HasSuffix(s, string(got)) || !utf8.Valid(got) {
			t.Fatalf("TailBytes(%q, %d) = %q: want a valid UTF-8 suffix of at most %d bytes", s, maxBytes, got, maxBytes)
		}
		if trimmed != (len(s) > maxBytes) || trimmed && len(got) < maxBytes-3 {
			t.Fatalf("TailBytes(%q, %d) = %q, %v: dropped more than a partial character", s, maxBytes, got, trimmed)
		}
	})
}

func TestShortenKeepsOneCharacter(t *testing.T) {
	tests := []struct {
		name string
		got  string
		want string
	}{
		{name: "the head keeps its first rune", got: shortenHead("日本語です", 1), want: "日…"},
		{name: "the tail keeps its last rune", got: shortenTail("日本語です", 1), want: "…す"},
		{name: "the tail keeps the newest bytes", got: shortenTail("old old old new", 9), want: "…ld new"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("got %q, want %q", tt.got, tt.want)
			}
		})
	}
}

// multilingual draws text mixing ASCII, CJK, emoji with modifiers and joiners, combining marks
// and JSON-escaped characters: the text that breaks naive byte cuts.
func multilingual() *rapid.Generator[string] {
	pieces := []string{
		"a", "Z", " ", "7", "日", "本", "語", "😀", "👍🏽", "👩\u200d💻", "e\u0301", "\u0915\u094d\u0937",
		"\"", "\\", "\n", "<", "&", "\u2028", "\x01", "é", "ß", "🇫🇷",
	}
	return rapid.Custom(func(t *rapid.T) string {
		parts := rapid.SliceOfN(rapid.SampledFrom(pieces), 0, 40).Draw(t, "pieces")
		return strings.Join(parts, "")
	})
}
