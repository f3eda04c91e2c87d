package commands

import (
	"bytes"
	"testing"
	"unicode/utf8"
)

func TestTailKeepsTheNewestBytes(t *testing.T) {
	tests := []struct {
		name   string
		size   int
		writes []string
	}{
		{"nothing written", 8, nil},
		{"less than the size", 8, []string{"abc"}},
		{"exactly the size", 8, []string{"abcdefgh"}},
		{"one byte over", 8, []string{"abcdefgh", "i"}},
		{"wrapping several times in small writes", 8, []string{"abc", "defg", "hij", "klmno", "p", "qrstu"}},
		{"a single write larger than the size", 8, []string{"abcdefghijklmnopqrstuvwxyz"}},
		{"a large write after a small one", 8, []string{"ab", "cdefghijklmnop"}},
		{"a write ending exactly at the wrap point", 8, []string{"abcde", "fgh", "ijklmnop"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tl := newTail(tt.size)
			var all []byte
			for _, w := range tt.writes {
				if n, err := tl.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
				all = append(all, w...)
			}
			got, truncated := tl.Bytes()
			want := all[max(0, len(all)-tt.size):]
			if !bytes.Equal(got, want) {
				t.Errorf("Bytes = %q, want %q", got, want)
			}
			if truncated != (len(all) > tt.size) {
				t.Errorf("truncated = %v with %d bytes written into %d", truncated, len(all), tt.size)
			}
			if tl.Total() != int64(len(all)) {
				t.Errorf("Total = %d, want %d", tl.Total(), len(all))
			}
		})
	}
}

func TestTailDropsAHalfCharacterAtItsStart(t *testing.T) {
	for _, text := range []string{"é", "€", "😀"} {
		for size := 5; size < 12; size++ {
			tl := newTail(size)
			for range 10 {
				_, _ = tl.Write([]byte(text))
			}
			got, _ := tl.Bytes()
			if !utf8.Valid(got) {
				t.Fatalf("tail of %q×10 in %d bytes is not valid UTF-8: %q", text, size, got)
			}
			if len(got) < size-(utf8.UTFMax-1) {
				t.Fatalf("tail of %q×10 in %d bytes lost more than a partial character: %q", text, size, got)
			}
		}
	}
}
