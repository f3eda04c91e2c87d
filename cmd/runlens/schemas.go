package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/runlens/runlens/gen"
)

// schemasCmd writes the published, bundled schemas for clients in other languages.
func schemasCmd(args []string, stdout, stderr io.Writer) int {
	if wantsHelp(args) {
		c := lookupSubcommand("schemas")
		fmt.Fprintf(stdout, "%s\n\nusage: runlens schemas %s\n", c.purpose, c.synopsis)
		return 0
	}
	if len(args) != 2 || args[0] != "export" {
		fmt.Fprintln(stderr, "usage: runlens schemas export DIR")
		return 2
	}
	dir := args[1]
	for _, s := range gen.Published {
		path := filepath.Join(dir, filepath.FromSlash(s.Path))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			fmt.Fprintf(stderr, "runlens: export schemas: %v\n", err)
			return 1
		}
		if err := os.WriteFile(path, s.JSON, 0o644); err != nil {
			fmt.Fprintf(stderr, "runlens: export schemas: %v\n", err)
			return 1
		}
	}
	fmt.Fprintf(stdout, "wrote %d schemas to %s\n", len(gen.Published), dir)
	return 0
}
