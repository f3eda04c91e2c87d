package stack

import "strings"

// parsePython reads a Python traceback, as traceback.format_exc() and an uncaught exception
// print it, outermost frame first:
//
//	Traceback (most recent call last):
//	  File "/app/shop/cart.py", line 12, in apply
//	    total = prices[sku]
//	            ~~~~~~^^^^^
//	KeyError: 'sku-1'
//
// Chained exceptions are printed root cause first, each with its own "Traceback" header and a
// separator ("The above exception was the direct cause of the following exception:", "During
// handling of the above exception, another exception occurred:"); exception groups prefix the
// same lines with "|" and "+", the group before the exceptions it holds, whose frames come
// first. Source excerpts and carets are skipped; "[Previous line
// repeated N more times]" counts N omitted frames.
func parsePython(text string, c *collector) {
	eachLine(text, func(line string) bool {
		t := strings.TrimLeft(line, " \t|+-")
		switch {
		case strings.HasPrefix(t, "Exception Group Traceback (most recent call last):"):
			// The group is printed before the exceptions it holds, which are where the
			// failures happened: its frames go after theirs.
			c.next()
			c.enclosing()
		case strings.HasPrefix(t, "Traceback (most recent call last):"),
			strings.HasPrefix(t, "The above exception was the direct cause"),
			strings.HasPrefix(t, "During handling of the above exception"):
			c.next()
		case strings.HasPrefix(t, "[Previous line repeated "):
			n, _ := atoi(strings.TrimSuffix(strings.TrimPrefix(t, "[Previous line repeated "), " more times]"))
			c.omit(n)
		default:
			if f, ok := parsePythonFileLine(line); ok {
				c.add(f)
			}
		}
		return true
	})
}

// parsePythonFileLine reads `  File "/app/x.py", line 12, in handler` (the ", in …" part is
// absent for a SyntaxError's location).
func parsePythonFileLine(line string) (rawFrame, bool) {
	rest, ok := strings.CutPrefix(strings.TrimLeft(line, " \t|+-"), `File "`)
	if !ok {
		return rawFrame{}, false
	}
	i := strings.LastIndex(rest, `", line `)
	if i <= 0 {
		return rawFrame{}, false
	}
	file, after := rest[:i], rest[i+len(`", line `):]
	num, fn, hasFn := strings.Cut(after, ", in ")
	n, ok := atoi(strings.TrimSpace(num))
	if !ok {
		return rawFrame{}, false
	}
	f := rawFrame{file: file, line: n}
	if hasFn {
		f.function = strings.TrimSpace(fn)
	}
	return f, true
}
