package otlp

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"syscall"
	"time"
)

// Where OpenTelemetry exporters send by default, on loopback only.
const (
	// DefaultAddr is the OTLP/HTTP address.
	DefaultAddr = "127.0.0.1:4318"
	// DefaultGRPCAddr is the OTLP/gRPC address.
	DefaultGRPCAddr = "127.0.0.1:4317"
)

// Connection bounds, the same for both protocols.
const (
	// DefaultMaxConnections bounds the connections one listener holds open. Further ones wait
	// in the kernel's accept queue, costing the process nothing, until a held one closes; with
	// DefaultHandshakeTimeout a sender that opens connections and stays silent cannot hold
	// them for long.
	DefaultMaxConnections = 256
	// DefaultHandshakeTimeout bounds how long a new connection may stay silent: the request
	// headers (HTTP) or the HTTP/2 preface (gRPC) must arrive within it.
	DefaultHandshakeTimeout = 10 * time.Second
	// idleTimeout closes a kept-alive connection on which nothing was sent for this long.
	idleTimeout = 2 * time.Minute
)

// Errors callers branch on.
var (
	// ErrNotLoopback refuses an address other processes on the network could reach: telemetry
	// carries application data, and the receiver has no authentication.
	ErrNotLoopback = errors.New("receiver address is not loopback")
	// ErrAddrInUse means another process (often another runlens) already listens there; a
	// serve process then reads the store without hosting the receiver.
	ErrAddrInUse = errors.New("receiver address already in use")
)

// Listen opens a TCP listener on addr, which must name a loopback host: an IP literal such as
// 127.0.0.1 or ::1, or "localhost". An empty host (":4318") means every interface and is
// refused like any other non-loopback address; use ListenNonLoopback when that is intended.
// The listener holds at most DefaultMaxConnections connections open at once.
func Listen(addr string) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("receiver address %q: %w", addr, err)
	}
	if !isLoopbackHost(host) {
		return nil, fmt.Errorf("receiver address %q: %w", addr, ErrNotLoopback)
	}
	return listen(addr)
}

// ListenNonLoopback opens a listener on any address, for a user who explicitly asked to
// receive telemetry from other machines.
func ListenNonLoopback(addr string) (net.Listener, error) { return listen(addr) }

func listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return nil, fmt.Errorf("listen on %s: %w: %w", addr, ErrAddrInUse, err)
		}
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	return limitConnections(ln, DefaultMaxConnections), nil
}

func isLoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// NewServer wraps h in an http.Server with timeouts, so a slow or stalled client cannot hold
// a connection and its buffers forever. The receiver's handler moves the read deadline itself
// once a body starts (Options.BodyTimeout), within the same 60 s.
func NewServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: DefaultHandshakeTimeout,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
	}
}

// maxHeaderBytes bounds a request's headers (HTTP) or header list (gRPC).
const maxHeaderBytes = 64 << 10

// limitListener accepts a connection only while fewer than its limit are open.
type limitListener struct {
	net.Listener
	slots     chan struct{}
	closed    chan struct{}
	closeOnce sync.Once
}

func limitConnections(ln net.Listener, n int) *limitListener {
	return &limitListener{Listener: ln, slots: make(chan struct{}, n), closed: make(chan struct{})}
}

// Accept waits for a free slot, then for a connection.
func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	case <-l.closed:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &limitedConn{Conn: c, release: func() { <-l.slots }}, nil
}

// Close stops accepting, also for an Accept waiting for a slot.
func (l *limitListener) Close() error {
	l.closeOnce.Do(func() { close(l.closed) })
	return l.Listener.Close()
}

// open returns the number of connections accepted and not yet closed.
func (l *limitListener) open() int { return len(l.slots) }

// limitedConn gives its slot back when closed, once.
type limitedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
