package stack

import "strings"

// parseDotNet reads a .NET stack as Exception.ToString() prints it, innermost frame first:
//
//	System.InvalidOperationException: checkout failed
//	 ---> System.ArgumentException: bad quantity
//	   at Shop.Cart.Apply(Int32 quantity) in /src/Shop/Cart.cs:line 45
//	   --- End of inner exception stack trace ---
//	   at Shop.Api.Checkout() in /src/Shop/Api.cs:line 12
//	   at System.Threading.Tasks.Task.Execute()
//
// Inner exceptions are printed first, so the root cause's frames already come first. Mono and
// Unity print "at Shop.Cart.Apply (System.Int32 q) [0x0000c] in /src/Cart.cs:45", read too.
// Compiler-generated names of async methods, lambdas and local functions
// ("Shop.Cart.<ApplyAsync>d__3.MoveNext") are read as the method they belong to.
func parseDotNet(text string, c *collector) {
	eachLine(text, func(line string) bool {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "--- End of inner exception stack trace") {
			c.next()
			return true
		}
		if body, ok := atLine(line); ok {
			if f, ok := parseDotNetFrame(body); ok {
				c.add(f)
			}
		}
		return true
	})
}

// parseDotNetFrame reads what follows "at " on a .NET frame line.
func parseDotNetFrame(body string) (rawFrame, bool) {
	var f rawFrame
	hasFile, mono := false, false
	if i := strings.LastIndex(body, " in "); i > 0 {
		loc := body[i+len(" in "):]
		if j := strings.LastIndex(loc, ":line "); j > 0 {
			if n, ok := atoi(loc[j+len(":line "):]); ok {
				f.file, f.line, hasFile = loc[:j], n, true
				body = body[:i]
			}
		} else if strings.HasSuffix(body[:i], "]") && strings.Contains(body[:i], " [0x") {
			if p, n, _, ok := splitLocation(loc, false); ok {
				if !strings.HasPrefix(p, "<") { // <filename unknown>, <4a1b…>
					f.file, f.line = p, n
				}
				body, mono = body[:i], true
			}
		}
	}
	if j := strings.LastIndex(body, " [0x"); j > 0 && strings.HasSuffix(body, "]") {
		body, mono = body[:j], true
	}
	if !strings.HasSuffix(body, ")") {
		return rawFrame{}, false
	}
	open := matchingOpen(body)
	if open <= 0 {
		return rawFrame{}, false
	}
	name, args := body[:open], body[open+1:len(body)-1]
	if mono {
		name = strings.TrimRight(name, " ")
	}
	if name == "" || strings.ContainsAny(name, " \t") || !strings.Contains(name, ".") {
		return rawFrame{}, false
	}
	if !hasFile && !mono {
		// Without a file, only the parameter list tells .NET ("(Int32 quantity)", "()") from
		// the JVM ("(Cart.java:45)", "(Native Method)").
		if args != "" && (!strings.Contains(args, " ") || args == "Native Method" || args == "Unknown Source") {
			return rawFrame{}, false
		}
	}
	f.function = dotNetMethod(name)
	f.pkg = dotNetNamespace(f.function)
	return f, true
}

// dotNetMethod names the method a compiler-generated frame belongs to:
// "Shop.Cart.<ApplyAsync>d__3.MoveNext" and "Shop.Cart.<>c__DisplayClass5_0.<Apply>b__0" →
// "Shop.Cart.ApplyAsync", "Shop.Cart.Apply".
func dotNetMethod(name string) string {
	i := strings.Index(name, ".<")
	if i <= 0 {
		return name
	}
	method := ""
	for rest := name[i:]; ; {
		open := strings.IndexByte(rest, '<')
		if open < 0 {
			break
		}
		end := strings.IndexByte(rest[open:], '>')
		if end < 0 {
			break
		}
		if m := rest[open+1 : open+end]; m != "" {
			method = m
		}
		rest = rest[open+end:]
	}
	if method == "" {
		return name
	}
	return name[:i] + "." + method
}

// dotNetNamespace is the namespace of "Ns.Sub.Class.Method": "Ns.Sub".
func dotNetNamespace(fn string) string {
	if i := strings.IndexByte(fn, '['); i > 0 {
		fn = fn[:i]
	}
	m := strings.LastIndexByte(fn, '.')
	if m <= 0 {
		return ""
	}
	c := strings.LastIndexByte(fn[:m], '.')
	if c <= 0 {
		return ""
	}
	return fn[:c]
}
