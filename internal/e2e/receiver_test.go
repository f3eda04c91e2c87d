package e2e

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/runlens/runlens/internal/otlp"
	"github.com/runlens/runlens/internal/telemetry/store"
)

// openStore opens a fresh store in the test's temporary directory. The retention is longer
// than the fixture's day so nothing is pruned whatever the pinned clock says.
func openStore(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), store.Options{
		Path: filepath.Join(t.TempDir(), "telemetry.db"), Retention: 30 * 24 * time.Hour,
	})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// exchange is one request the receiver answered.
type exchange struct {
	path, contentType, encoding string
	status                      int
	// rejected is the partialSuccess count of the OTLP response (spans or log records).
	rejected int64
	// decodeErr is set when a 200 response was not a valid OTLP response.
	decodeErr error
}

// exchanges records what the receiver answered, so a way of sending is held to "every POST got
// 200 and nothing was rejected" whoever the client is.
type exchanges struct {
	mu   sync.Mutex
	list []exchange
}

func (x *exchanges) add(e exchange) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.list = append(x.list, e)
}

// check fails t unless every recorded request got a 200 with nothing rejected and both signal
// paths were posted to.
func (x *exchanges) check(t *testing.T) {
	t.Helper()
	x.mu.Lock()
	defer x.mu.Unlock()
	seen := map[string]int{}
	for _, e := range x.list {
		seen[e.path]++
		if e.status != http.StatusOK || e.rejected != 0 || e.decodeErr != nil {
			t.Errorf("POST %s (%s, encoding %q) answered %d, rejected %d, response error %v",
				e.path, e.contentType, e.encoding, e.status, e.rejected, e.decodeErr)
		}
	}
	for _, p := range []string{otlp.TracesPath, otlp.LogsPath} {
		if seen[p] == 0 {
			t.Errorf("nothing was posted to %s (requests: %v)", p, seen)
		}
	}
}

// recorder keeps the status and body of a response.
type recorder struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (r *recorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	r.body.Write(b)
	return r.ResponseWriter.Write(b)
}

// serveReceiver serves the real receiver into st on a loopback httptest server and returns its
// base URL and the log of what it answered.
func serveReceiver(t *testing.T, st *store.Store) (string, *exchanges) {
	t.Helper()
	log := &exchanges{}
	h := otlp.NewHandler(st, otlp.Options{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &recorder{ResponseWriter: w}
		h.ServeHTTP(rec, r)
		e := exchange{path: r.URL.Path, contentType: r.Header.Get("Content-Type"),
			encoding: r.Header.Get("Content-Encoding"), status: rec.status}
		if e.status == http.StatusOK {
			e.rejected, e.decodeErr = rejectedIn(r.URL.Path, w.Header().Get("Content-Type"), rec.body.Bytes())
		}
		log.add(e)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, log
}

// rejectedIn decodes an OTLP export response and returns its partialSuccess rejection count.
func rejectedIn(path, contentType string, body []byte) (int64, error) {
	isJSON := strings.HasPrefix(contentType, "application/json")
	switch path {
	case otlp.TracesPath:
		resp := ptraceotlp.NewExportResponse()
		if err := unmarshal(isJSON, body, resp.UnmarshalJSON, resp.UnmarshalProto); err != nil {
			return 0, err
		}
		return resp.PartialSuccess().RejectedSpans(), nil
	case otlp.LogsPath:
		resp := plogotlp.NewExportResponse()
		if err := unmarshal(isJSON, body, resp.UnmarshalJSON, resp.UnmarshalProto); err != nil {
			return 0, err
		}
		return resp.PartialSuccess().RejectedLogRecords(), nil
	}
	return 0, fmt.Errorf("unexpected path %s", path)
}

func unmarshal(isJSON bool, body []byte, fromJSON, fromProto func([]byte) error) error {
	if isJSON {
		return fromJSON(body)
	}
	return fromProto(body)
}

// post sends one OTLP body and fails t unless it got a 200.
func post(t *testing.T, url, contentType string, gzipped bool, body []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	if gzipped {
		req.Header.Set("Content-Encoding", "gzip")
	}
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s (%s, gzip %v) answered %d: %s", url, contentType, gzipped, resp.StatusCode, answer)
	}
}

func gzipBytes(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
