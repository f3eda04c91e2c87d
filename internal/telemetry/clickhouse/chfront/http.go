package chfront

import (
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Front is the part of ClickHouse's HTTP interface the official client uses for queries: the
// query as the POST body (or the query URL parameter), database, default_format, query_id,
// param_* (query parameters) and settings as URL parameters, X-ClickHouse-User/Key, and
// errors as a non-200 answer with "Code: N. DB::Exception: …" and X-ClickHouse-Exception-Code.
type Front struct {
	E *Engine
	// User and Password, when Password is set, are the only credentials accepted.
	User, Password string
	// Queries counts the queries answered (for tests that bound round trips).
	Queries func(sql string)
	// Timed, when set, receives each query as the engine ran it with the time the engine took
	// for its parameters (prelude) and for the query itself (the benchmark's profile).
	Timed func(sql string, prelude, query time.Duration)
	// Refuse, when it returns a code, fails the query as the server would with that code
	// and message (a user without rights, say, which chDB has no users for).
	Refuse func(sql string) (code int, msg string)

	helloOnce sync.Once
	helloOut  []byte
	helloErr  error
}

// helloQuery is what clickhouse-go asks first over HTTP; it decodes the answer with its own
// protocol revision, while chDB writes Native blocks in the revision-0 layout every later
// block is read with once the client learns revision 0 — so the front answers revision 0.
const helloQuery = "SELECT displayName(), version(), revision(), timezone()"

// notSettings are URL parameters of the HTTP interface that are not query settings.
var notSettings = map[string]bool{
	"query": true, "database": true, "default_format": true, "query_id": true, "user": true, "password": true,
	"client_protocol_version": true, "compress": true, "decompress": true, "session_id": true, "session_timeout": true,
	"quota_key": true, "enable_http_compression": true, "wait_end_of_query": true, "buffer_size": true,
	"network_compression_method": true, "network_zstd_compression_level": true,
}

var codeRe = regexp.MustCompile(`Code: (\d+)`)

// ServeHTTP implements http.Handler.
func (f *Front) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/ping" {
		_, _ = io.WriteString(w, "Ok.\n")
		return
	}
	user, password, basic := r.BasicAuth()
	if !basic {
		user, password = r.Header.Get("X-ClickHouse-User"), r.Header.Get("X-ClickHouse-Key")
	}
	if f.Password != "" && (user != f.User || password != f.Password) {
		fail(w, 516, "default: Authentication failed: password is incorrect, or there is no user with such name.")
		return
	}
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			fail(w, 27, "cannot read the gzip body")
			return
		}
		body = zr
	}
	raw, err := io.ReadAll(io.LimitReader(body, 64<<20))
	if err != nil {
		fail(w, 27, "cannot read the body")
		return
	}
	params := r.URL.Query()
	sql := strings.TrimSpace(string(raw))
	if q := params.Get("query"); q != "" {
		sql = strings.TrimSpace(q + " " + sql)
	}
	format := params.Get("default_format")
	if format == "" {
		format = "TabSeparated"
	}
	if sql == helloQuery {
		f.hello(w)
		return
	}
	var prelude []string
	if db := params.Get("database"); db != "" {
		prelude = append(prelude, "USE `"+strings.ReplaceAll(db, "`", "")+"`")
	}
	var settings []string
	keys := make([]string, 0, len(params))
	for k := range params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := params.Get(k)
		switch {
		case strings.HasPrefix(k, "param_"):
			prelude = append(prelude, "SET "+safeName(k)+" = "+quote(v))
		case !notSettings[k]:
			settings = append(settings, safeName(k)+" = "+settingValue(v))
		}
	}
	if len(settings) > 0 {
		sql = strings.TrimRight(sql, "; \n") + " SETTINGS " + strings.Join(settings, ", ")
	}
	if f.Queries != nil {
		f.Queries(sql)
	}
	if f.Refuse != nil {
		if code, msg := f.Refuse(sql); code != 0 {
			fail(w, code, msg)
			return
		}
	}
	f.E.mu.Lock()
	var out []byte
	t0 := time.Now()
	for _, p := range prelude {
		if _, err = f.E.queryLocked(p, "TabSeparated"); err != nil {
			break
		}
	}
	t1 := time.Now()
	if err == nil {
		out, err = f.E.queryLocked(sql, format)
	}
	t2 := time.Now()
	f.E.mu.Unlock()
	if f.Timed != nil {
		f.Timed(sql, t1.Sub(t0), t2.Sub(t1))
	}
	if err != nil {
		code := 1001
		if m := codeRe.FindStringSubmatch(err.Error()); m != nil {
			code, _ = strconv.Atoi(m[1])
		}
		msg := err.Error()
		if i := strings.Index(msg, "DB::Exception: "); i >= 0 {
			msg = msg[i+len("DB::Exception: "):]
		}
		fail(w, code, msg)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.Itoa(len(out)))
	_, _ = w.Write(out)
}

// fail answers as ClickHouse does for a failed query.
func fail(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("X-ClickHouse-Exception-Code", strconv.Itoa(code))
	w.Header().Set("Content-Type", "text/plain; charset=UTF-8")
	status := http.StatusInternalServerError
	switch code {
	case 516:
		status = http.StatusUnauthorized
	case 60, 81:
		status = http.StatusNotFound
	}
	w.WriteHeader(status)
	_, _ = fmt.Fprintf(w, "Code: %d. DB::Exception: %s\n", code, strings.TrimSpace(msg))
}

var nameRe = regexp.MustCompile(`[^A-Za-z0-9_]`)

func safeName(s string) string { return nameRe.ReplaceAllString(s, "") }

// quote is a ClickHouse string literal holding s unchanged.
func quote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// settingValue keeps numbers as they are and quotes anything else.
func settingValue(v string) string {
	if _, err := strconv.ParseFloat(v, 64); err == nil {
		return v
	}
	return quote(v)
}

// hello answers helloQuery in the layout the client reads it with (its own revision: block
// info first, a custom-serialization flag per column) and reports revision 0, with the
// engine's name, version and time zone.
func (f *Front) hello(w http.ResponseWriter) {
	// Read once: a server answers the hello of a new connection at once, also while it runs
	// other queries, and the client allows a new connection only its dial timeout.
	f.helloOnce.Do(func() {
		f.helloOut, f.helloErr = f.E.Query("SELECT displayName(), version(), timezone()", "TabSeparated")
	})
	out, err := f.helloOut, f.helloErr
	if err != nil {
		fail(w, 1001, err.Error())
		return
	}
	fields := strings.Split(strings.TrimRight(string(out), "\n"), "\t")
	if len(fields) != 3 {
		fail(w, 1001, "unexpected server information")
		return
	}
	var b []byte
	uv := func(v uint64) { b = binary.AppendUvarint(b, v) }
	str := func(s string) { uv(uint64(len(s))); b = append(b, s...) }
	uv(1)
	b = append(b, 0) // is_overflows
	uv(2)
	b = binary.LittleEndian.AppendUint32(b, 0xFFFFFFFF) // bucket_num -1
	uv(0)
	uv(4) // columns
	uv(1) // rows
	col := func(name, typ string) { str(name); str(typ); b = append(b, 0) }
	col("displayName()", "String")
	str(fields[0])
	col("version()", "String")
	str(fields[1])
	col("revision()", "UInt32")
	b = binary.LittleEndian.AppendUint32(b, 0)
	col("timezone()", "String")
	str(fields[2])
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	_, _ = w.Write(b)
}
