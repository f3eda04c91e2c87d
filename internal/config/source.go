package config

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
)

// SourceKind names a telemetry backend.
type SourceKind string

// The telemetry backends runlens can read.
const (
	SourceSQLite     SourceKind = "sqlite"
	SourceClickHouse SourceKind = "clickhouse"
	SourceAspire     SourceKind = "aspire"
	SourceJaeger     SourceKind = "jaeger"
)

// Source is a parsed telemetry SOURCE (sqlite:PATH, clickhouse://…, aspire+http(s)://…,
// jaeger+http(s)://…), so adapters receive a checked endpoint rather than re-parsing a string.
type Source struct {
	Kind SourceKind
	// Path is the absolute database file of a sqlite source; empty otherwise.
	Path string
	// Endpoint is what a remote adapter dials: the clickhouse:// or clickhouse+http(s):// URL as
	// given, or the plain http(s):// URL of an Aspire dashboard or Jaeger query service. Empty
	// for sqlite, and for a bare aspire source until Load discovers the dashboard (see
	// DiscoverAspire).
	Endpoint string
	// Fallback is tried when Endpoint does not answer: the https form of a dashboard port
	// discovered over http.
	Fallback string
}

// errSource is wrapped by every ParseSource failure so callers can tell a bad SOURCE apart.
var errSource = errors.New("invalid telemetry source")

// ParseSource parses a SOURCE; a relative sqlite path is resolved against root.
func ParseSource(raw, root string) (Source, error) {
	switch {
	case strings.HasPrefix(raw, "sqlite:"):
		p := strings.TrimPrefix(raw, "sqlite:")
		if strings.TrimSpace(p) == "" {
			return Source{}, fmt.Errorf("%w: sqlite: needs a file path, as in sqlite:.runlens/telemetry.db", errSource)
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(root, p)
		}
		return Source{Kind: SourceSQLite, Path: filepath.Clean(p)}, nil
	case strings.HasPrefix(raw, "clickhouse://"), strings.HasPrefix(raw, "clickhouse+http://"), strings.HasPrefix(raw, "clickhouse+https://"):
		if _, err := parseHostURL(strings.TrimPrefix(raw, "clickhouse+")); err != nil {
			return Source{}, err
		}
		return Source{Kind: SourceClickHouse, Endpoint: raw}, nil
	case raw == string(SourceAspire):
		// The dashboard on this machine, found by DiscoverAspire.
		return Source{Kind: SourceAspire}, nil
	case strings.HasPrefix(raw, "aspire+"):
		u, err := parseHTTPURL(strings.TrimPrefix(raw, "aspire+"))
		if err != nil {
			return Source{}, err
		}
		return Source{Kind: SourceAspire, Endpoint: u}, nil
	case strings.HasPrefix(raw, "jaeger+"):
		u, err := parseHTTPURL(strings.TrimPrefix(raw, "jaeger+"))
		if err != nil {
			return Source{}, err
		}
		return Source{Kind: SourceJaeger, Endpoint: u}, nil
	}
	return Source{}, fmt.Errorf("%w: expected sqlite:PATH, clickhouse://…, clickhouse+http(s)://…, aspire, aspire+http(s)://… or jaeger+http(s)://…", errSource)
}

// String renders the source for people and logs, with any password in the URL masked.
func (s Source) String() string {
	switch s.Kind {
	case SourceSQLite:
		return "sqlite:" + s.Path
	case SourceAspire, SourceJaeger:
		if s.Endpoint == "" {
			return string(s.Kind)
		}
		return string(s.Kind) + "+" + redactURL(s.Endpoint)
	}
	return redactURL(s.Endpoint)
}

func parseHTTPURL(raw string) (string, error) {
	u, err := parseHostURL(raw)
	if err != nil {
		return "", err
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("%w: only http and https endpoints are supported", errSource)
	}
	return raw, nil
}

func parseHostURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		// The url error repeats the raw string, which may hold a password: keep it out.
		return nil, fmt.Errorf("%w: not a valid URL", errSource)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("%w: the URL has no host", errSource)
	}
	return u, nil
}

func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "<invalid URL>"
	}
	return u.Redacted()
}

// The Aspire dashboard's discovery: the port an AppHost gives its dashboard, and the dashboard's
// default address.
const (
	EnvAspireDashboardPort = "ASPIRE_DASHBOARD_PORT"
	DefaultAspireEndpoint  = "http://localhost:18888"
	// DefaultAspireAPIKeyEnv holds the dashboard's API key when telemetry.apiKeyEnv is unset.
	DefaultAspireAPIKeyEnv = "ASPIRE_API_KEY"
)

// DiscoverAspire gives a bare aspire source its endpoint: http://localhost:PORT (then https)
// when ASPIRE_DASHBOARD_PORT names a port, else the dashboard's default address. A source
// with an address, from any layer, is left as it is: it was chosen explicitly.
func DiscoverAspire(src Source, getenv func(string) string) (Source, error) {
	if src.Kind != SourceAspire || src.Endpoint != "" {
		return src, nil
	}
	port := ""
	if getenv != nil {
		port = strings.TrimSpace(getenv(EnvAspireDashboardPort))
	}
	if port == "" {
		src.Endpoint = DefaultAspireEndpoint
		return src, nil
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return src, fmt.Errorf("%w: %s must be a port number (1-65535)", errSource, EnvAspireDashboardPort)
	}
	src.Endpoint, src.Fallback = "http://localhost:"+port, "https://localhost:"+port
	return src, nil
}
