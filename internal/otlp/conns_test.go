package otlp

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/runlens/runlens/internal/telemetry/store"
)

// silentConns is how many connections the misbehaving sender opens.
const silentConns = 1000

// A sender that opens a thousand connections and sends nothing holds a bounded number of them
// (the listener accepts DefaultMaxConnections; the rest wait in the kernel's queue), with
// bounded goroutines and memory; each silent connection is closed after the handshake timeout,
// the queued ones included; and then the receiver serves an export and its goroutines go back
// to what they were — for each protocol.
func TestAThousandSilentConnectionsAreBounded(t *testing.T) {
	const handshake = 500 * time.Millisecond
	protocols := []struct {
		name string
		// serve starts a receiver into st with the handshake timeout, returning its
		// listener and a function making one export over a fresh connection.
		serve func(t *testing.T, st *store.Store) (*limitListener, func() error)
		// perConn bounds the goroutines and heap bytes one silent connection may cost.
		perConnGoroutines int
		perConnBytes      uint64
	}{
		{name: "over HTTP", perConnGoroutines: 2, perConnBytes: 64 << 10, serve: func(t *testing.T, st *store.Store) (*limitListener, func() error) {
			ln, err := Listen("127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			srv := NewServer(NewHandler(st, Options{}))
			srv.ReadHeaderTimeout = handshake
			go srv.Serve(ln) //nolint:errcheck // ends with ErrServerClosed at cleanup
			t.Cleanup(func() { srv.Close() })
			url := "http://" + ln.Addr().String() + TracesPath
			return ln.(*limitListener), func() error {
				client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}
				resp, err := client.Post(url, ctProto, bytes.NewReader(encodeProto(makeTraces("a", 1, 0, 3))))
				if err != nil {
					return err
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					return errors.New(resp.Status)
				}
				return nil
			}
		}},
		{name: "over gRPC", perConnGoroutines: 3, perConnBytes: 160 << 10, serve: func(t *testing.T, st *store.Store) (*limitListener, func() error) {
			addr, ln := serveGRPC(t, st, Options{HandshakeTimeout: handshake})
			return ln, func() error {
				cc := dialGRPC(t, addr)
				defer cc.Close()
				_, err := exportTraces(t, cc, makeTraces("a", 1, 0, 3))
				return err
			}
		}},
	}
	for _, p := range protocols {
		t.Run(p.name, func(t *testing.T) {
			_, st := startReceiver(t, Options{})
			ln, export := p.serve(t, st)
			baseGoroutines := runtime.NumGoroutine()
			baseHeap := heapInUse()

			conns := make([]net.Conn, 0, silentConns)
			t.Cleanup(func() {
				for _, c := range conns {
					c.Close()
				}
			})
			for range silentConns {
				c, err := net.DialTimeout("tcp", ln.Addr().String(), 5*time.Second)
				if err != nil {
					t.Fatalf("connection %d: %v", len(conns), err)
				}
				conns = append(conns, c)
			}
			waitFor(t, 10*time.Second, "the listener to hold its limit", func() bool { return ln.open() == DefaultMaxConnections })
			goroutines, heap := runtime.NumGoroutine()-baseGoroutines, heapInUse()-min(baseHeap, heapInUse())
			t.Logf("%d silent connections: %d held, +%d goroutines, +%d KiB heap", silentConns, ln.open(), goroutines, heap>>10)
			if limit := DefaultMaxConnections*p.perConnGoroutines + 64; goroutines > limit {
				t.Errorf("+%d goroutines for %d silent connections, want at most %d", goroutines, silentConns, limit)
			}
			if limit := uint64(DefaultMaxConnections)*p.perConnBytes + 8<<20; heap > limit {
				t.Errorf("+%d KiB heap for %d silent connections, want at most %d KiB", heap>>10, silentConns, limit>>10)
			}

			// Every silent connection, queued ones included, is closed by the server.
			deadline := time.Now().Add(60 * time.Second)
			buf := make([]byte, 1)
			for i, c := range conns {
				if err := c.SetReadDeadline(deadline); err != nil {
					t.Fatal(err)
				}
				for {
					_, err := c.Read(buf) // a gRPC server writes its settings first; read past them
					if err == nil {
						continue
					}
					var ne net.Error
					if errors.As(err, &ne) && ne.Timeout() {
						t.Fatalf("silent connection %d is still open after %s", i, time.Until(deadline)+60*time.Second)
					}
					if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) && !isReset(err) {
						t.Fatalf("silent connection %d: %v", i, err)
					}
					break
				}
				c.Close()
			}
			if err := export(); err != nil {
				t.Fatalf("an export after the silent connections: %v", err)
			}
			waitFor(t, 10*time.Second, "the goroutines to go back to their number before", func() bool {
				return runtime.NumGoroutine() <= baseGoroutines+8
			})
			if n := countRows(t, st, "otel_traces"); n != 3 {
				t.Errorf("stored %d spans, want 3", n)
			}
		})
	}
}

func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// isReset reports a connection reset by the peer, which closing an unread connection may give.
func isReset(err error) bool { return errors.Is(err, syscall.ECONNRESET) }

// waitFor polls cond until it holds, failing t after timeout.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// The limit listener gives a slot back when a connection closes, and an Accept waiting for a
// slot ends when the listener is closed.
func TestLimitListenerReleasesSlotsAndUnblocksOnClose(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := limitConnections(inner, 1)
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	c, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	if ln.open() != 1 {
		t.Fatalf("%d open, want 1", ln.open())
	}
	c.Close()
	c.Close() // a second close gives nothing back twice
	if ln.open() != 0 {
		t.Fatalf("%d open after close, want 0", ln.open())
	}
	held, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	c2, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	accepted := make(chan error, 1)
	go func() {
		_, err := ln.Accept() // waits: the only slot is taken
		accepted <- err
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	select {
	case err := <-accepted:
		t.Fatalf("Accept returned %v while the only slot was taken", err)
	case <-ctx.Done():
	}
	ln.Close()
	if err := <-accepted; !errors.Is(err, net.ErrClosed) {
		t.Errorf("Accept after Close: %v, want net.ErrClosed", err)
	}
}
