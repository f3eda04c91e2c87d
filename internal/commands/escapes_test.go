package commands

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"pgregory.net/rapid"
)

// colourful is terminal output of the kinds build tools write: SGR colours, a cursor move,
// a window title (OSC ended by BEL), a hyperlink (OSC ended by ST), charset and keypad
// selections, a DCS string, and the 8-bit CSI in its UTF-8 form, around non-ASCII text.
const colourful = "\x1b[1;31mFAIL\x1b[0m café \x1b[2K\x1b[1G" +
	"\x1b]0;go test\x07" +
	"\x1b]8;;https://example.com/x\x1b\\link\x1b]8;;\x1b\\ " +
	"\x1b(B\x1b=\x1b>\x1b7\x1b8\x1bc" +
	"\x1bP1$r0m\x1b\\" +
	"\u009b32m日本\u009b0m" +
	"\x1b[?25l\x1b[?25h done\n"

const colourfulPlain = "FAIL café link 日本 done\n"

func TestTerminalEscapesDoNotReachTheTail(t *testing.T) {
	e := &Executor{Dir: t.TempDir()}
	res := run(t, e, context.Background(), helperArgv(t, "repeat", colourful, "3"), RunOptions{})
	if want := strings.Repeat(colourfulPlain, 3); string(res.Tail) != want {
		t.Errorf("Tail = %q, want %q", res.Tail, want)
	}
	if res.Truncated {
		t.Errorf("Truncated = true for output that fits")
	}
	if res.TotalBytes != int64(3*len(colourful)) {
		t.Errorf("TotalBytes = %d, want the %d bytes the command wrote", res.TotalBytes, 3*len(colourful))
	}
}

func TestAnEscapeCutAtTheTailsStartLeavesNoRemnant(t *testing.T) {
	unit := "\x1b[38;5;196mred\x1b[0m \x1b]8;;https://example.com/a-long-link\x07é "
	for size := 17; size < 60; size++ {
		e := &Executor{Dir: t.TempDir(), TailBytes: size}
		res := run(t, e, context.Background(), helperArgv(t, "repeat", unit, strconv.Itoa(500)), RunOptions{})
		if !res.Truncated {
			t.Fatalf("size %d: output was not truncated", size)
		}
		tail := string(res.Tail)
		if strings.ContainsAny(tail, "\x1b\x07[]") || strings.Contains(tail, "196m") || strings.Contains(tail, "example") {
			t.Fatalf("size %d: Tail %q holds the remnant of an escape sequence", size, tail)
		}
		if !utf8.ValidString(tail) || !strings.HasSuffix(tail, "red é ") {
			t.Fatalf("size %d: Tail %q is not the plain end of the output", size, tail)
		}
	}
}

func TestTheEscapeFilterIsIndependentOfHowOutputIsChunked(t *testing.T) {
	whole := stripAll([]byte(colourful))
	if string(whole) != colourfulPlain {
		t.Fatalf("one write gives %q, want %q", whole, colourfulPlain)
	}
	for chunk := 1; chunk <= len(colourful); chunk++ {
		var out bytes.Buffer
		f := newEscapeFilter(&out)
		for i := 0; i < len(colourful); i += chunk {
			if n, err := f.Write([]byte(colourful[i:min(i+chunk, len(colourful))])); err != nil || n != min(chunk, len(colourful)-i) {
				t.Fatalf("Write = %d, %v", n, err)
			}
		}
		if out.String() != colourfulPlain {
			t.Fatalf("writes of %d bytes give %q, want %q", chunk, out.String(), colourfulPlain)
		}
	}
}

func TestTheEscapeFilterKeepsEverythingElse(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain text is unchanged", "ok  \tpkg\t0.01s\r\n", "ok  \tpkg\t0.01s\r\n"},
		{"multi-byte characters are unchanged", "日本語 😀 é ü", "日本語 😀 é ü"},
		{"a lone C2 lead byte before ASCII is kept", "\xc2A", "\xc2A"},
		{"a lone C2 before an escape is dropped, so it cannot form a C1 control with what follows", "\xc2\x1b[m\x9b31m", "\x9b31m"},
		{"a lone C2 before another C2 is dropped", "\xc2\xc2\xa9", "\xc2\xa9"},
		{"the no-break space, C2 A0, is kept", "a\u00a0b", "a\u00a0b"},
		{"invalid bytes other than escapes are kept for the caller to repair", "bad \xff byte", "bad \xff byte"},
		{"a CSI cut off by a control character gives the character back", "\x1b[31\nnext", "\nnext"},
		{"a CSI cut off by a non-ASCII character keeps the character", "\x1b[3é", "é"},
		{"an escape followed by a new one starts over", "\x1b\x1b[31mx", "x"},
		{"an unterminated title ends at a line break", "\x1b]0;title\nafter", "\nafter"},
		{"an unterminated string swallows no more than its bound", "\x1bPq" + strings.Repeat("t", maxEscapeString+9) + "after", strings.Repeat("t", 10) + "after"},
		{"an over-long CSI ends and the rest is text", "\x1b[" + strings.Repeat("1;", maxEscapeCSI) + "mX", strings.Repeat("1;", maxEscapeCSI)[maxEscapeCSI:] + "mX"},
		{"CAN cancels a string", "\x1b]0;x\x18shown", "shown"},
		{"the 8-bit string terminator ends a string", "\u009d0;title\u009cshown", "shown"},
		{"an escape inside a string starts a new sequence", "\x1b]0;x\x1b[31mshown", "shown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(stripAll([]byte(tt.in))); got != tt.want {
				t.Errorf("filter(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func stripAll(b []byte) []byte {
	var out bytes.Buffer
	_, _ = newEscapeFilter(&out).Write(b)
	return out.Bytes()
}

func TestTextInterleavedWithEscapesComesOutAsTheTextAlone(t *testing.T) {
	text := rapid.StringOf(rapid.Rune().Filter(func(r rune) bool { return r != 0x1b && (r < 0x80 || r > 0x9f) }))
	params := rapid.StringOf(rapid.RuneFrom(nil, &unicode.RangeTable{R16: []unicode.Range16{{Lo: 0x20, Hi: 0x3f, Stride: 1}}}))
	body := rapid.StringOf(rapid.RuneFrom([]rune("abc ;:/?=&%.-_0123456789日é")))
	escape := rapid.OneOf(
		rapid.Custom(func(rt *rapid.T) string {
			return rapid.SampledFrom([]string{"\x1b[", "\u009b"}).Draw(rt, "csi") + params.Draw(rt, "params") +
				string(rune(rapid.IntRange(0x40, 0x7e).Draw(rt, "final")))
		}),
		rapid.Custom(func(rt *rapid.T) string {
			return rapid.SampledFrom([]string{"\x1b]", "\u009d", "\x1bP", "\u0090", "\x1b_", "\x1b^", "\x1bX"}).Draw(rt, "string") +
				body.Draw(rt, "body") + rapid.SampledFrom([]string{"\x07", "\x1b\\", "\u009c"}).Draw(rt, "terminator")
		}),
		rapid.Custom(func(rt *rapid.T) string {
			inter := rapid.StringOf(rapid.RuneFrom(nil, &unicode.RangeTable{R16: []unicode.Range16{{Lo: 0x20, Hi: 0x2f, Stride: 1}}})).Draw(rt, "inter")
			return "\x1b" + inter[:min(len(inter), 3)] + string(rune(rapid.IntRange(0x30, 0x7e).Filter(func(b int) bool {
				return inter != "" || !strings.ContainsRune("[]PX^_", rune(b))
			}).Draw(rt, "final")))
		}),
	)
	rapid.Check(t, func(rt *rapid.T) {
		var in, want strings.Builder
		for range rapid.IntRange(0, 12).Draw(rt, "parts") {
			if rapid.Bool().Draw(rt, "is text") {
				s := text.Draw(rt, "text")
				in.WriteString(s)
				want.WriteString(s)
			} else {
				in.WriteString(escape.Draw(rt, "escape"))
			}
		}
		stream := []byte(in.String())
		var out bytes.Buffer
		f := newEscapeFilter(&out)
		for len(stream) > 0 {
			n := rapid.IntRange(1, len(stream)).Draw(rt, "chunk")
			_, _ = f.Write(stream[:n])
			stream = stream[n:]
		}
		if out.String() != want.String() {
			rt.Fatalf("filter(%q) = %q, want %q", in.String(), out.String(), want.String())
		}
		if f.Total() != int64(in.Len()) {
			rt.Fatalf("Total = %d, want %d", f.Total(), in.Len())
		}
	})
}
