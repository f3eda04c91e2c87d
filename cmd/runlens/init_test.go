package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/runlens/runlens/internal/app"
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

func TestInitWritesPortsOfItsOwnWhenAnotherProgramHoldsTheReceivers(t *testing.T) {
	root := t.TempDir()
	var held []string
	for range 2 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		go func() { // a program that is not runlens: it hangs up on everyone
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
		held = append(held, ln.Addr().String())
	}
	file := filepath.Join(root, "runlens.json")
	cfg := fmt.Sprintf("{\n  \"mcp\": {\"profile\": \"full\"},\n  \"receiver\": {\"address\": %q, \"grpcAddress\": %q, \"allowedHosts\": [\"otel.internal\"]}\n}\n", held[0], held[1])
	if err := os.WriteFile(file, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if code := run([]string{"init", "--host", "claude", "--project-root", root, "--command", "runlens"}, nil, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var got struct {
		MCP      map[string]any `json:"mcp"`
		Receiver struct {
			Address, GrpcAddress string
			AllowedHosts         []string
		} `json:"receiver"`
	}
	raw, _ := os.ReadFile(file)
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatalf("runlens.json after init: %v\n%s", err, raw)
	}
	r := got.Receiver
	inRange := func(addr string, base int) bool {
		_, p, _ := net.SplitHostPort(addr)
		n, _ := strconv.Atoi(p)
		return n >= base && n < base+1000
	}
	if !inRange(r.Address, app.ProposedHTTPBase) || !inRange(r.GrpcAddress, app.ProposedGRPCBase) {
		t.Errorf("runlens.json receiver = %+v; want ports of its own in %d… and %d…", r, app.ProposedHTTPBase, app.ProposedGRPCBase)
	}
	if len(r.AllowedHosts) != 1 || got.MCP["profile"] != "full" {
		t.Errorf("init lost the file's other keys:\n%s", raw)
	}
	text := out.String()
	for _, want := range []string{held[0], held[1], "not a runlens",
		"OTEL_EXPORTER_OTLP_ENDPOINT=http://" + r.Address + " OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf",
		"OTEL_EXPORTER_OTLP_ENDPOINT=http://" + r.GrpcAddress + " OTEL_EXPORTER_OTLP_PROTOCOL=grpc"} {
		if !strings.Contains(text, want) {
			t.Errorf("init output lacks %q:\n%s", want, text)
		}
	}
	for _, addr := range []string{r.Address, r.GrpcAddress} {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			t.Errorf("the written address %s is not free: %v", addr, err)
			continue
		}
		ln.Close()
	}

	// Run again: the ports are the project's own now, so nothing changes.
	out.Reset()
	if code := run([]string{"init", "--host", "claude", "--project-root", root, "--command", "runlens"}, nil, &out, &errOut); code != 0 {
		t.Fatalf("second init: exit %d: %s", code, errOut.String())
	}
	if again, _ := os.ReadFile(file); !bytes.Equal(again, raw) || strings.Contains(out.String(), "wrote") {
		t.Errorf("a second init rewrote the ports:\n%s\n%s", again, out.String())
	}
}
