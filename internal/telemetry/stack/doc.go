// Package stack turns the stack traces an application recorded into places in the project:
// "src/cart/checkout.ts:45 in applyDiscount", the frames around it, and, on request, the one
// source line it points at.
//
// A recorded exception (a span's exception event, a log record's exception attributes) carries
// exception.stacktrace in its runtime's own format, written on another machine: a container, a
// CI runner, a colleague's checkout. This package reads that text, finds each frame's file in
// the project by the longest trailing path the two share, and names every other frame by its
// library, so an answer can say where the project's code failed without ever showing a path of
// the machine that ran it.
//
// # Formats
//
// The format is chosen by the first line only one format writes; a trace holds one format.
//
//   - Go: goroutine traces as the runtime prints them — panics ("goroutine 1 [running]:",
//     then "main.f(...)" / "\t/app/f.go:12 +0x1d"), runtime.Stack, runtime/debug.Stack —,
//     the OpenTelemetry Go SDK's exception.stacktrace (trace.WithStackTrace(true): runtime.Stack
//     into a 2048-byte buffer, whose cut last line is dropped), and "function\n\tfile:line"
//     pairs without a header as error libraries print them. Only the first goroutine is read.
//     Frames above the outermost panic call (the deferred recover, debug.Stack, the SDK
//     recording the panic) are dropped, so the innermost frame is where the panic started.
//   - Python: tracebacks ("Traceback (most recent call last):", `  File "/app/x.py", line 12,
//     in handler`), outermost first as printed, with chained exceptions ("The above exception
//     was the direct cause…", "During handling of the above exception…") and exception groups.
//   - V8 (Node.js, Deno, browsers): Error.prototype.stack ("    at fn (file:line:col)",
//     "    at file:line:col", "at async fn (…)", "at new C (…)", file:// URLs, node:internal
//     frames, eval origins), source-mapped TypeScript paths, and util.inspect's "[cause]:".
//   - JVM (Java, Kotlin, Scala): printStackTrace ("\tat com.shop.Cart.apply(Cart.java:45)",
//     module and class-loader prefixes, "Caused by:", "... 12 more", "Suppressed:" blocks
//     skipped, Logback's " ~[app.jar:1.0]"). A JVM frame names only a file's base name; its
//     package gives the folders (com/shop/Cart.java under any source root).
//   - .NET: Exception.ToString() ("   at Shop.Cart.Apply(Int32 x) in /src/Shop/Cart.cs:line 45",
//     frames without a file, inner exceptions up to "--- End of inner exception stack trace
//     ---"), Mono's "[0x0000c] in /src/Cart.cs:45", async and lambda names read as their method.
//   - The code.* attributes of the OpenTelemetry semantic conventions: code.stacktrace (read as
//     above), and code.file.path, code.line.number, code.column.number, code.function.name with
//     their legacy names code.filepath, code.lineno, code.column, code.namespace + code.function.
//
// Frames are innermost first; for chained exceptions the root cause's frames come first, then
// each enclosing exception's, in every format.
//
// # Bounds
//
// A trace is data from the application, so parsing is one linear pass with ceilings: the first
// MiB of text (the last, for Python, whose innermost frames come last; Trace.Cut says so),
// lines up to 8 KiB, the innermost Options.MaxFrames frames kept (DefaultMaxFrames, 128) and
// the rest counted in Trace.Omitted, eight chained exceptions. Displayed names are cut at 256
// bytes and cleaned of control characters. No input panics; FuzzResolve and a property test
// hold the parsers to that.
//
// # The project
//
// Open indexes the project's files once, through an os.Root, never following symbolic links,
// skipping version-control, dependency and cache folders (.git, node_modules, vendor, .venv,
// __pycache__, …) and secret files, and stopping at Options.MaxFiles (DefaultMaxFiles, 100,000),
// 20,000 folders or 32 levels (IndexStats says when it did). A frame is in the project when the index holds a trailing part of its path:
// /app/src/cart/checkout.ts and /home/ci/build/x/src/cart/checkout.ts both name
// src/cart/checkout.ts. Dependency paths (node_modules, site-packages, the Go module cache,
// vendor), standard libraries and runtime internals are recognised first and named by package,
// with at most their path inside that package; a relative path climbing out of its folder
// (../../etc/passwd) never resolves. Trace.Location is the innermost in-project frame.
//
// # Snippets
//
// Project.Snippet reads the one line a location points at (and at most one either side),
// deliberately: only indexed project files, not ignored by the project's top-level .gitignore
// or the configured deny list, never a secret file (.env*, *.pem, *.key, id_rsa*, .npmrc,
// .netrc, credentials, …) whatever the rules say, with no symbolic link anywhere on the path,
// bounded in bytes (Options.MaxLineBytes, 400 by default; a longer line is refused; no line past
// the first 4 MiB of a file) and redacted by the caller's redactor. A refusal is a Snippet with
// a Reason.
package stack
