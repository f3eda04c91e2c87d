package compat

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// serveSession is one `runlens serve` process driven by the official Go SDK client, as a host
// would run it, with the server's stderr kept for the test to read.
type serveSession struct {
	cs     *sdk.ClientSession
	stderr *syncBuffer
}

// startServe starts `runlens serve args…` in dir with env added to the cleaned environment and
// connects the Go SDK client to it; the session ends with the test.
func startServe(t *testing.T, dir string, env []string, args ...string) *serveSession {
	t.Helper()
	bin := runlensBinary(t)
	cmd := exec.Command(bin, append([]string{"serve"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(serverEnv(), env...)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	client := sdk.NewClient(&sdk.Implementation{Name: "runlens-compat-trust", Version: "1.0.0"}, nil)
	cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, nil)
	if err != nil {
		t.Fatalf("connect to runlens serve: %v\nstderr:\n%s", err, tail(stderr.Bytes()))
	}
	t.Cleanup(func() { _ = cs.Close() })
	return &serveSession{cs: cs, stderr: stderr}
}

// call calls a tool and returns the client's view of the answer.
func (s *serveSession) call(t *testing.T, tool string, args any) answer {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	res, err := s.cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v\nstderr:\n%s", tool, err, tail(s.stderr.Bytes()))
	}
	return goSDKAnswer(t, res)
}

// toolError is the structured error of a tool error result.
type toolError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Hint    string `json:"hint"`
}

// wantToolError fails unless a is a tool error result, valid against the published error
// schema, and returns it decoded.
func wantToolError(t *testing.T, tool string, a answer) toolError {
	t.Helper()
	if !a.isError {
		t.Fatalf("%s answered successfully, want a tool error: %s", tool, a.text)
	}
	body := []byte(a.text)
	if fields := schemas(t).validate(t, errorSchema, body); len(fields) > 0 {
		t.Fatalf("%s error does not match %s: %s\n%s", tool, errorSchema, fieldList(fields), body)
	}
	var te toolError
	if err := json.Unmarshal(body, &te); err != nil {
		t.Fatalf("%s error is not JSON: %v", tool, err)
	}
	return te
}

// wantSuccess fails unless a is a successful answer valid against tool's published output
// schema, and decodes it into out.
func wantSuccess(t *testing.T, tool string, a answer, out any) {
	t.Helper()
	if a.isError {
		t.Fatalf("%s answered a tool error, want success: %s", tool, a.text)
	}
	rel := "bundled/tools/" + tool + ".output.json"
	if fields := schemas(t).validate(t, rel, a.structured); len(fields) > 0 {
		t.Fatalf("%s answer does not match %s: %s\n%s", tool, rel, fieldList(fields), a.structured)
	}
	if err := json.Unmarshal(a.structured, out); err != nil {
		t.Fatalf("decode %s answer: %v", tool, err)
	}
}

// doctorAnswer is the part of the doctor's answer these tests read.
type doctorAnswer struct {
	Status   string `json:"status"`
	Families []struct {
		Name   string        `json:"name"`
		Status string        `json:"status"`
		Checks []doctorCheck `json:"checks"`
	} `json:"families"`
}

type doctorCheck struct {
	Name    string `json:"name"`
	Status  string `json:"status"`
	Summary string `json:"summary"`
	Fix     string `json:"fix"`
}

// check returns the named check of the named family, failing the test when it is absent.
func (d doctorAnswer) check(t *testing.T, family, name string) doctorCheck {
	t.Helper()
	for _, f := range d.Families {
		if f.Name != family {
			continue
		}
		for _, c := range f.Checks {
			if c.Name == name {
				return c
			}
		}
		t.Fatalf("doctor family %s has no check %s: %+v", family, name, f.Checks)
	}
	t.Fatalf("doctor has no family %s", family)
	return doctorCheck{}
}

// writeFile writes content to root/rel, creating folders.
func writeFile(t *testing.T, root, rel, content string) {
	t.Helper()
	path := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// exists reports whether root/rel exists.
func exists(root, rel string) bool {
	_, err := os.Stat(filepath.Join(root, filepath.FromSlash(rel)))
	return err == nil
}

// eventually polls cond until it holds or the deadline passes, for what a background part of
// the server does on its own schedule (its stderr, its receiver).
func eventually(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, timeout)
		}
		time.Sleep(20 * time.Millisecond) // polling with a deadline, not synchronising goroutines
	}
}
