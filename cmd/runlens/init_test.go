package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runlens/runlens/internal/hostcfg"
)

func TestInitRegistersACommandThatResolves(t *testing.T) {
	installed := filepath.Join(t.TempDir(), "bin", "runlens")
	onPath := func(string) (string, error) { return "/usr/local/bin/runlens", nil }
	notOnPath := func(string) (string, error) { return "", errors.New("not found") }
	tests := []struct {
		name        string
		lookPath    func(string) (string, error)
		exe         string
		wantCommand string
		wantNote    string
	}{
		{"runlens on PATH is registered by name", onPath, installed, "runlens", ""},
		{"a binary off PATH is registered by its absolute path", notOnPath, installed, installed, "registered this binary by its absolute path"},
		{"a go run build off PATH is not registered by its temporary path, and init says so", notOnPath,
			filepath.Join(os.TempDir(), "go-build123", "b001", "exe", "runlens"), "runlens", "hosts cannot start the registered command"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := os.MkdirAll(filepath.Dir(tt.exe), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(tt.exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			command, note := defaultCommand(tt.lookPath, func() (string, error) { return tt.exe, nil })
			if command != tt.wantCommand {
				t.Errorf("command = %q, want %q", command, tt.wantCommand)
			}
			if !strings.Contains(note, tt.wantNote) || (tt.wantNote == "") != (note == "") {
				t.Errorf("note = %q, want one containing %q", note, tt.wantNote)
			}
			if tt.wantCommand == "runlens" && tt.wantNote != "" && !strings.Contains(note, "go install ./cmd/runlens") {
				t.Errorf("note does not say how to install runlens: %q", note)
			}
		})
	}
}

func TestInitWarnsWhenTheRegisteredCommandDoesNotResolve(t *testing.T) {
	root := t.TempDir()
	missing := filepath.Join(t.TempDir(), "gone", "runlens")
	var out, errOut bytes.Buffer
	if code := run([]string{"init", "--host", "claude", "--project-root", root, "--command", missing}, nil, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	regs := hostcfg.Registered(root, "runlens")
	if len(regs) != 1 || regs[0].File != ".mcp.json" || regs[0].Command != missing {
		t.Fatalf("registrations %+v, want .mcp.json starting %s", regs, missing)
	}
	if !strings.Contains(out.String(), "warning: .mcp.json registers") || !strings.Contains(out.String(), "does not exist") {
		t.Fatalf("init does not warn that the command cannot be started:\n%s", out.String())
	}
}
