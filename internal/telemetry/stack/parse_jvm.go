package stack

import "strings"

// parseJVM reads a Java or Kotlin stack as Throwable.printStackTrace prints it, innermost
// frame first, then each cause:
//
//	java.lang.IllegalStateException: wrap
//		at com.shop.Api.handle(Api.java:20)
//		at java.base/java.lang.Thread.run(Thread.java:833)
//	Caused by: java.lang.ArithmeticException: / by zero
//		at com.shop.Cart.apply(Cart.kt:45)
//		... 1 more
//
// The last "Caused by:" is the root cause, so its frames come first. "... N more" frames are
// the enclosing exception's, which follow anyway. "Suppressed:" blocks (try-with-resources) are
// not on the failure's path and are skipped, with their own causes. Logback's packaging suffix
// (" ~[app.jar:1.0]") is ignored.
func parseJVM(text string, c *collector) {
	suppressed := -1 // indent of the Suppressed: block being skipped, -1 when none
	eachLine(text, func(line string) bool {
		t := strings.TrimLeft(line, " \t")
		indent := len(line) - len(t)
		switch {
		case strings.HasPrefix(t, "Suppressed: "):
			if suppressed < 0 || indent <= suppressed {
				suppressed = indent
			}
		case strings.HasPrefix(t, "Caused by: "):
			if suppressed >= 0 && indent >= suppressed {
				return true // a suppressed exception's cause
			}
			suppressed = -1
			c.next()
		case strings.HasPrefix(t, "at "):
			if suppressed >= 0 {
				if indent > suppressed {
					return true
				}
				suppressed = -1
			}
			if f, ok := parseJVMFrame(strings.TrimRight(t[3:], " \t\r")); ok {
				c.add(f)
			}
		}
		return true
	})
}

// parseJVMFrame reads what follows "at " on a JVM frame line: "com.shop.Cart.apply(Cart.java:45)",
// "java.base/java.lang.Thread.run(Thread.java:833)", "app//com.shop.Main.main(Main.kt:5)",
// "sun.misc.Unsafe.park(Native Method)".
func parseJVMFrame(body string) (rawFrame, bool) {
	if strings.HasSuffix(body, "]") {
		if i := strings.LastIndex(body, ") ~["); i > 0 {
			body = body[:i+1]
		} else if i := strings.LastIndex(body, ") ["); i > 0 {
			body = body[:i+1]
		}
	}
	if !strings.HasSuffix(body, ")") {
		return rawFrame{}, false
	}
	open := strings.IndexByte(body, '(')
	if open <= 0 || strings.IndexByte(body[open+1:], '(') >= 0 {
		return rawFrame{}, false
	}
	name, where := body[:open], body[open+1:len(body)-1]
	if strings.ContainsAny(name, " \t") {
		return rawFrame{}, false
	}
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:] // module or class loader: java.base@17/, app//
	}
	dot := strings.LastIndexByte(name, '.')
	if dot <= 0 || dot == len(name)-1 {
		return rawFrame{}, false
	}
	f := rawFrame{function: name}
	if cls := strings.LastIndexByte(name[:dot], '.'); cls > 0 {
		f.pkg = name[:cls]
	}
	switch where {
	case "Native Method", "Unknown Source", "Unknown":
		return f, true
	case "":
		return rawFrame{}, false
	}
	file, line := where, 0
	if p, n, _, ok := splitLocation(where, false); ok {
		file, line = p, n
	}
	if !isSourceFileName(file) {
		return rawFrame{}, false
	}
	f.file, f.line = file, line
	return f, true
}

// isSourceFileName matches a JVM source file's base name: "Cart.java", "Pricing.kt".
func isSourceFileName(s string) bool {
	dot := strings.LastIndexByte(s, '.')
	if dot <= 0 || dot == len(s)-1 || strings.HasPrefix(s, ".") || strings.ContainsAny(s, " \t:/\\") {
		return false
	}
	for _, r := range s[dot+1:] {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}
