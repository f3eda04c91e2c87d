package config

import (
	"errors"
	"reflect"
	"testing"
)

func TestDenyRuleFlagsAreReadFromTheFile(t *testing.T) {
	root := project(t, `{"commands": {"policy": {
  "allow": [{"name": "migrations", "prefix": ["db", "migrate"]}],
  "deny": [{"name": "no-prod", "prefix": ["db", "migrate", "--env=prod"]},
           {"name": "no-force", "prefix": ["db", "migrate"], "flags": ["--force", "-f"]}]}}}`)
	cfg, err := testLoader(t).Load(root, nil, Overrides{})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	want := []Rule{
		{Name: "no-prod", Prefix: []string{"db", "migrate", "--env=prod"}},
		{Name: "no-force", Prefix: []string{"db", "migrate"}, Flags: []string{"--force", "-f"}},
	}
	if !reflect.DeepEqual(cfg.Commands.Deny, want) {
		t.Errorf("Deny = %+v, want %+v", cfg.Commands.Deny, want)
	}
}

func TestRuleFlagsTheSchemaRefuses(t *testing.T) {
	tests := []struct {
		name    string
		file    string
		pointer string
	}{
		{"an allow rule cannot list flags", `{"commands": {"policy": {"allow": [{"name": "t", "prefix": ["test"], "flags": ["--x"]}]}}}`,
			"/commands/policy/allow/0/flags"},
		{"a deny rule's flag must start with a dash", `{"commands": {"policy": {"deny": [{"name": "t", "prefix": ["test"], "flags": ["force"]}]}}}`,
			"/commands/policy/deny/0/flags/0"},
		{"a deny rule's flag cannot hold a blank in its name", `{"commands": {"policy": {"deny": [{"name": "t", "prefix": ["test"], "flags": ["--for ce"]}]}}}`,
			"/commands/policy/deny/0/flags/0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := testLoader(t).Load(project(t, tt.file), nil, Overrides{})
			var e *Error
			if !errors.As(err, &e) || e.Pointer != tt.pointer {
				t.Fatalf("Load error = %v, want a *config.Error at %s", err, tt.pointer)
			}
		})
	}
}
