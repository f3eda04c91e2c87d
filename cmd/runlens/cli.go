package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// subcommand is one entry of the command line: what people type and the one line that says what
// it does. The same table prints `runlens --help` and each subcommand's own help.
type subcommand struct {
	name     string
	synopsis string // the arguments after the name
	purpose  string
}

// subcommands are the commands of runlens, in the order the help lists them.
var subcommands = []subcommand{
	{"serve", "[flags]", "Serve the MCP tools over stdio; start the project's detached OTLP receiver unless it runs."},
	{"collect", "[flags]", "Receive OTLP (HTTP and gRPC) into the embedded store in the foreground, for several sessions to read."},
	{"status", "[flags]", "Show the project's receiver process: pid, ports, store, age and what it received."},
	{"stop", "[flags]", "Stop the project's receiver process (SIGTERM) and wait for it to exit."},
	{"demo", "[flags]", "Run an instrumented demo app end to end: receiver, store and an MCP session answering from them."},
	{"doctor", "[flags]", "Check that telemetry, store, workspace, instrumentation and MCP hosts are wired; exit 1 on a failure."},
	{"init", "[flags]", "Register runlens with the project's MCP hosts (Claude Code, Codex, VS Code, Cursor)."},
	{"schemas", "export DIR", "Write the published, bundled JSON Schemas of every tool into DIR."},
	{"version", "", "Print the version of runlens."},
}

// lookupSubcommand returns the table entry of name.
func lookupSubcommand(name string) subcommand {
	for _, s := range subcommands {
		if s.name == name {
			return s
		}
	}
	panic("runlens: no subcommand " + name)
}

// cli is a subcommand's flag set with the help people see: its purpose, its usage and each
// flag with its default. Test-only flags are hidden from the help but still parsed.
type cli struct {
	*flag.FlagSet
	sub    subcommand
	stdout io.Writer
	hidden map[string]bool
	shown  map[string]string
}

// newCLI starts the flag set of the subcommand name; errors and their help go to stderr, an
// asked-for help to stdout.
func newCLI(name string, stdout, stderr io.Writer) *cli {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {} // parse prints the help itself, to the right stream
	return &cli{FlagSet: fs, sub: lookupSubcommand(name), stdout: stdout, hidden: map[string]bool{}, shown: map[string]string{}}
}

// hide keeps test-only flags out of the help.
func (c *cli) hide(names ...string) {
	for _, n := range names {
		c.hidden[n] = true
	}
}

// defaultIs names the default a flag whose zero value means "not given" ends up with, since the
// environment and runlens.json come first.
func (c *cli) defaultIs(name, text string) { c.shown[name] = text }

// parse reads args. ok is false when the command must stop: code is 0 after --help, 2 after a
// bad flag.
func (c *cli) parse(args []string) (code int, ok bool) {
	err := c.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		c.help(c.stdout)
		return 0, false
	case err != nil:
		c.help(c.Output())
		return 2, false
	}
	return 0, true
}

// help prints the purpose, the usage line and every visible flag with its default.
func (c *cli) help(w io.Writer) {
	fmt.Fprintf(w, "%s\n\nusage: runlens %s %s\n", c.sub.purpose, c.sub.name, c.sub.synopsis)
	first := true
	c.VisitAll(func(f *flag.Flag) {
		if c.hidden[f.Name] {
			return
		}
		if first {
			fmt.Fprintln(w, "\nflags:")
			first = false
		}
		arg, usage := flag.UnquoteUsage(f)
		name := "--" + f.Name
		if arg != "" {
			name += " " + arg
		}
		def := f.DefValue
		if s, ok := c.shown[f.Name]; ok {
			def = s
		}
		fmt.Fprintf(w, "  %s\n      %s (default: %s)\n", name, usage, def)
	})
}

// wantsHelp reports whether args ask for help, for the subcommands without flags.
func wantsHelp(args []string) bool {
	for _, a := range args {
		if a == "-h" || a == "-help" || a == "--help" {
			return true
		}
	}
	return false
}

// usage is the help of `runlens` itself: every subcommand with its purpose.
func usage() string {
	var b strings.Builder
	b.WriteString("runlens — a bounded window onto your app for coding agents\n\nusage: runlens COMMAND [flags]   (runlens COMMAND --help for its flags)\n\ncommands:\n")
	for _, s := range subcommands {
		fmt.Fprintf(&b, "  %-8s %s\n", s.name, s.purpose)
	}
	return b.String()
}
