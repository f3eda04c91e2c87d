package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// scaffolding are the packages that exist for tests: the fixture generator, the conformance
// suite's fixture tools, the test kits and servers. The product binary links none of them.
var scaffolding = []string{
	"github.com/runlens/runlens/internal/telemetry/fixture",
	"github.com/runlens/runlens/internal/telemetry/telemetrytest",
	"github.com/runlens/runlens/internal/conformance",
	"github.com/runlens/runlens/internal/testkit",
	"github.com/runlens/runlens/internal/golden",
	"github.com/runlens/runlens/internal/e2e",
	"github.com/runlens/runlens/internal/bench",
	"github.com/runlens/runlens/internal/compat",
}

// deps lists the packages ./cmd/runlens links with the given build tags.
func deps(t *testing.T, tags string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-tags", tags, "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	return strings.Fields(string(out))
}

// linked returns the packages of list that are scaffolding or below it.
func linked(list []string) []string {
	var found []string
	for _, p := range list {
		if slices.ContainsFunc(scaffolding, func(s string) bool { return p == s || strings.HasPrefix(p, s+"/") }) {
			found = append(found, p)
		}
	}
	return found
}

func TestTheProductBinaryLinksNoTestScaffolding(t *testing.T) {
	if found := linked(deps(t, "")); len(found) > 0 {
		t.Fatalf("runlens links test scaffolding: %v", found)
	}
	// The compatibility tests' build links the conformance fixtures: the check sees them.
	if found := linked(deps(t, "conformance")); !slices.Contains(found, "github.com/runlens/runlens/internal/conformance") {
		t.Fatalf("the conformance build links %v; want the conformance fixtures", found)
	}
}

// schemaLibraries are the run-time JSON Schema validator and the test oracle wrapping it: the
// binary validates through the generated validators in gen, so neither is linked.
var schemaLibraries = []string{
	"github.com/santhosh-tekuri/jsonschema",
	"github.com/runlens/runlens/internal/contract/oracle",
}

func TestTheProductBinaryLinksNoRunTimeSchemaValidator(t *testing.T) {
	for _, tags := range []string{"", "conformance"} {
		for _, p := range deps(t, tags) {
			for _, lib := range schemaLibraries {
				if p == lib || strings.HasPrefix(p, lib+"/") {
					t.Errorf("runlens (tags %q) links %s; validation must go through the generated validators", tags, p)
				}
			}
		}
	}
}
