// Package testkit holds what the tests that drive the real runlens binary share: the module
// root, the binary built once per test process, and the pinned Node tooling that
// .ci/install-tools installs. Production code never imports it.
package testkit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// EnvNodeTools names the folder holding the pinned Node tooling, as `make test` sets it.
const EnvNodeTools = "RUNLENS_NODE_TOOLS"

// Root is the module root, found from the test's working directory by walking up to go.mod.
var Root = sync.OnceValues(func() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the test directory")
		}
		dir = parent
	}
})

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// Binary builds ./cmd/runlens (static, CGO_ENABLED=0) into dir once per test process and
// returns its path; later calls return the first build whatever dir they name.
func Binary(dir string) (string, error) {
	binOnce.Do(func() {
		root, err := Root()
		if err != nil {
			binErr = err
			return
		}
		out := filepath.Join(dir, "runlens")
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		// The conformance suite's fixture tools are linked only into this test build.
		cmd := exec.CommandContext(ctx, "go", "build", "-tags", "conformance", "-o", out, "./cmd/runlens")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			binErr = fmt.Errorf("go build -tags conformance ./cmd/runlens: %w\n%s", err, stderr.String())
			return
		}
		binPath = out
	})
	return binPath, binErr
}

// nodeTools is the tooling folder: RUNLENS_NODE_TOOLS, or what .ci/install-tools installs and
// prints (once per test process).
var nodeTools = sync.OnceValues(func() (string, error) {
	if dir := os.Getenv(EnvNodeTools); dir != "" {
		return dir, nil
	}
	root, err := Root()
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(root, ".ci", "install-tools"))
	cmd.Dir = root
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf(".ci/install-tools: %w\n%s", err, stderr.String())
	}
	return strings.TrimSpace(stdout.String()), nil
})

// NodeTools returns the folder of the pinned Node tooling, which holds the Node 22 runtime
// (node_modules/.bin/node; the machine's own node may be older) and every path under
// node_modules that need names; an error says what is missing.
func NodeTools(need ...string) (string, error) {
	dir, err := nodeTools()
	if err != nil {
		return "", err
	}
	for _, rel := range append([]string{".bin/node"}, need...) {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", filepath.FromSlash(rel))); err != nil {
			return "", fmt.Errorf("node tooling at %s lacks %s: %w", dir, rel, err)
		}
	}
	return dir, nil
}
