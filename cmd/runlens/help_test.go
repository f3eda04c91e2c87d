package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestEverySubcommandHelpExitsZeroWithItsPurposeAndFlags(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		flags  []string
		hidden []string
	}{
		{"serve names its flags and hides the test-only ones", []string{"serve", "--help"},
			[]string{"--project-root", "--telemetry", "--profile", "--receiver", "--receiver-grpc"}, []string{"--test-fixtures", "--page-size"}},
		{"collect names its flags and hides the one serve passes", []string{"collect", "--help"},
			[]string{"--project-root", "--listen", "--listen-grpc", "--store", "--idle-exit"}, []string{"--detached"}},
		{"status names its flag", []string{"status", "--help"}, []string{"--project-root"}, nil},
		{"stop names its flag", []string{"stop", "--help"}, []string{"--project-root"}, nil},
		{"demo names its flag", []string{"demo", "-h"}, []string{"--requests"}, nil},
		{"doctor names its flags", []string{"doctor", "--help"}, []string{"--project-root", "--telemetry", "--json"}, nil},
		{"init names its flags", []string{"init", "--help"}, []string{"--host", "--project-root", "--command"}, nil},
		{"schemas says what it writes", []string{"schemas", "--help"}, nil, nil},
		{"schemas export says what it writes", []string{"schemas", "export", "--help"}, nil, nil},
		{"version says what it prints", []string{"version", "--help"}, nil, nil},
	}
	covered := map[string]bool{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			covered[tt.args[0]] = true
			var out, errOut bytes.Buffer
			if code := run(tt.args, nil, &out, &errOut); code != 0 {
				t.Fatalf("exit %d, want 0; stderr:\n%s", code, errOut.String())
			}
			help := out.String()
			if purpose := lookupSubcommand(tt.args[0]).purpose; !strings.HasPrefix(help, purpose+"\n") {
				t.Errorf("help does not open with the purpose %q:\n%s", purpose, help)
			}
			if !strings.Contains(help, "usage: runlens "+tt.args[0]) {
				t.Errorf("help has no usage line:\n%s", help)
			}
			for _, f := range tt.flags {
				line := flagLine(help, f)
				if line == "" {
					t.Errorf("help does not name %s:\n%s", f, help)
					continue
				}
				if !strings.Contains(line, "(default: ") {
					t.Errorf("%s has no default in the help: %q", f, line)
				}
			}
			for _, f := range tt.hidden {
				if strings.Contains(help, f) {
					t.Errorf("help shows the test-only flag %s:\n%s", f, help)
				}
			}
		})
	}
	for _, s := range subcommands {
		if !covered[s.name] {
			t.Errorf("subcommand %s has no help case", s.name)
		}
	}
}

// flagLine returns the description line under flag f in a help text, or "".
func flagLine(help, f string) string {
	lines := strings.Split(help, "\n")
	for i, l := range lines {
		if (l == "  "+f || strings.HasPrefix(l, "  "+f+" ")) && i+1 < len(lines) {
			return lines[i+1]
		}
	}
	return ""
}

func TestABadFlagExitsTwoWithTheHelpOnStderr(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"serve", "--no-such-flag"}, nil, &out, &errOut); code != 2 {
		t.Fatalf("exit %d, want 2", code)
	}
	if out.Len() != 0 || !strings.Contains(errOut.String(), "no-such-flag") || !strings.Contains(errOut.String(), "--project-root") {
		t.Fatalf("stdout %q, stderr %q: want the error and the help on stderr only", out.String(), errOut.String())
	}
}

func TestTopLevelHelpListsEverySubcommand(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"--help"}, nil, &out, &errOut); code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, s := range subcommands {
		if !strings.Contains(out.String(), "  "+s.name+" ") {
			t.Errorf("runlens --help does not list %s:\n%s", s.name, out.String())
		}
	}
}
