// Command runlens-gen generates the gen/ package and the published schemas from the runlens
// JSON Schemas. It is run by `go generate ./gen` (see gen/generate.go) and `make generate`.
//
//	runlens-gen -schemas ../schemas -out . -bundled ../schemas/bundled [-listed ../schemas/listed] [-check]
//
// With -check it writes nothing, prints a unified diff of what generation would change and
// exits 1 when anything would.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/runlens/runlens/internal/codegen"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is main without the process: it returns the exit code.
func run(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("runlens-gen", flag.ContinueOnError)
	fl.SetOutput(stderr)
	schemas := fl.String("schemas", "schemas", "the schema tree to read")
	out := fl.String("out", "gen", "the gen/ package folder to write *_gen.go files into")
	bundled := fl.String("bundled", "schemas/bundled", "the folder for the published, bundled schemas")
	listed := fl.String("listed", "", "the folder for what tools/list serves of each tool schema (default: beside -bundled)")
	check := fl.Bool("check", false, "write nothing; print a diff and exit 1 if generation would change anything")
	if err := fl.Parse(args); err != nil {
		return 2
	}
	abs, err := filepath.Abs(*schemas)
	if err != nil {
		fmt.Fprintln(stderr, "runlens-gen:", err)
		return 2
	}
	output, _, err := codegen.Generate(os.DirFS(abs), filepath.Base(abs))
	if err != nil {
		fmt.Fprintln(stderr, "runlens-gen: generation failed:")
		fmt.Fprintln(stderr, err)
		return 1
	}
	if *listed == "" {
		*listed = filepath.Join(filepath.Dir(*bundled), codegen.ListedFolder)
	}
	dirs := codegen.Dirs{Gen: *out, Bundled: *bundled, Listed: *listed}
	if *check {
		clean, err := codegen.Check(output, dirs, stdout)
		if err != nil {
			fmt.Fprintln(stderr, "runlens-gen:", err)
			return 2
		}
		if !clean {
			fmt.Fprintln(stderr, "runlens-gen: generated files are out of date; run `make generate`")
			return 1
		}
		return 0
	}
	if err := codegen.Apply(output, dirs); err != nil {
		fmt.Fprintln(stderr, "runlens-gen:", err)
		return 1
	}
	return 0
}
