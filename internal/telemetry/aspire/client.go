package aspire

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/runlens/runlens/internal/telemetry"
)

// The dashboard's telemetry API paths.
const (
	PathResources     = "/api/telemetry/resources"
	PathSpans         = "/api/telemetry/spans"
	PathLogs          = "/api/telemetry/logs"
	PathTraces        = "/api/telemetry/traces"
	PathValidateToken = "/api/telemetry/validateToken"
)

// HeaderAPIKey carries the dashboard's API key.
const HeaderAPIKey = "X-API-Key"

// errNotFound is the dashboard's 404: an unknown resource or trace, which is an empty answer.
var errNotFound = errors.New("not found")

// client speaks HTTP to one dashboard: it picks the endpoint that answers, holds the API key
// (or the one a login token was exchanged for), bounds every call in time and size, and turns
// every failure into a telemetry.SourceError that names no credential.
type client struct {
	o    Options
	http *http.Client

	mu sync.Mutex
	// base is the endpoint that answered, "" until one did.
	base string
	// key is the API key sent; exchanged is true once the login token was exchanged for it,
	// or refused (refusal holds why, so a stale token is not offered again on every call).
	key       string
	exchanged bool
	refusal   error
}

func newClient(o Options) *client {
	c := &client{o: o, key: o.APIKey}
	c.http = o.Client
	if c.http == nil {
		c.http = &http.Client{Transport: transport(o)}
	}
	// A dashboard that wants a login redirects to its login page; following it would read HTML
	// and would send the key to wherever the redirect points.
	hc := *c.http
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	c.http = &hc
	return c
}

// endpoints are the candidates in the order they are tried.
func (c *client) endpoints() []string {
	out := []string{c.o.Endpoint}
	if c.o.Fallback != "" {
		out = append(out, c.o.Fallback)
	}
	return out
}

// chosen is the endpoint that answered, "" until one did.
func (c *client) chosen() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.base
}

// shown is an endpoint as messages show it: without user info.
func shown(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "the configured endpoint"
	}
	// Credentials, parameters and a fragment could each hold a secret: the shown form has none.
	u.User, u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = nil, "", false, "", ""
	return u.String()
}

// get requests path with query and returns the body (at most MaxBytes).
func (c *client) get(ctx context.Context, path string, q url.Values) ([]byte, error) {
	c.mu.Lock()
	base := c.base
	c.mu.Unlock()
	if base != "" {
		return c.getAt(ctx, base, path, q, true)
	}
	// The first call finds the endpoint that answers: a port discovered from
	// ASPIRE_DASHBOARD_PORT may serve http or https.
	var lastErr error
	for _, b := range c.endpoints() {
		body, err := c.getAt(ctx, b, path, q, true)
		var se *telemetry.SourceError
		if err == nil || errors.Is(err, errNotFound) || (errors.As(err, &se) && errors.Is(err, telemetry.ErrRefused)) {
			c.mu.Lock()
			c.base = b
			c.mu.Unlock()
			return body, err
		}
		// The last endpoint's failure says most: an https port answers http with a 400.
		lastErr = err
		if ctx.Err() != nil {
			break
		}
	}
	return nil, lastErr
}

// getAt requests base+path; retry allows one token exchange after a 401.
func (c *client) getAt(ctx context.Context, base, path string, q url.Values, retry bool) ([]byte, error) {
	key, err := c.apiKey(ctx, base)
	if err != nil {
		return nil, err
	}
	target := strings.TrimRight(base, "/") + path
	if len(q) > 0 {
		target += "?" + q.Encode()
	}
	ctx, cancel := context.WithTimeout(ctx, c.o.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return nil, c.unreachable(base, "is not a valid URL", "Check telemetry.source: aspire+http://HOST:PORT.")
	}
	req.Header.Set("Accept", "application/json")
	if key != "" {
		req.Header.Set(HeaderAPIKey, key)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, c.transportErr(ctx, base, err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		drain(resp.Body)
		if retry && c.o.Token != "" && !c.hasExchanged() {
			c.forgetKey()
			return c.getAt(ctx, base, path, q, false)
		}
		return nil, c.refused(base, key != "")
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		drain(resp.Body)
		return nil, c.refused(base, key != "")
	case resp.StatusCode == http.StatusNotFound:
		drain(resp.Body)
		return nil, errNotFound
	case resp.StatusCode != http.StatusOK:
		drain(resp.Body)
		return nil, c.unreachable(base, fmt.Sprintf("answered HTTP %d", resp.StatusCode),
			"Check that the dashboard is healthy and that the address is the dashboard's, not an app's.")
	}
	body, err := c.readBounded(ctx, base, resp.Body)
	if err != nil {
		return nil, err
	}
	if looksLikeHTML(resp.Header.Get("Content-Type"), body) {
		return nil, c.unreachable(base, "answered with a web page, not the telemetry API (a login page, or not a dashboard)",
			"Point telemetry.source at the dashboard and set "+c.keyVar()+" to its API key (Dashboard:Api:PrimaryApiKey).")
	}
	return body, nil
}

// readBounded reads at most MaxBytes; a longer answer is an error, never a silently cut one.
func (c *client) readBounded(ctx context.Context, base string, r io.Reader) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(r, c.o.MaxBytes+1))
	if err != nil {
		return nil, c.transportErr(ctx, base, err)
	}
	if int64(len(body)) > c.o.MaxBytes {
		return nil, c.unreachable(base, fmt.Sprintf("sent an answer larger than %d MiB", c.o.MaxBytes>>20),
			"The dashboard holds more telemetry than one answer may carry; narrow the question (service, window).")
	}
	return body, nil
}

// apiKey is the key to send: the configured one, or the one the login token is exchanged for.
func (c *client) apiKey(ctx context.Context, base string) (string, error) {
	c.mu.Lock()
	key, token, done, refusal := c.key, c.o.Token, c.exchanged, c.refusal
	c.mu.Unlock()
	if refusal != nil {
		return "", refusal
	}
	if key != "" || token == "" || done {
		return key, nil
	}
	key, err := c.exchange(ctx, base, token)
	if errors.Is(err, telemetry.ErrRefused) {
		c.mu.Lock()
		c.exchanged, c.refusal = true, err
		c.mu.Unlock()
	}
	if err != nil {
		return "", err
	}
	c.mu.Lock()
	c.key, c.exchanged = key, true
	c.mu.Unlock()
	return key, nil
}

func (c *client) hasExchanged() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.exchanged
}

// forgetKey drops a refused key so the login token is exchanged for a fresh one.
func (c *client) forgetKey() {
	c.mu.Lock()
	c.key = ""
	c.mu.Unlock()
}

// exchange trades a dashboard login token for an API key.
func (c *client) exchange(ctx context.Context, base, token string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, c.o.Timeout)
	defer cancel()
	payload, _ := json.Marshal(map[string]string{"token": token})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(base, "/")+PathValidateToken, bytes.NewReader(payload))
	if err != nil {
		return "", c.unreachable(base, "is not a valid URL", "Check telemetry.source: aspire+http://HOST:PORT.")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return "", c.transportErr(ctx, base, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		drain(resp.Body)
		return "", &telemetry.SourceError{Kind: telemetry.ErrRefused,
			Message: fmt.Sprintf("the Aspire dashboard at %s did not accept the login token in %s (HTTP %d)", shown(base), c.tokenVar(), resp.StatusCode),
			Hint:    "Put a current login token (the t= value of the dashboard's login link) in " + c.tokenVar() + ", or set " + c.keyVar() + " to the dashboard's API key."}
	}
	body, err := c.readBounded(ctx, base, resp.Body)
	if err != nil {
		return "", err
	}
	var out struct {
		APIKey string `json:"apiKey"`
	}
	if err := json.Unmarshal(body, &out); err != nil || out.APIKey == "" {
		return "", c.unreachable(base, "answered the token exchange without an API key",
			"Set "+c.keyVar()+" to the dashboard's API key instead of a login token.")
	}
	return out.APIKey, nil
}

// refused is the error of a 401: which variable to set, never the key.
func (c *client) refused(base string, sentKey bool) error {
	msg := fmt.Sprintf("the Aspire dashboard at %s requires an API key (HTTP 401) and %s is not set", shown(base), c.keyVar())
	if sentKey {
		msg = fmt.Sprintf("the Aspire dashboard at %s refused the API key (HTTP 401)", shown(base))
	}
	return &telemetry.SourceError{Kind: telemetry.ErrRefused, Message: msg,
		Hint: "Set " + c.keyVar() + " to the dashboard's API key (Dashboard:Api:PrimaryApiKey, or the key the AppHost printed), " +
			"or put a dashboard login token in the variable telemetry.tokenEnv names; then ask again."}
}

func (c *client) unreachable(base, what, fix string) error {
	return &telemetry.SourceError{Kind: telemetry.ErrUnreachable, Message: fmt.Sprintf("the Aspire dashboard at %s %s", shown(base), what), Hint: fix}
}

// transportErr describes a failed exchange without the URL error's text (it repeats the URL).
func (c *client) transportErr(ctx context.Context, base string, err error) error {
	var ne net.Error
	var unknownCA x509.UnknownAuthorityError
	var badHost x509.HostnameError
	switch {
	case errors.As(err, &unknownCA) || errors.As(err, &badHost):
		return c.unreachable(base, "presents a certificate this machine does not trust",
			"Trust the ASP.NET development certificate (dotnet dev-certs https --trust), or reach the dashboard over http.")
	case errors.Is(err, context.Canceled) && ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded):
		return err
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
		return c.unreachable(base, fmt.Sprintf("did not answer within %s", c.o.Timeout),
			"Check that the dashboard is running and not overloaded; the timeout is per call.")
	}
	return c.unreachable(base, "does not answer",
		"Start the Aspire AppHost (or the standalone dashboard), or check telemetry.source and ASPIRE_DASHBOARD_PORT.")
}

func (c *client) keyVar() string   { return c.o.APIKeyEnv }
func (c *client) tokenVar() string { return c.o.TokenEnv }

// looksLikeHTML reports an HTML answer: by its content type, or by a body that opens a tag.
func looksLikeHTML(contentType string, body []byte) bool {
	if strings.Contains(strings.ToLower(contentType), "html") {
		return true
	}
	b := bytes.TrimLeft(body, " \t\r\n\ufeff")
	return len(b) > 0 && b[0] == '<'
}

// drain reads a little of an unwanted body so the connection can be reused.
func drain(r io.Reader) { _, _ = io.Copy(io.Discard, io.LimitReader(r, 64<<10)) }

// dialTimeout bounds connecting, separately from the per-call timeout.
const dialTimeout = 5 * time.Second
