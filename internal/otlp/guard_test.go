package otlp

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
)

// request sends one real HTTP request to the receiver at base with the Host and headers given
// ("" leaves the Host as the URL's) and returns the response, its body read.
func request(t *testing.T, method, url, host string, headers map[string]string, body []byte) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

// TestReceiverRefusesForeignHostsAndOrigins sends OTLP/JSON exports over real HTTP with the
// Host and Origin a DNS-rebinding page (or a browser on another site) would send: each one is
// refused with 403 and a message, and nothing reaches the store; loopback hosts, loopback
// origins and configured names are accepted.
func TestReceiverRefusesForeignHostsAndOrigins(t *testing.T) {
	tests := []struct {
		name    string
		host    string // "" keeps the listener's own 127.0.0.1:port
		origin  string
		allowed []string
		want    int
	}{
		{name: "a foreign Host is refused", host: "attacker.example", want: http.StatusForbidden},
		{name: "a foreign Host with a port is refused", host: "attacker.example:4318", want: http.StatusForbidden},
		{name: "a name that only starts like a loopback address is refused", host: "127.0.0.1.attacker.example:4318", want: http.StatusForbidden},
		{name: "localhost as a subdomain of another name is refused", host: "localhost.attacker.example", want: http.StatusForbidden},
		{name: "a foreign Origin is refused even with a loopback Host", origin: "http://attacker.example", want: http.StatusForbidden},
		{name: "a foreign Origin on a loopback port is refused", origin: "http://attacker.example:4318", want: http.StatusForbidden},
		{name: "the opaque null Origin of a sandboxed page is refused", origin: "null", want: http.StatusForbidden},
		{name: "a configured name does not let other names in", host: "other.internal", allowed: []string{"otel.internal"}, want: http.StatusForbidden},
		{name: "a request with no Origin from the listener's address is accepted", want: http.StatusOK},
		{name: "localhost with a port is accepted", host: "localhost:4318", want: http.StatusOK},
		{name: "localhost in capitals is accepted", host: "LOCALHOST", want: http.StatusOK},
		{name: "any address of 127.0.0.0/8 is accepted", host: "127.1.2.3:9", want: http.StatusOK},
		{name: "the IPv6 loopback address is accepted", host: "[::1]:4318", want: http.StatusOK},
		{name: "a loopback Origin is accepted", origin: "http://localhost:3000", want: http.StatusOK},
		{name: "a configured host name is accepted, in any case", host: "OTEL.internal:4318", allowed: []string{"otel.internal"}, want: http.StatusOK},
		{name: "an Origin on a configured host name is accepted", host: "otel.internal", origin: "https://otel.internal", allowed: []string{"otel.internal"}, want: http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url, st := startReceiver(t, Options{AllowedHosts: tt.allowed})
			headers := map[string]string{"Content-Type": ctJSON}
			if tt.origin != "" {
				headers["Origin"] = tt.origin
			}
			resp, body := request(t, http.MethodPost, url+TracesPath, tt.host, headers, []byte(rawJSONTraces))
			if resp.StatusCode != tt.want {
				t.Fatalf("status %d (%s), want %d", resp.StatusCode, body, tt.want)
			}
			stored := countRows(t, st, "otel_traces")
			switch tt.want {
			case http.StatusForbidden:
				if stored != 0 {
					t.Errorf("%d spans stored from a refused request", stored)
				}
				if !strings.Contains(body, "refused") {
					t.Errorf("refusal body %q does not say why", body)
				}
			default:
				if stored != 1 {
					t.Errorf("%d spans stored, want the 1 sent", stored)
				}
			}
			for name := range resp.Header {
				if strings.HasPrefix(strings.ToLower(name), "access-control-") {
					t.Errorf("answer carries %s: %s", name, resp.Header.Get(name))
				}
			}
		})
	}
}

// TestCORSPreflightGrantsNothing asks the receiver, as a browser does before a cross-origin
// JSON POST, whether it may send: the answer carries no Access-Control-Allow-* header, so the
// browser never sends the export.
func TestCORSPreflightGrantsNothing(t *testing.T) {
	url, st := startReceiver(t, Options{StoreID: StoreID("test")})
	for _, origin := range []string{"http://attacker.example", "http://localhost:3000"} {
		for _, path := range []string{TracesPath, LogsPath, MetricsPath, IdentityPath, "/elsewhere"} {
			resp, body := request(t, http.MethodOptions, url+path, "", map[string]string{
				"Origin":                         origin,
				"Access-Control-Request-Method":  "POST",
				"Access-Control-Request-Headers": "content-type",
			}, nil)
			if resp.StatusCode < 400 {
				t.Errorf("preflight of %s from %s: status %d, want a refusal", path, origin, resp.StatusCode)
			}
			for name := range resp.Header {
				if strings.HasPrefix(strings.ToLower(name), "access-control-") {
					t.Errorf("preflight of %s from %s grants %s: %s (%s)", path, origin, name, resp.Header.Get(name), body)
				}
			}
		}
	}
	if n := countRows(t, st, "otel_traces"); n != 0 {
		t.Errorf("%d spans stored by preflights", n)
	}
}
