package otlp

import (
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
)

// guard refuses requests a web page could make the browser send, before anything else reads
// them. The receiver has no authentication and listens on loopback, but a page on any site can
// still reach loopback: through DNS rebinding (its own name resolving to 127.0.0.1, so the
// request carries Host: attacker.example) or as a plain cross-origin request (which carries
// Origin). What such a request stores ends up as text in the agent's context. So:
//
//   - the Host must be a loopback name (an address of 127.0.0.0/8, ::1, or localhost, with
//     any port) or one of the configured names;
//   - an Origin, when present, must be on such a host too (exporters send none; a browser
//     always sends one on a cross-origin POST, and "null" from sandboxed pages);
//   - no answer carries an Access-Control-Allow-* header, so a CORS preflight never grants
//     a browser permission to send.
type guard struct {
	next    http.Handler
	allowed map[string]bool // lower-case host names
	log     func(msg string, args ...any)
}

func newGuard(next http.Handler, allowedHosts []string, log func(string, ...any)) *guard {
	g := &guard{next: next, allowed: map[string]bool{}, log: log}
	for _, h := range allowedHosts {
		if h = normalHost(h); h != "" {
			g.allowed[h] = true
		}
	}
	return g
}

func (g *guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !g.hostAllowed(hostOnly(r.Host)) {
		g.refuse(w, r, "the Host header must name a loopback address (127.0.0.1, ::1, localhost) or a name listed in receiver.allowedHosts")
		return
	}
	if origin := r.Header.Get("Origin"); origin != "" && !g.originAllowed(origin) {
		g.refuse(w, r, "requests from web pages on other origins are not accepted")
		return
	}
	g.next.ServeHTTP(w, r)
}

// refuse answers 403 with the reason; the refused Host or Origin is logged, never echoed.
func (g *guard) refuse(w http.ResponseWriter, r *http.Request, why string) {
	g.log("otlp request refused", "host", r.Host, "origin", r.Header.Get("Origin"), "path", r.URL.Path)
	writePlain(w, http.StatusForbidden, "refused: "+why)
}

func (g *guard) hostAllowed(host string) bool {
	host = normalHost(host)
	return host != "" && (isLoopbackName(host) || g.allowed[host])
}

// originAllowed accepts an http(s) origin on an allowed host; "null" and anything unparsable
// are foreign.
func (g *guard) originAllowed(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return false
	}
	return g.hostAllowed(u.Hostname())
}

// hostOnly strips the port of a Host header value, and the brackets of an IPv6 literal.
func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]")
}

// normalHost lower-cases a host name and drops the trailing dot of a fully qualified one, so
// "LOCALHOST." and "localhost" are the same name.
func normalHost(h string) string {
	return strings.TrimSuffix(strings.ToLower(strings.TrimSpace(h)), ".")
}

// isLoopbackName reports whether host (normalised, without port) is localhost or a loopback
// address literal.
func isLoopbackName(host string) bool {
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}
