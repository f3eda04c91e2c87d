package stack

import (
	"strings"
	"testing"
)

// shopFiles is a project with code in every runtime, plus root files whose names a runtime's
// or a dependency's files share (panic.go, decoder.py, index.js, Cart.java under another
// package), so a test can show those never pass for project files.
var shopFiles = map[string]string{
	"go.mod":                           "module github.com/shop/app\n",
	"internal/a/b.go":                  "package a\n",
	"cmd/shop/main.go":                 "package main\n",
	"panic.go":                         "package app\n",
	"shop/__init__.py":                 "",
	"shop/api.py":                      "",
	"shop/cart.py":                     "",
	"decoder.py":                       "",
	"index.js":                         "",
	"src/cart/checkout.ts":             "",
	"src/server.ts":                    "",
	"src/my cart/total.mjs":            "",
	"src/main/java/com/shop/Cart.java": "",
	"src/main/java/com/shop/Api.java":  "",
	"src/main/java/com/shop/Main.java": "",
	"src/main/kotlin/cart/Pricing.kt":  "",
	"src/Shop/Cart.cs":                 "",
	"src/Shop/Api.cs":                  "",
	"node_modules/lodash/index.js":     "",
	"vendor/github.com/lib/pq/conn.go": "",
	".venv/lib/python3.12/site-packages/requests/api.py": "",
}

func TestResolveLocatesTheInnermostProjectFrame(t *testing.T) {
	p := newProject(t, shopFiles)
	cases := []struct {
		name     string
		trace    string
		format   Format
		location string // "" when no frame is in the project
		column   int
		frames   map[int]string // depth → Frame.String()
		absent   []string       // never in any frame's String()
	}{
		{
			name: "a Go panic from another checkout maps its paths by their longest project suffix",
			trace: "panic: runtime error: invalid memory address or nil pointer dereference\n" +
				"[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x4a1b2c]\n\n" +
				"goroutine 1 [running]:\n" +
				"github.com/shop/app/internal/a.(*Cart).Apply(0x0, {0xc000012345, 0x3})\n" +
				"\t/home/ci/build/x/internal/a/b.go:45 +0x1d\n" +
				"main.main()\n" +
				"\t/home/ci/build/x/cmd/shop/main.go:12 +0x25\n" +
				"exit status 2\n",
			format:   FormatGo,
			location: "internal/a/b.go:45 in a.(*Cart).Apply",
			frames:   map[int]string{1: "cmd/shop/main.go:12 in main.main"},
			absent:   []string{"/home/ci"},
		},
		{
			name: "a -trimpath Go build maps module-prefixed paths",
			trace: "goroutine 1 [running]:\n" +
				"github.com/shop/app/internal/a.Load(...)\n" +
				"\tgithub.com/shop/app/internal/a/b.go:20\n" +
				"main.main()\n" +
				"\tgithub.com/shop/app/cmd/shop/main.go:9 +0x25\n",
			format:   FormatGo,
			location: "internal/a/b.go:20 in a.Load",
		},
		{
			name: "a Go runtime frame never passes for a project file of the same name",
			trace: "goroutine 7 [running]:\n" +
				"runtime.panicmem(...)\n" +
				"\t/usr/local/go/src/runtime/panic.go:261\n" +
				"runtime.sigpanic()\n" +
				"\t/usr/local/go/src/runtime/signal_unix.go:861 +0x378\n" +
				"main.handle(...)\n" +
				"\t/src/cmd/shop/main.go:30 +0x12\n",
			format:   FormatGo,
			location: "cmd/shop/main.go:30 in main.handle",
			frames:   map[int]string{0: "runtime/panic.go:261 in runtime.panicmem (runtime)"},
			absent:   []string{"/usr/local/go"},
		},
		{
			name: "a Go module cache frame is named by its module, never by the home folder",
			trace: "goroutine 12 [running]:\n" +
				"github.com/jackc/pgx/v5.(*Conn).Query(0xc0000a8000, {0x7f3b18, 0xc0000b2000})\n" +
				"\t/home/alice/go/pkg/mod/github.com/jackc/pgx/v5@v5.5.0/conn.go:712 +0x2a\n" +
				"github.com/!burnt!sushi/toml.Decode(...)\n" +
				"\t/home/alice/go/pkg/mod/github.com/!burnt!sushi/toml@v1.4.0/decode.go:30\n" +
				"github.com/shop/app/internal/a.Load(...)\n" +
				"\t/home/alice/src/shop/internal/a/b.go:20 +0x44\n",
			format:   FormatGo,
			location: "internal/a/b.go:20 in a.Load",
			frames: map[int]string{
				0: "github.com/jackc/pgx/v5@v5.5.0/conn.go:712 in v5.(*Conn).Query (github.com/jackc/pgx/v5)",
				1: "github.com/BurntSushi/toml@v1.4.0/decode.go:30 in toml.Decode (github.com/BurntSushi/toml)",
			},
			absent: []string{"alice", "/home"},
		},
		{
			name: "a vendored Go dependency is named by its package even where the project vendors it",
			trace: "goroutine 3 [running]:\n" +
				"github.com/lib/pq.(*conn).query(...)\n" +
				"\t/app/vendor/github.com/lib/pq/conn.go:88\n" +
				"main.main()\n" +
				"\t/app/cmd/shop/main.go:12 +0x25\n",
			format:   FormatGo,
			location: "cmd/shop/main.go:12 in main.main",
			frames:   map[int]string{0: "github.com/lib/pq/conn.go:88 in pq.(*conn).query (github.com/lib/pq)"},
		},
		{
			name: "a Go stack printed by an error library without a goroutine header is read",
			trace: "load prices: connection refused\n" +
				"github.com/shop/app/internal/a.Load\n" +
				"\t/app/internal/a/b.go:20\n" +
				"main.main\n" +
				"\t/app/cmd/shop/main.go:12\n" +
				"runtime.main\n" +
				"\t/usr/local/go/src/runtime/proc.go:267\n" +
				"runtime.goexit\n" +
				"\t/usr/local/go/src/runtime/asm_amd64.s:1650\n",
			format:   FormatGo,
			location: "internal/a/b.go:20 in a.Load",
			frames:   map[int]string{3: "runtime/asm_amd64.s:1650 in runtime.goexit (runtime)"},
		},
		{
			name: "a Go dump of several goroutines reads only the first, the one that failed",
			trace: "goroutine 5 gp=0xc000007c00 m=3 mp=0xc000081008 [running]:\n" +
				"main.worker(0x2)\n" +
				"\t/app/cmd/shop/main.go:40 +0x1d fp=0xc000051fd0 sp=0xc000051fa8 pc=0x4a1b2c\n" +
				"created by main.main in goroutine 1\n" +
				"\t/app/cmd/shop/main.go:20 +0x25 fp=0xc000051fe0 sp=0xc000051fd0 pc=0x4a1b50\n\n" +
				"goroutine 1 [chan receive]:\n" +
				"github.com/shop/app/internal/a.Wait()\n" +
				"\t/app/internal/a/b.go:9 +0x1d\n",
			format:   FormatGo,
			location: "cmd/shop/main.go:40 in main.worker",
			frames:   map[int]string{1: "cmd/shop/main.go:20 in main.main"},
			absent:   []string{"internal/a/b.go"},
		},
		{
			name: "a Python traceback from a container maps /app paths and names site-packages by package",
			trace: "Traceback (most recent call last):\n" +
				"  File \"/app/shop/api.py\", line 30, in checkout\n" +
				"    total = cart.total(items)\n" +
				"  File \"/app/shop/cart.py\", line 12, in total\n" +
				"    resp = requests.get(url, timeout=2)\n" +
				"           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n" +
				"  File \"/usr/local/lib/python3.12/site-packages/requests/api.py\", line 73, in get\n" +
				"    return request(\"get\", url, params=params, **kwargs)\n" +
				"  File \"/usr/local/lib/python3.12/site-packages/requests/adapters.py\", line 519, in send\n" +
				"    raise ConnectionError(e, request=request)\n" +
				"requests.exceptions.ConnectionError: HTTPConnectionPool(host='prices', port=80)\n",
			format:   FormatPython,
			location: "shop/cart.py:12 in total",
			frames: map[int]string{
				0: "requests/adapters.py:519 in send (requests)",
				3: "shop/api.py:30 in checkout",
			},
		},
		{
			name: "a Python virtualenv inside the project is a dependency, not project code",
			trace: "Traceback (most recent call last):\n" +
				"  File \"/home/bob/shop/shop/cart.py\", line 3, in total\n" +
				"  File \"/home/bob/shop/.venv/lib/python3.12/site-packages/requests/api.py\", line 73, in get\n" +
				"ValueError: x\n",
			format:   FormatPython,
			location: "shop/cart.py:3 in total",
			frames:   map[int]string{0: "requests/api.py:73 in get (requests)"},
			absent:   []string{"bob", ".venv"},
		},
		{
			name: "a Python standard library frame never passes for a project file of the same name",
			trace: "Traceback (most recent call last):\n" +
				"  File \"/srv/shop/cart.py\", line 5, in parse\n" +
				"  File \"/usr/lib/python3.11/json/decoder.py\", line 337, in decode\n" +
				"json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)\n",
			format:   FormatPython,
			location: "shop/cart.py:5 in parse",
			frames:   map[int]string{0: "json/decoder.py:337 in decode (json)"},
		},
		{
			name: "a Python exception raised while handling another puts the first one's frames first",
			trace: "Traceback (most recent call last):\n" +
				"  File \"/app/shop/cart.py\", line 8, in total\n" +
				"KeyError: 'sku'\n\n" +
				"During handling of the above exception, another exception occurred:\n\n" +
				"Traceback (most recent call last):\n" +
				"  File \"/app/shop/api.py\", line 30, in checkout\n" +
				"  File \"/app/shop/cart.py\", line 10, in total\n" +
				"NameError: name 'log' is not defined\n",
			format:   FormatPython,
			location: "shop/cart.py:8 in total",
			frames:   map[int]string{1: "shop/cart.py:10 in total", 2: "shop/api.py:30 in checkout"},
		},
		{
			name: "a Python exception group puts the frames of the exceptions it holds first",
			trace: "  + Exception Group Traceback (most recent call last):\n" +
				"  |   File \"/app/shop/api.py\", line 30, in checkout\n" +
				"  |     raise ExceptionGroup(\"many\", errors)\n" +
				"  | ExceptionGroup: many (1 sub-exception)\n" +
				"  +-+---------------- 1 ----------------\n" +
				"    | Traceback (most recent call last):\n" +
				"    |   File \"/app/shop/cart.py\", line 12, in total\n" +
				"    |     raise ValueError(\"bad\")\n" +
				"    | ValueError: bad\n" +
				"    +------------------------------------\n",
			format:   FormatPython,
			location: "shop/cart.py:12 in total",
			frames:   map[int]string{1: "shop/api.py:30 in checkout"},
		},
		{
			name: "a V8 error's cause printed by util.inspect puts the cause's frames first",
			trace: "Error: checkout failed\n" +
				"    at /app/src/server.ts:20:5\n" +
				"    at process.processTicksAndRejections (node:internal/process/task_queues:95:5) {\n" +
				"  [cause]: Error: boom\n" +
				"      at applyDiscount (/app/src/cart/checkout.ts:45:7)\n" +
				"      at async handler (/app/src/server.ts:12:3)\n" +
				"}\n",
			format:   FormatV8,
			location: "src/cart/checkout.ts:45 in applyDiscount",
			frames:   map[int]string{1: "src/server.ts:12 in handler", 2: "src/server.ts:20", 3: "node:internal/process/task_queues:95 in process.processTicksAndRejections (node)"},
		},
		{
			name: "a source-mapped TypeScript frame from a container maps by suffix with its column",
			trace: "TypeError: Cannot read properties of undefined (reading 'pct')\n" +
				"    at applyDiscount (/app/src/cart/checkout.ts:45:7)\n" +
				"    at async handler (/app/src/server.ts:12:3)\n" +
				"    at async Promise.all (index 0)\n",
			format:   FormatV8,
			location: "src/cart/checkout.ts:45 in applyDiscount",
			column:   7,
			frames:   map[int]string{1: "src/server.ts:12 in handler", 2: "Promise.all"},
		},
		{
			name: "a node_modules frame never passes for a project file with the same trailing path",
			trace: "Error: boom\n" +
				"    at Object.map (/app/node_modules/.pnpm/lodash@4.17.21/node_modules/lodash/index.js:10:3)\n" +
				"    at /app/node_modules/@nestjs/core/router/router-execution-context.js:46:28\n" +
				"    at /app/src/server.ts:20:5\n",
			format:   FormatV8,
			location: "src/server.ts:20",
			frames: map[int]string{
				0: "lodash/index.js:10 in Object.map (lodash)",
				1: "@nestjs/core/router/router-execution-context.js:46 (@nestjs/core)",
			},
		},
		{
			name: "a file URL is decoded before it is mapped",
			trace: "Error: no total\n" +
				"    at total (file:///app/src/my%20cart/total.mjs:3:9)\n" +
				"    at async file:///app/src/server.ts:2:1\n",
			format:   FormatV8,
			location: "src/my cart/total.mjs:3 in total",
			column:   9,
		},
		{
			name: "a webpack source URL maps its resource path",
			trace: "Error: x\n" +
				"    at applyDiscount (webpack://shop/./src/cart/checkout.ts:45:7)\n",
			format:   FormatV8,
			location: "src/cart/checkout.ts:45 in applyDiscount",
		},
		{
			name: "a Windows path maps with its drive and backslashes dropped",
			trace: "Error: x\n" +
				"    at applyDiscount (C:\\Users\\dev\\shop\\src\\cart\\checkout.ts:45:7)\n",
			format:   FormatV8,
			location: "src/cart/checkout.ts:45 in applyDiscount",
			absent:   []string{"Users", "dev"},
		},
		{
			name: "an eval frame is located where the eval ran",
			trace: "ReferenceError: x is not defined\n" +
				"    at eval (eval at run (/app/src/server.ts:3:9), <anonymous>:1:1)\n" +
				"    at run (/app/src/server.ts:3:9)\n",
			format:   FormatV8,
			location: "src/server.ts:3 in eval",
		},
		{
			name: "a JVM trace with Logback packaging data maps classes through their package folders",
			trace: "java.lang.IllegalStateException: cart closed\n" +
				"\tat com.shop.Cart.apply(Cart.java:45) ~[classes/:na]\n" +
				"\tat com.shop.Api.checkout(Api.java:20) ~[classes/:na]\n" +
				"\tat org.springframework.web.servlet.FrameworkServlet.service(FrameworkServlet.java:897) ~[spring-webmvc-6.1.2.jar:6.1.2]\n" +
				"\tat java.base/java.lang.Thread.run(Thread.java:1583) [na:na]\n",
			format:   FormatJVM,
			location: "src/main/java/com/shop/Cart.java:45 in com.shop.Cart.apply",
			frames: map[int]string{
				2: "FrameworkServlet.java:897 in org.springframework.web.servlet.FrameworkServlet.service (org.springframework.web.servlet)",
				3: "Thread.java:1583 in java.lang.Thread.run (java.lang)",
			},
		},
		{
			name: "a JVM root cause comes first and suppressed exceptions are skipped",
			trace: "com.shop.CheckoutException: checkout failed\n" +
				"\tat com.shop.Api.checkout(Api.java:22)\n" +
				"\tat com.shop.Main.main(Main.java:5)\n" +
				"\tSuppressed: java.io.IOException: close failed\n" +
				"\t\tat com.shop.Api.close(Api.java:40)\n" +
				"\t\t... 2 more\n" +
				"\tCaused by: java.io.EOFException\n" +
				"\t\tat com.shop.Api.flush(Api.java:50)\n" +
				"Caused by: java.lang.ArithmeticException: / by zero\n" +
				"\tat com.shop.Cart.apply(Cart.java:45)\n" +
				"\tat com.shop.Api.checkout(Api.java:20)\n" +
				"\t... 1 more\n",
			format:   FormatJVM,
			location: "src/main/java/com/shop/Cart.java:45 in com.shop.Cart.apply",
			frames: map[int]string{
				1: "src/main/java/com/shop/Api.java:20 in com.shop.Api.checkout",
				2: "src/main/java/com/shop/Api.java:22 in com.shop.Api.checkout",
				3: "src/main/java/com/shop/Main.java:5 in com.shop.Main.main",
			},
			absent: []string{"Api.java:40", "Api.java:50"},
		},
		{
			name: "a Kotlin file in folders without the common package prefix is found",
			trace: "java.lang.ArithmeticException: / by zero\n" +
				"\tat com.shop.cart.PricingKt.price(Pricing.kt:7)\n" +
				"\tat app//com.shop.Main.main(Main.java:5)\n",
			format:   FormatJVM,
			location: "src/main/kotlin/cart/Pricing.kt:7 in com.shop.cart.PricingKt.price",
		},
		{
			name: "a library class sharing a project file's name stays outside the project",
			trace: "java.lang.RuntimeException\n" +
				"\tat org.lib.Cart.apply(Cart.java:3)\n" +
				"\tat sun.misc.Unsafe.park(Native Method)\n",
			format: FormatJVM,
			frames: map[int]string{0: "Cart.java:3 in org.lib.Cart.apply (org.lib)", 1: "sun.misc.Unsafe.park (sun.misc)"},
		},
		{
			name: "a .NET inner exception's frames come first and framework frames are named by namespace",
			trace: "System.InvalidOperationException: checkout failed\n" +
				" ---> System.ArgumentException: bad quantity (Parameter 'qty')\n" +
				"   at Shop.Cart.Apply(Int32 qty) in /src/Shop/Cart.cs:line 45\n" +
				"   at Shop.Api.Checkout() in /src/Shop/Api.cs:line 12\n" +
				"   --- End of inner exception stack trace ---\n" +
				"   at Shop.Api.Checkout() in /src/Shop/Api.cs:line 14\n" +
				"   at Microsoft.AspNetCore.Routing.EndpointMiddleware.Invoke(HttpContext httpContext)\n" +
				"--- End of stack trace from previous location ---\n" +
				"   at Microsoft.AspNetCore.Diagnostics.DeveloperExceptionPageMiddlewareImpl.Invoke(HttpContext context)\n",
			format:   FormatDotNet,
			location: "src/Shop/Cart.cs:45 in Shop.Cart.Apply",
			frames: map[int]string{
				2: "src/Shop/Api.cs:14 in Shop.Api.Checkout",
				3: "Microsoft.AspNetCore.Routing.EndpointMiddleware.Invoke (Microsoft.AspNetCore.Routing)",
			},
		},
		{
			name: "nested .NET inner exceptions put the innermost one's frames first",
			trace: "System.Exception: a\n ---> System.Exception: b\n ---> System.Exception: c\n" +
				"   at Shop.Cart.Apply(Int32 qty) in /src/Shop/Cart.cs:line 45\n" +
				"   --- End of inner exception stack trace ---\n" +
				"   at Shop.Api.Checkout() in /src/Shop/Api.cs:line 12\n" +
				"   --- End of inner exception stack trace ---\n" +
				"   at Shop.Api.Handle() in /src/Shop/Api.cs:line 20\n",
			format:   FormatDotNet,
			location: "src/Shop/Cart.cs:45 in Shop.Cart.Apply",
			frames:   map[int]string{1: "src/Shop/Api.cs:12 in Shop.Api.Checkout", 2: "src/Shop/Api.cs:20 in Shop.Api.Handle"},
		},
		{
			name: "a .NET async state machine on a Windows build machine reads as its method",
			trace: "System.NullReferenceException: Object reference not set to an instance of an object.\n" +
				"   at Shop.Cart.<ApplyAsync>d__3.MoveNext() in C:\\builds\\w1\\s\\src\\Shop\\Cart.cs:line 45\n" +
				"   at Shop.Api.<>c__DisplayClass2_0.<Checkout>b__0(Item i) in C:\\builds\\w1\\s\\src\\Shop\\Api.cs:line 9\n",
			format:   FormatDotNet,
			location: "src/Shop/Cart.cs:45 in Shop.Cart.ApplyAsync",
			frames:   map[int]string{1: "src/Shop/Api.cs:9 in Shop.Api.Checkout"},
			absent:   []string{"builds", "w1"},
		},
		{
			name: "a Mono frame with an IL offset is read",
			trace: "System.ArgumentException: bad\n" +
				"  at Shop.Cart.Apply (System.Int32 qty) [0x0000c] in /builds/shop/src/Shop/Cart.cs:45 \n" +
				"  at Shop.Api.Checkout () [0x00001] in <4a1b2c3d4e5f>:0 \n",
			format:   FormatDotNet,
			location: "src/Shop/Cart.cs:45 in Shop.Cart.Apply",
			frames:   map[int]string{1: "Shop.Api.Checkout (Shop)"},
		},
		{
			name: "a stack with no project frame has no location",
			trace: "Error: socket hang up\n" +
				"    at connResetException (node:internal/errors:720:14)\n" +
				"    at TLSSocket.socketOnEnd (node:_http_client:525:23)\n",
			format: FormatV8,
			frames: map[int]string{0: "node:internal/errors:720 in connResetException (node)"},
		},
		{
			name:   "text that holds no frame of any runtime gives no frames",
			trace:  "something failed at the checkout (see logs)\nretrying in 5s\n",
			format: FormatUnknown,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr := p.Resolve(tc.trace)
			if tr.Format != tc.format {
				t.Errorf("format = %q, want %q", tr.Format, tc.format)
			}
			got := ""
			if tr.Location != nil {
				got = tr.Location.String()
			}
			if got != tc.location {
				t.Errorf("location = %q, want %q; frames:%s", got, tc.location, frameStrings(tr.Frames))
			}
			if tc.column != 0 && (tr.Location == nil || tr.Location.Column != tc.column) {
				t.Errorf("location %+v, want column %d", tr.Location, tc.column)
			}
			for depth, want := range tc.frames {
				if depth >= len(tr.Frames) {
					t.Errorf("frame %d missing, want %q; frames:%s", depth, want, frameStrings(tr.Frames))
					continue
				}
				if got := tr.Frames[depth].String(); got != want {
					t.Errorf("frame %d = %q, want %q", depth, got, want)
				}
			}
			for i, f := range tr.Frames {
				if f.Depth != i {
					t.Errorf("frame %d has depth %d", i, f.Depth)
				}
				for _, bad := range tc.absent {
					if strings.Contains(f.String(), bad) {
						t.Errorf("frame %d %q shows %q", i, f, bad)
					}
				}
			}
		})
	}
}
