package stack

import (
	"strings"
)

// Parsing bounds. A stack trace is data from the application: it may be huge, malformed or
// hostile, and every parser reads it in one pass with these ceilings.
const (
	// maxTraceBytes is how much of a trace is read. Innermost frames come first in every format
	// but Python's, where the tail is read instead.
	maxTraceBytes = 1 << 20
	// maxLineBytes: longer lines are not frames of any runtime and are skipped.
	maxLineBytes = 8 << 10
	// maxSegments bounds the chained exceptions kept (Caused by:, inner exceptions, …); the
	// ones nearest the root cause are kept.
	maxSegments = 8
	// DefaultMaxFrames is how many frames a trace keeps when Options.MaxFrames is zero.
	DefaultMaxFrames = 128
	// maxMaxFrames caps Options.MaxFrames.
	maxMaxFrames = 4096
)

// rawFrame is a frame as the runtime wrote it, before it is mapped onto the project. Its file
// may be an absolute path of another machine; it never leaves this package.
type rawFrame struct {
	function string
	file     string
	line     int
	column   int
	// pkg is the Java/Kotlin package or the .NET namespace of the function, when the runtime
	// gives only a file's base name and the package says where the file lives.
	pkg string
}

// parsed is the result of reading a trace: raw frames, innermost first.
type parsed struct {
	format  Format
	frames  []rawFrame
	omitted int
	cut     bool
}

// parse reads trace in the first format one of its lines identifies.
func parse(trace string, maxFrames int) parsed {
	head, cut := trace, false
	if len(head) > maxTraceBytes {
		head, cut = head[:maxTraceBytes], true
	}
	f := sniff(head)
	text := head
	if f == FormatPython && cut {
		// Python prints the innermost frame last: read the end of the trace.
		text = trace[len(trace)-maxTraceBytes:]
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			text = text[i+1:]
		}
	}
	c := newCollector(maxFrames, f == FormatPython)
	switch f {
	case FormatGo:
		parseGo(text, c, cut || len(trace) == otelGoStackBytes)
	case FormatPython:
		parsePython(text, c)
	case FormatV8:
		parseV8(text, c)
	case FormatJVM:
		parseJVM(text, c)
	case FormatDotNet:
		parseDotNet(text, c)
	default:
		return parsed{cut: cut}
	}
	rootFirst := f == FormatPython || f == FormatDotNet || f == FormatGo
	frames, omitted := c.result(rootFirst)
	return parsed{format: f, frames: frames, omitted: omitted, cut: cut}
}

// sniff names the format of the first line that only one format writes.
func sniff(text string) Format {
	for rest := text; rest != ""; {
		var line string
		line, rest = nextLine(rest)
		if len(line) > maxLineBytes {
			continue
		}
		if f := classify(line); f != FormatUnknown {
			return f
		}
	}
	return FormatUnknown
}

// classify names the format a line belongs to, or FormatUnknown for lines that could be
// anything (messages, blank lines, source excerpts).
func classify(line string) Format {
	switch {
	case isGoroutineHeader(line):
		return FormatGo
	case strings.HasPrefix(line, "\t") && isGoFileLine(line):
		return FormatGo
	case strings.HasPrefix(line, "Traceback (most recent call last):"):
		return FormatPython
	}
	if _, ok := parsePythonFileLine(line); ok {
		return FormatPython
	}
	body, ok := atLine(line)
	if !ok {
		return FormatUnknown
	}
	if _, ok := parseDotNetFrame(body); ok {
		return FormatDotNet
	}
	if _, ok := parseJVMFrame(body); ok {
		return FormatJVM
	}
	if _, ok := parseV8Frame(body); ok {
		return FormatV8
	}
	return FormatUnknown
}

// atLine returns what follows "at " on a line indented by spaces or tabs, the frame line of
// V8, the JVM and .NET.
func atLine(line string) (string, bool) {
	t := strings.TrimLeft(line, " \t")
	if len(t) == len(line) || !strings.HasPrefix(t, "at ") {
		return "", false
	}
	return strings.TrimRight(t[3:], " \t\r"), true
}

// nextLine splits off the first line of s, without its line ending.
func nextLine(s string) (line, rest string) {
	line, rest, _ = strings.Cut(s, "\n")
	return strings.TrimSuffix(line, "\r"), rest
}

// eachLine calls fn for every line of text no longer than maxLineBytes, until fn returns false.
func eachLine(text string, fn func(line string) bool) {
	for rest := text; rest != ""; {
		var line string
		line, rest = nextLine(rest)
		if len(line) <= maxLineBytes && !fn(line) {
			return
		}
	}
}

// collector gathers frames into segments (one per exception of a chain) with bounded memory:
// each segment keeps at most max frames — the innermost ones — and at most maxSegments
// segments are kept, the ones nearest the root cause.
type collector struct {
	max        int
	outerFirst bool // frames of a segment arrive outermost first (Python)
	segs       []*segment
	dropped    int // frames of segments that were not kept
}

type segment struct {
	frames  []rawFrame // ring buffer when outerFirst
	start   int        // ring start
	dropped int
	total   int
	// late: the segment encloses the ones printed after it (a Python exception group, printed
	// before its sub-exceptions), so it is placed after them.
	late bool
}

func newCollector(maxFrames int, outerFirst bool) *collector {
	return &collector{max: maxFrames, outerFirst: outerFirst}
}

// next starts a new segment: the frames of the next exception of a chain.
func (c *collector) next() {
	if n := len(c.segs); n > 0 && c.segs[n-1].total == 0 {
		return
	}
	c.segs = append(c.segs, &segment{})
	if len(c.segs) > 2*maxSegments {
		// Segments arriving root last keep the latest; root first keep the earliest. Either
		// way the middle of a chain this long is the least useful part; fold it away.
		drop := c.segs[maxSegments]
		c.dropped += drop.total
		c.segs = append(c.segs[:maxSegments], c.segs[maxSegments+1:]...)
	}
}

// enclosing marks the current segment as enclosing the segments that follow it.
func (c *collector) enclosing() {
	if len(c.segs) > 0 {
		c.segs[len(c.segs)-1].late = true
	}
}

// add appends a frame to the current segment.
func (c *collector) add(f rawFrame) {
	if len(c.segs) == 0 {
		c.segs = append(c.segs, &segment{})
	}
	s := c.segs[len(c.segs)-1]
	s.total++
	switch {
	case len(s.frames) < c.max:
		s.frames = append(s.frames, f)
	case c.outerFirst:
		// Keep the last max frames: overwrite the oldest.
		s.frames[s.start] = f
		s.start = (s.start + 1) % c.max
		s.dropped++
	default:
		s.dropped++
	}
}

// omit counts frames the runtime folded away.
func (c *collector) omit(n int) {
	if n > 0 {
		c.dropped += min(n, 1<<30)
	}
}

// result assembles the frames innermost first, root cause first, at most max in all.
func (c *collector) result(rootFirst bool) ([]rawFrame, int) {
	var segs []*segment
	omitted := c.dropped
	if !rootFirst {
		segs = make([]*segment, len(c.segs))
		for i, s := range c.segs {
			segs[len(c.segs)-1-i] = s
		}
	} else {
		segs = make([]*segment, 0, len(c.segs))
		for _, late := range []bool{false, true} {
			for _, s := range c.segs {
				if s.late == late {
					segs = append(segs, s)
				}
			}
		}
	}
	if len(segs) > maxSegments {
		for _, s := range segs[maxSegments:] {
			omitted += s.total
		}
		segs = segs[:maxSegments]
	}
	var out []rawFrame
	for _, s := range segs {
		omitted += s.dropped
		n := len(s.frames)
		for i := range n {
			var f rawFrame
			if c.outerFirst {
				// Oldest-first ring: innermost is the last written.
				f = s.frames[(s.start+n-1-i)%n]
			} else {
				f = s.frames[i]
			}
			if len(out) < c.max {
				out = append(out, f)
			} else {
				omitted++
			}
		}
	}
	return out, omitted
}

// splitLocation splits "path:line:col" or "path:line" from the right, since paths may hold
// colons (URLs, Windows drives). It reports the path, line and column (0 when absent).
func splitLocation(s string, wantColumn bool) (file string, line, col int, ok bool) {
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return "", 0, 0, false
	}
	last, ok := atoi(s[i+1:])
	if !ok {
		return "", 0, 0, false
	}
	if wantColumn {
		j := strings.LastIndexByte(s[:i], ':')
		if j >= 0 {
			if l, ok := atoi(s[j+1 : i]); ok {
				return s[:j], l, last, s[:j] != ""
			}
		}
	}
	return s[:i], last, 0, s[:i] != ""
}

// atoi parses a small positive decimal; traces never hold line numbers past a billion, and
// anything else is not a line number.
func atoi(s string) (int, bool) {
	if s == "" || len(s) > 9 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}
