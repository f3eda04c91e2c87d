package config

import (
	"errors"
	"strings"
	"testing"
)

func TestParseSource(t *testing.T) {
	tests := []struct {
		name    string
		raw     string
		want    Source
		wantErr string
	}{
		{"a relative sqlite path is resolved against the root", "sqlite:data/t.db", Source{Kind: SourceSQLite, Path: "/p/data/t.db"}, ""},
		{"an absolute sqlite path is kept", "sqlite:/var/t.db", Source{Kind: SourceSQLite, Path: "/var/t.db"}, ""},
		{"an empty sqlite path is refused", "sqlite:", Source{}, "needs a file path"},
		{"clickhouse keeps its URL", "clickhouse://localhost:9000/otel", Source{Kind: SourceClickHouse, Endpoint: "clickhouse://localhost:9000/otel"}, ""},
		{"clickhouse needs a host", "clickhouse://", Source{}, "no host"},
		{"clickhouse over HTTP keeps its URL", "clickhouse+http://runlens@localhost:8123/otel", Source{Kind: SourceClickHouse, Endpoint: "clickhouse+http://runlens@localhost:8123/otel"}, ""},
		{"clickhouse over HTTPS keeps its URL", "clickhouse+https://ch.internal/otel", Source{Kind: SourceClickHouse, Endpoint: "clickhouse+https://ch.internal/otel"}, ""},
		{"clickhouse over HTTP needs a host", "clickhouse+http://", Source{}, "no host"},
		{"aspire over http drops its prefix", "aspire+http://localhost:18888", Source{Kind: SourceAspire, Endpoint: "http://localhost:18888"}, ""},
		{"aspire over https drops its prefix", "aspire+https://localhost:18889", Source{Kind: SourceAspire, Endpoint: "https://localhost:18889"}, ""},
		{"aspire over another scheme is refused", "aspire+ftp://localhost", Source{}, "only http and https"},
		{"jaeger over http drops its prefix", "jaeger+http://localhost:16686", Source{Kind: SourceJaeger, Endpoint: "http://localhost:16686"}, ""},
		{"an unknown scheme lists the known forms", "postgres://db", Source{}, "expected sqlite:PATH"},
		{"a bare word is refused", "sqlite", Source{}, "expected sqlite:PATH"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseSource(tt.raw, "/p")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, errSource) {
					t.Fatalf("ParseSource(%q) error = %v, want one containing %q", tt.raw, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParseSource(%q) = %+v, %v; want %+v", tt.raw, got, err, tt.want)
			}
		})
	}
}

func TestSourceStringMasksPasswords(t *testing.T) {
	for _, raw := range []string{"clickhouse://default:hunter2@localhost:9000", "clickhouse+https://default:hunter2@localhost:8443", "aspire+https://u:hunter2@localhost:18889"} {
		src, err := ParseSource(raw, "/p")
		if err != nil {
			t.Fatalf("ParseSource(%q): %v", raw, err)
		}
		if s := src.String(); strings.Contains(s, "hunter2") || !strings.Contains(s, "localhost") {
			t.Errorf("String() = %q, want the host without the password", s)
		}
	}
}

func TestBadURLErrorsDoNotEchoTheURL(t *testing.T) {
	_, err := ParseSource("clickhouse://u:hunter2@[bad", "/p")
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("error = %v, want one without the password", err)
	}
}
