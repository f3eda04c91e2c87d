package mcp

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sync"
	"time"
	"unicode/utf8"
)

// Server serves one MCP peer per Serve call. It snapshots the handler's tool list when created:
// the list is published with listChanged false, so it must not change while the process runs.
type Server struct {
	h       Handler
	opts    Options
	catalog *catalog
	initErr error // a tool list that breaks the protocol's rules; Serve refuses to start
}

// NewServer returns a server that dispatches tool calls to h. A tool list that breaks the
// protocol's rules (see CheckTools) is reported by Serve, before anything is read.
func NewServer(h Handler, opts Options) *Server {
	s := &Server{h: h, opts: opts.withDefaults()}
	s.catalog, s.initErr = newCatalog(h.Tools())
	return s
}

// Serve reads r until EOF or ctx is done, drains in-flight requests (bounded by DrainTimeout,
// then cancels them), flushes, and returns nil on a clean stop.
//
// When ctx ends while a read of r is blocked, that read cannot be interrupted: Serve returns
// anyway and the blocked read is abandoned (its goroutine ends when r next returns); nothing
// read after the stop is served or answered.
func (s *Server) Serve(ctx context.Context, r io.Reader, w io.Writer) error {
	if s.initErr != nil {
		return fmt.Errorf("serve: %w", s.initErr)
	}
	// Handlers outlive ctx on purpose: a stop first lets them finish, and only cancels them
	// when the drain grace runs out.
	handlerCtx, cancelHandlers := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelHandlers()
	ss := newSession(s, w, handlerCtx)

	readDone := make(chan error, 1)
	go ss.readLoop(newLineReader(r, s.opts.MaxMessageBytes), readDone)
	var readErr error
	select {
	case readErr = <-readDone:
	case <-ctx.Done():
		s.opts.Logger.Debug("stopping: context done", "cause", context.Cause(ctx))
	case <-ss.writeFailed:
		s.opts.Logger.Debug("stopping: output failed")
	}
	ss.stop()
	ss.drain(cancelHandlers)
	if err := ss.out.close(); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	if readErr != nil {
		return fmt.Errorf("serve: %w", readErr)
	}
	return nil
}

// session is the state of one Serve call: the negotiated era, the requests in flight, the
// worker slots, and the output stream.
type session struct {
	s           *Server
	out         *outWriter
	handlerCtx  context.Context
	sem         chan struct{} // one slot per worker
	writeFailed chan struct{} // closed on the first output failure
	failOnce    sync.Once

	mu          sync.Mutex
	stopped     bool   // no new work is admitted
	initialized bool   // initialize was answered: the process is legacy for good
	version     string // the negotiated legacy revision
	inflight    map[string]*call
	inflightArg int // bytes of arguments held by calls in flight
	calls       sync.WaitGroup

	// next is the call the frame being served admitted first: the goroutine that read the
	// frame runs it, once another goroutine has taken over reading (readLoop). Only the
	// reading goroutine touches it.
	next func()
}

// Bounds on the calls held in flight (running or waiting for a worker): past them a call is
// refused with an error rather than queued, so memory stays bounded and the reader never
// blocks, which keeps ping and cancellation responsive under any load.
const (
	minInflightCalls    = 64
	inflightPerWorker   = 16
	maxInflightArgBytes = 64 << 20
)

func newSession(s *Server, w io.Writer, handlerCtx context.Context) *session {
	return &session{
		s:           s,
		out:         &outWriter{w: w},
		handlerCtx:  handlerCtx,
		sem:         make(chan struct{}, s.opts.Workers),
		writeFailed: make(chan struct{}),
		inflight:    make(map[string]*call),
	}
}

// maxInflight is how many calls may be in flight at once.
func (ss *session) maxInflight() int {
	return max(minInflightCalls, ss.s.opts.Workers*inflightPerWorker)
}

// readLoop reads frames until EOF, a read failure, or a stop, and sends how reading ended to
// done. When a frame admits a call, the goroutine that read it hands the reading on to a new
// goroutine and runs the call itself: the call starts at once instead of waiting for another
// thread to be woken and scheduled (most of a warm call's round trip), and reading goes on
// beside it as before, so cancellations and pings are read while the call runs.
func (ss *session) readLoop(lr *lineReader, done chan<- error) {
	for {
		line, tooLong, err := lr.next()
		if err == io.EOF {
			done <- nil
			return
		}
		if err != nil {
			done <- fmt.Errorf("read input: %w", err)
			return
		}
		if ss.isStopped() {
			done <- nil
			return
		}
		if tooLong {
			ss.send(errorResponse(nullID, &Error{
				Code:    CodeInvalidRequest,
				Message: fmt.Sprintf("invalid request: message exceeds the %d-byte limit and was discarded", ss.s.opts.MaxMessageBytes),
				Data:    map[string]int{"maxBytes": ss.s.opts.MaxMessageBytes},
			}))
			continue
		}
		ss.handleLine(line)
		if run := ss.next; run != nil {
			ss.next = nil
			go ss.readLoop(lr, done)
			run()
			return
		}
	}
}

func (ss *session) isStopped() bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.stopped
}

// stop admits no further work.
func (ss *session) stop() {
	ss.mu.Lock()
	ss.stopped = true
	ss.mu.Unlock()
}

// drain waits for calls in flight, cancels them when the grace runs out, and waits once more
// (as long again) for them to notice.
func (ss *session) drain(cancel context.CancelFunc) {
	done := make(chan struct{})
	go func() {
		ss.calls.Wait()
		close(done)
	}()
	grace := ss.s.opts.DrainTimeout
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case <-done:
		return
	case <-timer.C:
	}
	ss.s.opts.Logger.Warn("drain grace over: cancelling calls in flight", "grace", grace)
	cancel()
	timer.Reset(grace)
	select {
	case <-done:
	case <-timer.C:
		ss.s.opts.Logger.Error("calls in flight ignored cancellation; their answers are dropped")
	}
}

// send writes one response frame.
func (ss *session) send(r *response) {
	if r == nil {
		return
	}
	ss.sendFrame(r)
}

// sendFrame encodes v and writes it whole, always as valid UTF-8. A value that cannot be encoded
// is a server bug: it is logged and, for a response, replaced by an internal error so the
// request is still answered.
func (ss *session) sendFrame(v any) {
	frame, err := encodeLine(v)
	if err != nil {
		ss.s.opts.Logger.Error("cannot encode outgoing message", "err", err)
		r, ok := v.(*response)
		if !ok {
			return
		}
		if frame, err = encodeLine(errorResponse(r.ID, internalError())); err != nil {
			return
		}
	}
	if !utf8.Valid(frame) {
		// Only a handler's raw JSON can carry such bytes, and only inside strings (JSON allows
		// nothing but ASCII outside them), so replacing them keeps the frame valid JSON.
		ss.s.opts.Logger.Warn("outgoing message held bytes that are not UTF-8; replaced with U+FFFD")
		frame = bytes.ToValidUTF8(frame, []byte("\uFFFD"))
	}
	if err := ss.out.write(frame); err != nil {
		ss.failOnce.Do(func() {
			ss.s.opts.Logger.Error("output stream failed", "err", err)
			close(ss.writeFailed)
		})
	}
}

// internalError is what the client sees of any server-side failure: the detail stays in the log.
func internalError() *Error {
	return &Error{Code: CodeInternal, Message: "internal error"}
}
