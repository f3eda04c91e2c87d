package stack

import (
	"strconv"
	"strings"
)

// Format names the stack trace format a trace was read as.
type Format string

// The formats Parse recognises; see the package documentation for what each one reads.
const (
	FormatUnknown Format = ""
	FormatGo      Format = "go"
	FormatPython  Format = "python"
	FormatV8      Format = "v8"
	FormatJVM     Format = "jvm"
	FormatDotNet  Format = "dotnet"
	// FormatCode is a location taken from a span's or record's code.* attributes alone.
	FormatCode Format = "code"
)

// Location is where in the project something failed: a file relative to the project root, a
// line and, when the runtime says it, a column and the function. It only ever names a file that
// exists under the project root, so a caller can show it, open it or read a snippet of it.
type Location struct {
	// File is a slash-separated path relative to the project root.
	File string
	// Line is 1-based; 0 when the runtime did not say.
	Line int
	// Column is 1-based; 0 when the runtime did not say.
	Column int
	// Function is the function as its runtime names it, shortened (no argument list, no Go
	// import path directories); empty when the runtime did not say.
	Function string
}

// String reads like "src/cart/checkout.ts:45 in applyDiscount": what a developer types into an
// editor's go-to-file box, then the function to look for.
func (l Location) String() string {
	var b strings.Builder
	b.WriteString(l.File)
	if l.Line > 0 && l.File != "" {
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(l.Line))
	}
	if l.Function != "" {
		if b.Len() > 0 {
			b.WriteString(" in ")
		}
		b.WriteString(l.Function)
	}
	return b.String()
}

// Frame is one frame of a stack, innermost first, safe to show: an in-project frame names its
// file relative to the project root; any other frame is named by its library (Module) and at
// most a path inside that library or a bare file name, never an absolute path, a home folder or
// anything else about the machine that ran the code.
type Frame struct {
	// Function is the function as its runtime names it, shortened like Location.Function.
	Function string
	// File is, for an in-project frame, the path relative to the project root. For any other
	// frame it is a path inside its library ("requests/adapters.py", "lodash/lodash.js",
	// "net/http/server.go", "node:internal/process/task_queues") or a bare file name, or empty.
	File string
	// Line and Column are 1-based; 0 when unknown.
	Line, Column int
	// Module names the library of a frame outside the project: a Go package (or module, for a
	// frame in the module cache), a Python top-level package, an npm package, a Java package, a
	// .NET namespace, "node" for Node's own modules. Empty for in-project frames and when
	// nothing names the library.
	Module string
	// InProject: File exists under the project root.
	InProject bool
	// Depth is the frame's position in the stack, 0 for the innermost, so frames picked out of
	// order (Trace.Top) still say where they sat.
	Depth int
}

// Location is the frame as a Location; only meaningful for an in-project frame.
func (f Frame) Location() Location {
	return Location{File: f.File, Line: f.Line, Column: f.Column, Function: f.Function}
}

// String reads like a Location for in-project frames and like "lodash/lodash.js:10 in map
// (lodash)" for library frames.
func (f Frame) String() string {
	s := f.Location().String()
	if s == "" {
		s = "?"
	}
	if f.Module != "" && !f.InProject {
		s += " (" + f.Module + ")"
	}
	return s
}

// Trace is a resolved stack: the frames a runtime recorded, mapped onto the project.
type Trace struct {
	// Format is how the stack was read; FormatUnknown when no frame was recognised.
	Format Format
	// Location is the innermost in-project frame: where the code the project owns failed.
	// Nil when no frame of the stack is in the project.
	Location *Location
	// Frames are the kept frames, innermost first. For chained exceptions (Python's "During
	// handling…"/"direct cause", Java's "Caused by:", .NET's inner exceptions, Node's
	// [cause]) the root cause's frames come first, then each enclosing exception's.
	Frames []Frame
	// Omitted counts frames beyond the kept ones, plus frames the runtime itself folded away
	// when it said how many (Python's "[Previous line repeated N more times]").
	Omitted int
	// Cut: the trace text was longer than the parser reads, so frames in the rest of it were
	// neither kept nor counted.
	Cut bool
}

// Top returns up to n frames for a short answer: the in-project frames first, innermost
// first, then the others in stack order. Each frame keeps its Depth.
func (t Trace) Top(n int) []Frame {
	if n <= 0 {
		return nil
	}
	out := make([]Frame, 0, min(n, len(t.Frames)))
	for _, f := range t.Frames {
		if f.InProject && len(out) < n {
			out = append(out, f)
		}
	}
	for _, f := range t.Frames {
		if !f.InProject && len(out) < n {
			out = append(out, f)
		}
	}
	return out
}
