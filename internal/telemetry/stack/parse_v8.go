package stack

import "strings"

// parseV8 reads a V8 stack (Node.js, Deno, Chromium) as Error.prototype.stack holds it,
// innermost frame first:
//
//	Error: boom
//	    at applyDiscount (/app/src/cart/checkout.ts:45:7)
//	    at async main (file:///app/main.mjs:2:24)
//	    at /app/server.js:3:51
//	    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)
//	    at JSON.parse (<anonymous>)
//
// Source-mapped TypeScript paths (--enable-source-maps) read the same. util.inspect prints an
// error's cause after it, behind "[cause]:": the cause is the root, so its frames come first.
// Eval frames ("eval at f (/app/x.js:1:2), <anonymous>:1:1") are read as the place of the eval.
func parseV8(text string, c *collector) {
	eachLine(text, func(line string) bool {
		if strings.Contains(line, "[cause]: ") {
			c.next()
			return true
		}
		if body, ok := atLine(line); ok {
			if f, ok := parseV8Frame(body); ok {
				c.add(f)
			}
		}
		return true
	})
}

// parseV8Frame reads what follows "at " on a V8 frame line.
func parseV8Frame(body string) (rawFrame, bool) {
	body = strings.TrimSuffix(body, " {") // util.inspect opens the error's own properties
	var fn, loc string
	if strings.HasSuffix(body, ")") {
		i := matchingOpen(body)
		if i <= 0 || body[i-1] != ' ' {
			return rawFrame{}, false
		}
		fn, loc = strings.TrimSpace(body[:i]), body[i+1:len(body)-1]
	} else {
		loc = body
	}
	fn = strings.TrimPrefix(fn, "async ")
	if i := strings.Index(fn, " [as "); i > 0 && strings.HasSuffix(fn, "]") {
		fn = fn[:i]
	}
	for depth := 0; strings.HasPrefix(loc, "eval at ") && depth < 8; depth++ {
		// "eval at f (origin), <anonymous>:1:1": the origin says where the eval ran.
		open := strings.Index(loc, " (")
		if open < 0 {
			return rawFrame{function: fn}, true
		}
		end := matchingClose(loc, open+1)
		if end < 0 {
			return rawFrame{function: fn}, true
		}
		loc = loc[open+2 : end]
	}
	switch loc {
	case "native", "<anonymous>", "unknown location":
		if fn == "" {
			return rawFrame{}, false
		}
		return rawFrame{function: fn}, true
	}
	if strings.HasPrefix(loc, "index ") && fn != "" { // Promise.all (index 0)
		return rawFrame{function: fn}, true
	}
	file, line, col, ok := splitLocation(loc, true)
	if !ok {
		return rawFrame{}, false
	}
	if strings.Contains(fn, " ") && !strings.HasPrefix(fn, "new ") && !strings.HasPrefix(fn, "get ") &&
		!strings.HasPrefix(fn, "set ") && !strings.Contains(fn, "<") {
		// V8 function names hold no spaces but "new X" and a few bracketed forms; anything
		// else is prose that happens to start with "at".
		return rawFrame{}, false
	}
	return rawFrame{function: fn, file: file, line: line, column: col}, true
}

// matchingClose returns the index of the ")" closing the "(" at s[open], or -1.
func matchingClose(s string, open int) int {
	depth := 0
	for i := open; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}
