package mcp

import (
	"fmt"
	"io"
	"sync"
)

// outWriter serialises frames onto the output stream: each frame goes out whole, in one
// Write, never interleaved with another, however large it is.
type outWriter struct {
	mu     sync.Mutex
	w      io.Writer
	err    error // the first write failure; later frames are dropped
	closed bool  // set when Serve returns; late frames are dropped
}

// write sends one frame (which ends with its newline). It reports the stream's failure, if any.
func (o *outWriter) write(frame []byte) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed || o.err != nil {
		return o.err
	}
	if _, err := o.w.Write(frame); err != nil {
		o.err = fmt.Errorf("write output: %w", err)
	}
	return o.err
}

// close stops all further output and returns the first write failure.
func (o *outWriter) close() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.closed = true
	return o.err
}
