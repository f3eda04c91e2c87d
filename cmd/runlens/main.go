// Command runlens is an MCP server that gives a coding agent a safe, bounded window onto the
// application it is working on.
package main

import (
	"fmt"
	"os"
)

// version is set at link time (-ldflags "-X main.version=…"); "dev" marks a source build.
var version = "dev"

func main() {
	if len(os.Args) > 1 && os.Args[1] == "version" {
		fmt.Println("runlens", version)
		return
	}
	fmt.Fprintln(os.Stderr, "usage: runlens version")
	os.Exit(2)
}
