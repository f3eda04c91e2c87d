package clickhouse

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strings"
	"sync"

	ch "github.com/ClickHouse/clickhouse-go/v2"
)

// Default table names: the exporter's defaults.
const (
	DefaultTracesTable = "otel_traces"
	DefaultLogsTable   = "otel_logs"
)

// endpoint is a parsed source: what to dial and which tables to read.
type endpoint struct {
	protocol ch.Protocol
	secure   bool
	addr     string
	user     string
	database string
	traces   string
	logs     string
	// shown is the source without credentials, for answers and the doctor.
	shown string
}

// ident is what a table name (or attribute key spliced as an identifier) may look like: plain
// ClickHouse identifiers only, so a name never needs quoting and never carries SQL.
var ident = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`) })

// errSource is wrapped by every parse failure.
var errSource = errors.New("invalid clickhouse source")

// parseEndpoint reads clickhouse://[user@]host[:port][/database][?traces_table=…&logs_table=…]
// (the native protocol, default port 9000; clickhouses:// or secure=true for TLS, port 9440)
// and clickhouse+http(s)://… (the HTTP interface, ports 8123 and 8443); traces and logs, when
// set, name the tables instead. A password in the URL
// is refused: it belongs in the variable named by passwordEnv (or apiKeyEnv).
func parseEndpoint(raw, traces, logs string) (endpoint, error) {
	var e endpoint
	rest := raw
	switch {
	case strings.HasPrefix(raw, "clickhouse://"):
		e.protocol = ch.Native
	case strings.HasPrefix(raw, "clickhouses://"):
		e.protocol, e.secure = ch.Native, true
	case strings.HasPrefix(raw, "clickhouse+http://"):
		e.protocol, rest = ch.HTTP, strings.TrimPrefix(raw, "clickhouse+")
	case strings.HasPrefix(raw, "clickhouse+https://"):
		e.protocol, e.secure, rest = ch.HTTP, true, strings.TrimPrefix(raw, "clickhouse+")
	default:
		return e, fmt.Errorf("%w: expected clickhouse://host[:port]/database or clickhouse+http(s)://host[:port]/database", errSource)
	}
	u, err := url.Parse(rest)
	if err != nil {
		return e, fmt.Errorf("%w: not a URL", errSource)
	}
	if u.Hostname() == "" {
		return e, fmt.Errorf("%w: no host", errSource)
	}
	if _, has := u.User.Password(); has {
		return e, fmt.Errorf("%w: a password in the URL is refused; name the variable that holds it with telemetry.passwordEnv", errSource)
	}
	q := u.Query()
	for k := range q {
		if strings.EqualFold(k, "password") {
			return e, fmt.Errorf("%w: a password in the URL is refused; name the variable that holds it with telemetry.passwordEnv", errSource)
		}
	}
	if v := q.Get("secure"); v == "true" || v == "1" {
		e.secure = true
	}
	port := u.Port()
	if port == "" {
		switch {
		case e.protocol == ch.HTTP && e.secure:
			port = "8443"
		case e.protocol == ch.HTTP:
			port = "8123"
		case e.secure:
			port = "9440"
		default:
			port = "9000"
		}
	}
	e.addr = net.JoinHostPort(u.Hostname(), port)
	e.user = u.User.Username()
	e.database = strings.Trim(u.Path, "/")
	if e.database == "" {
		e.database = "default"
	}
	e.traces = orDefault(traces, orDefault(q.Get("traces_table"), DefaultTracesTable))
	e.logs = orDefault(logs, orDefault(q.Get("logs_table"), DefaultLogsTable))
	for what, name := range map[string]string{"database": e.database, "traces_table": e.traces, "logs_table": e.logs} {
		if !ident().MatchString(name) {
			return e, fmt.Errorf("%w: %s %q is not a plain identifier (letters, digits, _)", errSource, what, name)
		}
	}
	// What is shown is what was read: the user, host, port, database and the parameters above;
	// another parameter or a fragment could hold a secret, and the client never sees them.
	shown := *u
	shown.User = nil
	if e.user != "" {
		shown.User = url.User(e.user)
	}
	read := url.Values{}
	for _, k := range []string{"secure", "traces_table", "logs_table"} {
		if v, ok := q[k]; ok {
			read[k] = v
		}
	}
	shown.RawQuery, shown.ForceQuery = read.Encode(), false
	shown.Fragment, shown.RawFragment = "", ""
	prefix := "clickhouse"
	if e.protocol == ch.HTTP {
		prefix = "clickhouse+"
		if e.secure {
			shown.Scheme = "https"
		}
		e.shown = prefix + shown.String()
	} else {
		e.shown = shown.String()
	}
	return e, nil
}

// options are the client options for e.
func (e endpoint) options(password string, o Options) *ch.Options {
	opts := &ch.Options{
		Protocol: e.protocol,
		Addr:     []string{e.addr},
		Auth:     ch.Auth{Database: e.database, Username: orDefault(e.user, "default"), Password: password},
		// Every query carries its own limits (see settings); these bound the connection.
		DialTimeout:  o.DialTimeout,
		ReadTimeout:  o.MaxExecutionTime + o.DialTimeout,
		MaxOpenConns: maxOpenConns,
		MaxIdleConns: 2,
	}
	if e.secure {
		opts.TLS = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	return opts
}

// table is a qualified, quoted table name.
func (e endpoint) table(name string) string { return "`" + e.database + "`.`" + name + "`" }

func orDefault(v, d string) string {
	if v == "" {
		return d
	}
	return v
}
