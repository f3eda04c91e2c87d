package otlp

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"
)

// DefaultAddr is where OpenTelemetry exporters send OTLP/HTTP by default, on loopback only.
const DefaultAddr = "127.0.0.1:4318"

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
	return ln, nil
}

func isLoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// NewServer wraps h in an http.Server with timeouts, so a slow or stalled client cannot hold
// a connection and its buffers forever.
func NewServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
	}
}
