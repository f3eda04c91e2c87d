package otlp

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
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

// readBody reads the request body within the limits of o, inflating gzip.
func readBody(w http.ResponseWriter, r *http.Request, o Options) ([]byte, error) {
	if r.ContentLength > o.MaxBodyBytes {
		return nil, &tooLargeError{fmt.Sprintf("request body of %d bytes exceeds the %d byte limit", r.ContentLength, o.MaxBodyBytes)}
	}
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, o.MaxBodyBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, &tooLargeError{fmt.Sprintf("request body exceeds the %d byte limit", o.MaxBodyBytes)}
		}
		return nil, fmt.Errorf("read request body: %w", err)
	}
	switch ce := strings.ToLower(strings.TrimSpace(r.Header.Get("Content-Encoding"))); ce {
	case "", "identity":
	case "gzip":
		raw, err = gunzip(raw, inflateLimit(int64(len(raw)), o))
		if err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("unsupported content encoding %q: use gzip or none", ce)
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
