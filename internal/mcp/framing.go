package mcp

import (
	"bufio"
	"errors"
	"io"
)

// readBufferSize is the fixed window through which input streams; a line longer than the
// ceiling never costs more memory than this plus the ceiling itself.
const readBufferSize = 64 << 10

// lineReader splits a stream into newline-delimited frames with a hard ceiling per frame. An
// over-long frame is discarded as it streams, so a hostile or broken peer cannot grow memory,
// and reading resumes at the next newline.
type lineReader struct {
	br  *bufio.Reader
	max int
	buf []byte
	eof bool
}

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, readBufferSize), max: max}
}

// next returns the next frame without its newline. tooLong reports a frame over the ceiling,
// whose content is not returned. The returned slice is valid until the following call. A final
// frame without a trailing newline is still a frame; io.EOF comes after it.
func (lr *lineReader) next() (line []byte, tooLong bool, err error) {
	if lr.eof {
		return nil, false, io.EOF
	}
	lr.buf = lr.buf[:0]
	seen := false
	for {
		chunk, err := lr.br.ReadSlice('\n')
		complete := err == nil
		if complete {
			chunk = chunk[:len(chunk)-1]
		}
		if len(chunk) > 0 {
			seen = true
		}
		if !tooLong {
			if len(lr.buf)+len(chunk) > lr.max {
				tooLong = true
				lr.buf = lr.buf[:0]
			} else {
				lr.buf = append(lr.buf, chunk...)
			}
		}
		switch {
		case complete:
			return lr.frame(tooLong)
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			lr.eof = true
			if !seen {
				return nil, false, io.EOF
			}
			return lr.frame(tooLong)
		default:
			return nil, false, err
		}
	}
}

func (lr *lineReader) frame(tooLong bool) ([]byte, bool, error) {
	if tooLong {
		return nil, true, nil
	}
	return lr.buf, false, nil
}
