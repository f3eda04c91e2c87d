package main

import (
	"fmt"
	"io"
)

func collect(args []string, stderr io.Writer) int {
	fmt.Fprintln(stderr, "runlens collect: not available in this build yet")
	return 1
}

func demo(args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "runlens demo: not available in this build yet")
	return 1
}
