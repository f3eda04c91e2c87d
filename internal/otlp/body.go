package otlp

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"strings"
	"time"
)

// encoding is the wire format of a request, and so of its response.
type encoding int

const (
	encodingProto encoding = iota
	encodingJSON
)

// contentType is the media type a response in e carries.
func (e encoding) contentType() string {
	if e == encodingJSON {
		return "application/json"
	}
	return "application/x-protobuf"
}

// encodingOf maps a Content-Type header to an encoding; parameters such as charset are ignored.
func encodingOf(header string) (encoding, bool) {
	mt, _, err := mime.ParseMediaType(header)
	if err != nil {
		return 0, false
	}
	switch mt {
	case "application/x-protobuf", "application/protobuf":
		return encodingProto, true
	case "application/json":
		return encodingJSON, true
	}
	return 0, false
}

// gzipRatioLimit: a gzip body may inflate to this many times its size (but always to
// MaxBodyBytes), which honest OTLP payloads stay far below and a bomb exceeds within its first
// few kilobytes.
const gzipRatioLimit = 100

// tooLargeError marks a body refused for its size (413 rather than 400).
type tooLargeError struct{ msg string }

func (e *tooLargeError) Error() string { return e.msg }

// slowBodyError marks a body that did not arrive in time (408 rather than 400).
type slowBodyError struct{ msg string }

func (e *slowBodyError) Error() string { return e.msg }

// bodyMinRate is the slowest a body may arrive once past Options.BodyTimeout, in bytes per
// second: every bodyMinRate bytes received give the sender one more second. Loopback moves a
// 16 MiB batch in milliseconds; a remote sender on a slow link still gets a few megabits.
const bodyMinRate = 64 << 10

// maxBodyTime bounds a body's arrival in all, as the server's ReadTimeout did before the
// receiver set its own deadlines.
const maxBodyTime = 60 * time.Second

// contentEncoding reports whether the body is gzip; any encoding but gzip and none is refused
// before the body is read.
func contentEncoding(r *http.Request) (gzipped bool, err error) {
	switch ce := strings.ToLower(strings.TrimSpace(r.Header.Get("Content-Encoding"))); ce {
	case "", "identity":
		return false, nil
	case "gzip":
		return true, nil
	default:
		return false, fmt.Errorf("unsupported content encoding %q: use gzip or none", ce)
	}
}

// readBody reads the request body as sent, within o.MaxBodyBytes and the pace of paceReader.
func readBody(w http.ResponseWriter, r *http.Request, o Options) ([]byte, error) {
	if r.ContentLength > o.MaxBodyBytes {
		return nil, &tooLargeError{fmt.Sprintf("request body of %d bytes exceeds the %d byte limit", r.ContentLength, o.MaxBodyBytes)}
	}
	var body io.Reader = http.MaxBytesReader(w, r.Body, o.MaxBodyBytes)
	if r.Body != nil && r.Body != http.NoBody {
		body = &paceReader{r: body, rc: http.NewResponseController(w), start: time.Now(), grace: o.BodyTimeout}
	}
	raw, err := io.ReadAll(body)
	if err != nil {
		var mbe *http.MaxBytesError
		switch {
		case errors.As(err, &mbe):
			return nil, &tooLargeError{fmt.Sprintf("request body exceeds the %d byte limit", o.MaxBodyBytes)}
		case errors.Is(err, os.ErrDeadlineExceeded):
			return nil, &slowBodyError{fmt.Sprintf("request body not received in time (%d bytes in %s)", len(raw), o.BodyTimeout)}
		}
		return nil, fmt.Errorf("read request body: %w", err)
	}
	return raw, nil
}

// paceReader moves the connection's read deadline as a body arrives: the body must be whole
// by start + grace + one second per bodyMinRate bytes read, and by start + maxBodyTime. It
// sets no deadline once the body has ended (the server then reads the connection itself, and a
// deadline there would end the request), nor where the writer cannot (a recorder in tests).
type paceReader struct {
	r     io.Reader
	rc    *http.ResponseController
	start time.Time
	grace time.Duration
	n     int64
	off   bool
}

func (p *paceReader) Read(b []byte) (int, error) {
	if !p.off {
		allowed := min(p.grace+time.Duration(p.n)*(time.Second/bodyMinRate), maxBodyTime)
		if err := p.rc.SetReadDeadline(p.start.Add(allowed)); err != nil {
			p.off = true
		}
	}
	n, err := p.r.Read(b)
	p.n += int64(n)
	if err != nil {
		p.off = true
	}
	return n, err
}

// inflate returns the body to decode: raw, or raw inflated within the limits of o.
func inflate(raw []byte, gzipped bool, o Options) ([]byte, error) {
	if gzipped {
		var err error
		if raw, err = gunzip(raw, inflateLimit(int64(len(raw)), o)); err != nil {
			return nil, err
		}
	}
	if len(raw) == 0 {
		return nil, errors.New("empty request body")
	}
	return raw, nil
}

// inflateLimit is how large a gzip body of compressed bytes may become.
func inflateLimit(compressed int64, o Options) int64 {
	limit := max(compressed*gzipRatioLimit, o.MaxBodyBytes)
	return min(limit, o.MaxDecompressedBytes)
}

func gunzip(compressed []byte, limit int64) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(compressed))
	if err != nil {
		return nil, fmt.Errorf("read gzip body: %w", err)
	}
	defer zr.Close()
	out, err := io.ReadAll(io.LimitReader(zr, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read gzip body: %w", err)
	}
	if int64(len(out)) > limit {
		return nil, &tooLargeError{fmt.Sprintf("gzip body inflates past the %d byte limit", limit)}
	}
	return out, nil
}
