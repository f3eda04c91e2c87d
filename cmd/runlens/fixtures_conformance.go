//go:build conformance

package main

import "github.com/runlens/runlens/internal/conformance"

func init() { wrapFixtures = conformance.Wrap }
