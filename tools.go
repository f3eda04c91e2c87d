//go:build tools

// Package tools pins the development tools that the Makefile and go generate run, so that
// go.mod records their versions and every contributor runs the same ones.
package tools

import (
	_ "honnef.co/go/tools/cmd/staticcheck"
)
