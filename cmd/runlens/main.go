// Command runlens is an MCP server that gives a coding agent a safe, bounded window onto the
// application it is working on: its telemetry, its workspace wiring, its docs and a few allowed
// project commands.
package main

import (
	"fmt"
	"io"
	"os"
)

// version is set at link time (-ldflags "-X main.version=…"); "dev" marks a source build.
var version = "dev"

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run dispatches a subcommand and returns the process exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage())
		return 2
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "serve":
		return serve(rest, stdin, stdout, stderr)
	case "collect":
		return collect(rest, stdout, stderr)
	case "status":
		return statusCmd(rest, stdout, stderr)
	case "stop":
		return stopCmd(rest, stdout, stderr)
	case "demo":
		return demoCmd(rest, stdout, stderr)
	case "doctor":
		return doctorCmd(rest, stdout, stderr)
	case "init":
		return initCmd(rest, stdout, stderr)
	case "schemas":
		return schemasCmd(rest, stdout, stderr)
	case "version", "--version", "-v":
		if wantsHelp(rest) {
			c := lookupSubcommand("version")
			fmt.Fprintf(stdout, "%s\n\nusage: runlens version\n", c.purpose)
			return 0
		}
		fmt.Fprintln(stdout, "runlens", version)
		return 0
	case "help", "--help", "-h":
		fmt.Fprint(stdout, usage())
		return 0
	}
	fmt.Fprintf(stderr, "runlens: unknown command %q\n\n%s", cmd, usage())
	return 2
}
