package compat

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/runlens/runlens/internal/testkit"
)

// buildDir holds the binary built for this test run; TestMain removes it.
var buildDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "runlens-compat-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "compat: temp dir:", err)
		os.Exit(1)
	}
	buildDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// inCI reports whether the tests run under CI, where a missing tool is a failure, not a skip.
func inCI() bool { return os.Getenv("CI") != "" }

// unavailable stops a test that cannot get its tooling: fatal under CI, a skip elsewhere, with
// the reason either way.
func unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if inCI() {
		t.Fatalf("%s (CI is set, so this fails instead of skipping)", msg)
	}
	t.Skipf("%s; run `make test-compat` or set RUNLENS_NODE_TOOLS to run this test", msg)
}

// repoRoot is the module root.
func repoRoot(t testing.TB) string {
	t.Helper()
	root, err := testkit.Root()
	if err != nil {
		t.Fatalf("find repository root: %v", err)
	}
	return root
}

// runlensBinary builds ./cmd/runlens once per test run and returns its path. A build failure
// is a failure, never a skip: the binary is this repository's own.
func runlensBinary(t testing.TB) string {
	t.Helper()
	if p := os.Getenv(envBinary); p != "" {
		return p // handed down to a re-executed test process
	}
	bin, err := testkit.Binary(buildDir)
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// envBinary passes the built binary to a test process re-executed inside a network namespace.
const envBinary = "RUNLENS_COMPAT_BINARY"

// envTools names the folder holding the pinned Node tooling (see .ci/install-tools).
const envTools = testkit.EnvNodeTools

// nodeTools returns the folder of the pinned Node tooling; it stops the test (see unavailable)
// when the tooling cannot be had.
func nodeTools(t testing.TB) string {
	t.Helper()
	dir, err := testkit.NodeTools()
	if err != nil {
		unavailable(t, "node tooling unavailable: %v", err)
	}
	return dir
}

// node is the Node 22 binary of the pinned tooling (the machine's own node may be older).
func node(t testing.TB) string {
	t.Helper()
	return filepath.Join(nodeTools(t), "node_modules", ".bin", "node")
}

// toolPath is a file inside the pinned tooling's node_modules; a missing one stops the test.
func toolPath(t testing.TB, rel string) string {
	t.Helper()
	p := filepath.Join(nodeTools(t), "node_modules", filepath.FromSlash(rel))
	if _, err := os.Stat(p); err != nil {
		unavailable(t, "pinned tool file missing: %v", err)
	}
	return p
}
