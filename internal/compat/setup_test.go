package compat

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
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

var (
	rootOnce sync.Once
	rootDir  string
	rootErr  error
)

// repoRoot is the module root, found from this package's own directory (the test's working
// directory) by walking up to go.mod.
func repoRoot(t testing.TB) string {
	t.Helper()
	rootOnce.Do(func() {
		dir, err := os.Getwd()
		if err != nil {
			rootErr = err
			return
		}
		for {
			if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
				rootDir = dir
				return
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				rootErr = fmt.Errorf("no go.mod above the test directory")
				return
			}
			dir = parent
		}
	})
	if rootErr != nil {
		t.Fatalf("find repository root: %v", rootErr)
	}
	return rootDir
}

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// runlensBinary builds ./cmd/runlens once per test run and returns its path. A build failure
// is a failure, never a skip: the binary is this repository's own.
func runlensBinary(t testing.TB) string {
	t.Helper()
	root := repoRoot(t)
	binOnce.Do(func() {
		if p := os.Getenv(envBinary); p != "" {
			binPath = p // handed down to a re-executed test process
			return
		}
		out := filepath.Join(buildDir, "runlens")
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "./cmd/runlens")
		cmd.Dir = root
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			binErr = fmt.Errorf("go build ./cmd/runlens: %w\n%s", err, stderr.String())
			return
		}
		binPath = out
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// envBinary passes the built binary to a test process re-executed inside a network namespace.
const envBinary = "RUNLENS_COMPAT_BINARY"

// envTools names the folder holding the pinned Node tooling (see .ci/install-tools).
const envTools = "RUNLENS_NODE_TOOLS"

var (
	toolsOnce sync.Once
	toolsDir  string
	toolsErr  error
)

// nodeTools returns the folder of the pinned Node tooling: RUNLENS_NODE_TOOLS, or what
// .ci/install-tools installs and prints. It stops the test (see unavailable) when the tooling
// cannot be had.
func nodeTools(t testing.TB) string {
	t.Helper()
	root := repoRoot(t)
	toolsOnce.Do(func() {
		dir := os.Getenv(envTools)
		if dir == "" {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, filepath.Join(root, ".ci", "install-tools"))
			cmd.Dir = root
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				toolsErr = fmt.Errorf(".ci/install-tools: %w\n%s", err, stderr.String())
				return
			}
			dir = strings.TrimSpace(stdout.String())
		}
		if _, err := os.Stat(filepath.Join(dir, "node_modules", ".bin", "node")); err != nil {
			toolsErr = fmt.Errorf("node tooling at %s has no node_modules/.bin/node: %w", dir, err)
			return
		}
		toolsDir = dir
	})
	if toolsErr != nil {
		unavailable(t, "node tooling unavailable: %v", toolsErr)
	}
	return toolsDir
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
