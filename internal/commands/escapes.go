package commands

import (
	"io"
	"sync/atomic"
)

// Bounds of one escape sequence. A stray ESC [ or ESC ] must not swallow the output after it:
// a control sequence longer than maxEscapeCSI bytes, or a string sequence (OSC, DCS, …) longer
// than maxEscapeString bytes, is abandoned and what follows is text again.
const (
	maxEscapeCSI    = 64
	maxEscapeString = 8 << 10
)

// escapeState is where escapeFilter is inside a sequence.
type escapeState uint8

const (
	stGround    escapeState = iota
	stC2                    // a 0xC2 byte: maybe the UTF-8 form of a C1 control
	stEsc                   // after ESC
	stEscInter              // ESC and intermediate bytes, waiting for the final byte
	stCSI                   // a control sequence: parameters and intermediates until a final byte
	stString                // the body of OSC, DCS, SOS, PM or APC, until BEL or ST
	stStringEsc             // ESC inside a string: ST if a backslash follows
	stStringC2              // 0xC2 inside a string: ST if 0x9C follows
)

// escapeFilter removes terminal escape sequences from a byte stream before it reaches w:
// CSI (colours, cursor moves, ESC [ … and its 8-bit form), OSC (titles, hyperlinks, ended by
// BEL or ST), DCS, SOS, PM and APC strings, and the other ESC sequences (charsets, keypad
// modes, resets). A command's output tail is for reading, and colour codes cost bytes of the
// budget, hide text from the redactor ("tok\x1b[0men") and could drive the agent's terminal.
//
// It filters the stream as it is written, before the ring keeps its newest bytes, so a
// sequence can never be cut in half at the start of the tail: what the ring holds is text.
// It only ever drops ASCII bytes of sequences, the UTF-8 forms of the C1 introducers (C2 90,
// 98, 9B, 9C, 9D, 9E, 9F) and a C2 that leads no character (before ESC, another C2 or the end
// of the output), so multi-byte characters pass whole.
type escapeFilter struct {
	w     io.Writer
	state escapeState
	osc   bool // the current string is an OSC, which a line break also ends
	n     int  // bytes of the current sequence, for the bounds
	total atomic.Int64
	buf   []byte
}

func newEscapeFilter(w io.Writer) *escapeFilter {
	return &escapeFilter{w: w}
}

// Total is how many bytes were written to the filter, escapes included.
func (f *escapeFilter) Total() int64 { return f.total.Load() }

// Write filters p into w. It reports all of p as written unless w fails.
func (f *escapeFilter) Write(p []byte) (int, error) {
	f.total.Add(int64(len(p)))
	f.buf = f.buf[:0]
	for _, b := range p {
		f.step(b)
	}
	if len(f.buf) > 0 {
		if _, err := f.w.Write(f.buf); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

func (f *escapeFilter) step(b byte) {
	switch f.state {
	case stGround:
		f.ground(b)
	case stC2:
		f.state = stGround
		switch b {
		case 0x9b:
			f.enter(stCSI)
		case 0x9d:
			f.enterString(true)
		case 0x90, 0x98, 0x9e, 0x9f:
			f.enterString(false)
		case 0x9c: // a lone ST
		case 0x1b, 0xc2:
			// A C2 that no continuation byte follows leads no character. Kept, it would meet
			// whatever follows the sequence b starts: C2, then ESC [ m, then 9B would come out
			// as C2 9B, the CSI this filter removes.
			f.ground(b)
		default:
			f.buf = append(f.buf, 0xc2)
			f.ground(b)
		}
	case stEsc:
		f.esc(b)
	case stEscInter:
		switch {
		case 0x20 <= b && b <= 0x2f && f.n < maxEscapeCSI:
			f.n++
		case 0x30 <= b && b <= 0x7e:
			f.state = stGround
		default:
			f.state = stGround
			f.ground(b)
		}
	case stCSI:
		switch {
		case 0x20 <= b && b <= 0x3f && f.n < maxEscapeCSI:
			f.n++
		case 0x40 <= b && b <= 0x7e:
			f.state = stGround
		default: // a control, a non-ASCII byte or the bound: the sequence is over, b is text
			f.state = stGround
			f.ground(b)
		}
	case stString:
		f.str(b)
	case stStringEsc:
		if b == '\\' {
			f.state = stGround
			return
		}
		f.state = stEsc // ESC ended the string and starts a sequence of its own
		f.esc(b)
	case stStringC2:
		if b == 0x9c {
			f.state = stGround
			return
		}
		f.state = stString
		f.n++
		f.str(b)
	}
}

func (f *escapeFilter) ground(b byte) {
	switch b {
	case 0x1b:
		f.state = stEsc
	case 0xc2:
		f.state = stC2
	default:
		f.buf = append(f.buf, b)
	}
}

func (f *escapeFilter) esc(b byte) {
	switch {
	case b == '[':
		f.enter(stCSI)
	case b == ']':
		f.enterString(true)
	case b == 'P' || b == 'X' || b == '^' || b == '_':
		f.enterString(false)
	case b == 0x1b:
		f.state = stEsc
	case 0x20 <= b && b <= 0x2f:
		f.enter(stEscInter)
		f.n = 1
	case 0x30 <= b && b <= 0x7e:
		f.state = stGround
	default:
		f.state = stGround
		f.ground(b)
	}
}

func (f *escapeFilter) str(b byte) {
	switch {
	case b == 0x07:
		f.state = stGround
	case b == 0x1b:
		f.state = stStringEsc
	case b == 0xc2:
		f.state = stStringC2
	case b == 0x18 || b == 0x1a: // CAN and SUB cancel a sequence
		f.state = stGround
	case f.osc && (b == '\n' || b == '\r'), f.n >= maxEscapeString:
		f.state = stGround
		f.ground(b)
	default:
		f.n++
	}
}

func (f *escapeFilter) enter(s escapeState) {
	f.state, f.n = s, 0
}

func (f *escapeFilter) enterString(osc bool) {
	f.state, f.n, f.osc = stString, 0, osc
}
