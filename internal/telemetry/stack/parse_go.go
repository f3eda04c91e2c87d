package stack

import "strings"

// otelGoStackBytes is the buffer the OpenTelemetry Go SDK hands runtime.Stack when a span
// records an error or panic with trace.WithStackTrace(true): a stack that fills it exactly was
// cut mid-line.
const otelGoStackBytes = 2048

// parseGo reads a goroutine trace as the Go runtime prints it — panics, runtime.Stack,
// runtime/debug.Stack and the OpenTelemetry Go SDK's exception.stacktrace (runtime.Stack into
// a 2048-byte buffer) — and the "function\n\tfile:line" pairs of error libraries that print
// stacks the same way without a goroutine header:
//
//	goroutine 1 [running]:
//	main.(*Cart).Apply(...)
//		/app/cart.go:11
//	main.handler()
//		/app/main.go:22 +0x73
//	created by main.main in goroutine 1
//		/app/main.go:30 +0xaa
//
// Only the first goroutine is read: it is the one that panicked or asked for its stack. When
// maybeCut is set, a last line without a line ending is dropped, since the buffer ended in it.
func parseGo(text string, c *collector, maybeCut bool) {
	if maybeCut && !strings.HasSuffix(text, "\n") {
		if i := strings.LastIndexByte(text, '\n'); i >= 0 {
			text = text[:i+1]
		} else {
			text = ""
		}
	}
	var (
		frames      []rawFrame // the goroutine's frames, at most c.max plus the panic frames
		panicAt     = -1       // index of the outermost panic frame
		pending     string
		havePending bool
		seenHeader  bool
		total       int
	)
	emit := func(f rawFrame) {
		total++
		if isGoPanicFunction(f.function) && total <= c.max*2 {
			// Frames inside the panic (the deferred recover, debug.Stack, the telemetry SDK
			// recording it) are machinery, not the failure: drop up to the outermost panic.
			panicAt = len(frames)
		}
		if len(frames) < c.max*2 {
			frames = append(frames, f)
		} else {
			c.omit(1)
		}
	}
	eachLine(text, func(line string) bool {
		switch {
		case isGoroutineHeader(line):
			if seenHeader && total > 0 {
				// A second goroutine (GOTRACEBACK=all, runtime.Stack(buf, true)): the first
				// one is the one that failed.
				pending, havePending = "", false
				return false
			}
			seenHeader = true
			pending, havePending = "", false
		case strings.HasPrefix(line, "\t"):
			file, lineNo, ok := parseGoFileLine(line)
			if !ok || !havePending {
				return true
			}
			emit(rawFrame{function: pending, file: file, line: lineNo})
			pending, havePending = "", false
		case strings.TrimSpace(line) == "", line == "...additional frames elided...":
			pending, havePending = "", false
		default:
			if havePending && seenHeader {
				// A function line right after another: the first had no file line (the
				// runtime prints one for each frame, but a cut buffer may not have).
				emit(rawFrame{function: pending})
			}
			pending, havePending = goFunctionName(line), true
		}
		return true
	})
	if havePending && seenHeader && !maybeCut {
		emit(rawFrame{function: pending})
	}
	if panicAt >= 0 && panicAt+1 < len(frames) {
		frames = frames[panicAt+1:]
	}
	for _, f := range frames {
		c.add(f)
	}
}

// isGoroutineHeader matches "goroutine 1 [running]:" and its variants ("goroutine 7 gp=0x…
// m=0 mp=0x… [running, locked to thread]:").
func isGoroutineHeader(line string) bool {
	rest, ok := strings.CutPrefix(line, "goroutine ")
	if !ok || !strings.HasSuffix(line, "]:") {
		return false
	}
	i := 0
	for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
		i++
	}
	return i > 0 && i < len(rest) && rest[i] == ' '
}

// isGoFileLine matches a tab-indented Go source line "\t/path/x.go:12 +0x1d", as a format
// signature: the path must end in .go or .s.
func isGoFileLine(line string) bool {
	file, _, ok := parseGoFileLine(line)
	return ok && (strings.HasSuffix(file, ".go") || strings.HasSuffix(file, ".s"))
}

// parseGoFileLine reads "\t/path/file.go:12", optionally followed by " +0x1d" and, under
// GOTRACEBACK=system, " fp=0x… sp=0x… pc=0x…".
func parseGoFileLine(line string) (string, int, bool) {
	s := strings.TrimPrefix(line, "\t")
	if s == "" || s[0] == ' ' || s[0] == '\t' {
		return "", 0, false
	}
	if i := strings.Index(s, " +0x"); i >= 0 {
		s = s[:i]
	} else if i := strings.Index(s, " fp=0x"); i >= 0 {
		s = s[:i]
	}
	file, lineNo, _, ok := splitLocation(strings.TrimRight(s, " "), false)
	if !ok {
		return "", 0, false
	}
	return file, lineNo, true
}

// goFunctionName takes the function of a Go frame line: "main.(*T).m(0x1, {0x2, 0x3})" →
// "main.(*T).m", "created by main.main in goroutine 1" → "main.main", "main.Map[...](...)" →
// "main.Map[...]".
func goFunctionName(line string) string {
	s := strings.TrimSpace(line)
	if rest, ok := strings.CutPrefix(s, "created by "); ok {
		if i := strings.Index(rest, " in goroutine "); i >= 0 {
			rest = rest[:i]
		}
		return rest
	}
	if strings.HasSuffix(s, ")") {
		if i := matchingOpen(s); i > 0 {
			s = s[:i]
		}
	}
	return s
}

// matchingOpen returns the index of the "(" that opens the group ending s, or -1.
func matchingOpen(s string) int {
	depth := 0
	for i := len(s) - 1; i >= 0; i-- {
		switch s[i] {
		case ')':
			depth++
		case '(':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// isGoPanicFunction reports the frame through which a panic enters the runtime: "panic"
// (Go 1.21 and later print runtime.gopanic so) or "runtime.gopanic".
func isGoPanicFunction(fn string) bool {
	return fn == "panic" || fn == "runtime.gopanic"
}
