package jaeger

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Errors the client tells apart, so the adapter can react (split a search, skip a trace) and
// the doctor can say what is wrong in words a person can act on.
var (
	// errTooLarge: the answer exceeded Options.MaxBodyBytes.
	errTooLarge = errors.New("answer too large")
	// errNotJaeger: the address answers, but not as the Jaeger query API does.
	errNotJaeger = errors.New("not the Jaeger /api/v3 query API")
	// errNotFound: Jaeger's own 404, which it answers for a search that found no trace and
	// for an unknown trace id.
	errNotFound = errors.New("no traces found")
)

// get fetches path?query from the API and returns its body, bounded by MaxBodyBytes; every
// call has its own timeout. Jaeger's 404 (a JSON error object) is errNotFound; any other 404
// means the address is not Jaeger's query API.
func (b *Backend) get(parent context.Context, path string, query url.Values) ([]byte, error) {
	ctx, cancel := context.WithTimeout(parent, b.opts.Timeout)
	defer cancel()
	u := b.base + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("jaeger request %s: %w", path, err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := b.client.Do(req)
	if err != nil {
		return nil, b.transportErr(parent, ctx, path, "no answer", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, b.opts.MaxBodyBytes+1))
	if err != nil {
		return nil, b.transportErr(parent, ctx, path, "answer not complete", err)
	}
	if int64(len(body)) > b.opts.MaxBodyBytes {
		return nil, fmt.Errorf("jaeger %s: %w (over %d bytes)", path, errTooLarge, b.opts.MaxBodyBytes)
	}
	switch {
	case resp.StatusCode == http.StatusNotFound && isJaegerError(body, http.StatusNotFound):
		return nil, errNotFound
	case resp.StatusCode == http.StatusNotFound:
		return nil, fmt.Errorf("jaeger %s: answered 404: %w", path, errNotJaeger)
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return nil, fmt.Errorf("jaeger %s: answered %d: the query API needs credentials runlens does not send", path, resp.StatusCode)
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("jaeger %s: answered %d%s", path, resp.StatusCode, jaegerMessage(body))
	}
	// The gateway writes JSON without always saying so (Go then labels it text/plain); an
	// answer labelled anything else (a login page, a proxy's error page) is not the API's.
	if ct := resp.Header.Get("Content-Type"); ct != "" {
		if mt, _, err := mime.ParseMediaType(ct); err == nil && mt != "application/json" && mt != "text/plain" {
			return nil, fmt.Errorf("jaeger %s: answered %s, not JSON: %w", path, mt, errNotJaeger)
		}
	}
	return body, nil
}

// errTimeout: Jaeger did not answer within Options.Timeout. It is not the caller's deadline,
// so it is reported as the source not answering, not as a cancelled call.
var errTimeout = errors.New("timed out")

// transportErr says why a request failed: the caller gave up (its own context error), the
// request's timeout passed, or the transport failed.
func (b *Backend) transportErr(parent, ctx context.Context, path, what string, err error) error {
	switch {
	case parent.Err() != nil:
		return fmt.Errorf("jaeger %s: %w", path, parent.Err())
	case ctx.Err() != nil:
		return fmt.Errorf("jaeger %s: %s within %s: %w", path, what, b.opts.Timeout, errTimeout)
	}
	return fmt.Errorf("jaeger %s: %w", path, scrubURL(err))
}

// isJaegerError reports whether body is the gateway's error object with that HTTP code.
func isJaegerError(body []byte, code int) bool {
	var e struct {
		Error *struct {
			HTTPCode int `json:"httpCode"`
		} `json:"error"`
	}
	return json.Unmarshal(bytes.TrimSpace(body), &e) == nil && e.Error != nil && e.Error.HTTPCode == code
}

// jaegerMessage is the gateway's error message (bounded), for an error string.
func jaegerMessage(body []byte) string {
	var e struct {
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(bytes.TrimSpace(body), &e) != nil || e.Error == nil || e.Error.Message == "" {
		return ""
	}
	msg := e.Error.Message
	if len(msg) > 200 {
		msg = msg[:200] + "…"
	}
	return ": " + msg
}

// scrubURL drops the URL from a transport error: the address is already known to the caller,
// and a URL may carry credentials.
func scrubURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// decodeTraces reads the gateway's answer, {"result": <OTLP JSON TracesData>}.
func decodeTraces(body []byte) (ptrace.Traces, error) {
	var w struct {
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(body, &w); err != nil {
		return ptrace.Traces{}, fmt.Errorf("decode jaeger traces: %w: %w", errNotJaeger, err)
	}
	if len(w.Result) == 0 || string(w.Result) == "null" {
		return ptrace.Traces{}, fmt.Errorf("decode jaeger traces: no result object: %w", errNotJaeger)
	}
	var u ptrace.JSONUnmarshaler
	td, err := u.UnmarshalTraces(w.Result)
	if err != nil {
		return ptrace.Traces{}, fmt.Errorf("decode jaeger traces: %w", err)
	}
	return td, nil
}

// decodeServices reads {"services": [...]}.
func decodeServices(body []byte) ([]string, error) {
	var w struct {
		Services *[]string `json:"services"`
	}
	if err := json.Unmarshal(body, &w); err != nil {
		return nil, fmt.Errorf("decode jaeger services: %w: %w", errNotJaeger, err)
	}
	if w.Services == nil {
		if strings.TrimSpace(string(body)) == "{}" { // proto3 JSON omits an empty list
			return nil, nil
		}
		return nil, fmt.Errorf("decode jaeger services: no services list: %w", errNotJaeger)
	}
	return *w.Services, nil
}
