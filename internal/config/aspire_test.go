package config

import (
	"slices"
	"strings"
	"testing"
)

// The Aspire dashboard is found in this order: an explicit address (flag, then environment,
// then file, as for every source), then ASPIRE_DASHBOARD_PORT over http then https, then the
// dashboard's default address — the last two only for a bare aspire source.
func TestTheAspireDashboardIsDiscoveredInOrder(t *testing.T) {
	cases := []struct {
		name           string
		file, flag     string
		env            map[string]string
		want, fallback string
	}{
		{name: "the flag's address wins over the environment and the port",
			flag: "aspire+http://flag.test:1", env: map[string]string{EnvTelemetry: "aspire+http://env.test:2", EnvAspireDashboardPort: "3"},
			want: "http://flag.test:1"},
		{name: "RUNLENS_TELEMETRY's address wins over the file and the port",
			file: `{"telemetry": {"source": "aspire"}}`, env: map[string]string{EnvTelemetry: "aspire+https://env.test:2", EnvAspireDashboardPort: "3"},
			want: "https://env.test:2"},
		{name: "the file's address is kept when a port is set",
			file: `{"telemetry": {"source": "aspire+http://file.test:4"}}`, env: map[string]string{EnvAspireDashboardPort: "3"},
			want: "http://file.test:4"},
		{name: "a bare aspire in the environment takes ASPIRE_DASHBOARD_PORT over http, then https",
			env:  map[string]string{EnvTelemetry: "aspire", EnvAspireDashboardPort: "17123"},
			want: "http://localhost:17123", fallback: "https://localhost:17123"},
		{name: "a bare aspire in the file takes ASPIRE_DASHBOARD_PORT",
			file: `{"telemetry": {"source": "aspire"}}`, env: map[string]string{EnvAspireDashboardPort: "15000"},
			want: "http://localhost:15000", fallback: "https://localhost:15000"},
		{name: "a bare aspire without a port is the dashboard's default address",
			file: `{"telemetry": {"source": "aspire"}}`,
			want: DefaultAspireEndpoint},
		{name: "a bare aspire flag overrides the file's address and is discovered",
			file: `{"telemetry": {"source": "aspire+http://file.test:4"}}`, flag: "aspire",
			want: DefaultAspireEndpoint},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := testLoader(t).Load(project(t, c.file), envOf(c.env), Overrides{Telemetry: c.flag})
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			src := cfg.Telemetry.Source
			if src.Kind != SourceAspire || src.Endpoint != c.want || src.Fallback != c.fallback {
				t.Errorf("source %+v, want aspire at %s (fallback %q)", src, c.want, c.fallback)
			}
		})
	}
}

func TestABadDashboardPortIsAnErrorNamingTheVariable(t *testing.T) {
	_, err := testLoader(t).Load(project(t, `{"telemetry": {"source": "aspire"}}`), envOf(map[string]string{EnvAspireDashboardPort: "http"}), Overrides{})
	if err == nil || !strings.Contains(err.Error(), EnvAspireDashboardPort) {
		t.Fatalf("Load: %v, want an error naming %s", err, EnvAspireDashboardPort)
	}
}

// The key and the login token are runlens's own: the commands it runs never inherit them.
func TestTheAspireKeyAndTokenVariablesAreSecret(t *testing.T) {
	cases := []struct {
		name, file  string
		wantKeyEnv  string
		wantSecrets []string
	}{
		{"an aspire source without apiKeyEnv reads ASPIRE_API_KEY", `{"telemetry": {"source": "aspire"}}`, "ASPIRE_API_KEY", []string{"ASPIRE_API_KEY"}},
		{"the configured variables are both secret", `{"telemetry": {"source": "aspire", "apiKeyEnv": "DASH_KEY", "tokenEnv": "DASH_TOKEN"}}`, "DASH_KEY", []string{"DASH_KEY", "DASH_TOKEN"}},
		{"another source gets no default key variable", `{"telemetry": {"source": "jaeger+http://localhost:16686"}}`, "", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := testLoader(t).Load(project(t, c.file), nil, Overrides{})
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if cfg.Telemetry.APIKeyEnv != c.wantKeyEnv {
				t.Errorf("APIKeyEnv %q, want %q", cfg.Telemetry.APIKeyEnv, c.wantKeyEnv)
			}
			for _, s := range c.wantSecrets {
				if !slices.Contains(cfg.Commands.SecretEnv, s) {
					t.Errorf("SecretEnv %q lacks %s", cfg.Commands.SecretEnv, s)
				}
			}
			if c.wantSecrets == nil && slices.Contains(cfg.Commands.SecretEnv, "ASPIRE_API_KEY") {
				t.Errorf("SecretEnv %q holds ASPIRE_API_KEY for a non-aspire source", cfg.Commands.SecretEnv)
			}
		})
	}
}
