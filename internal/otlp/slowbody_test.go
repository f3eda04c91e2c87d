package otlp

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// stallUpload opens a connection to addr and starts a protobuf upload of a 100 kB body, of
// which it sends only the first kilobyte.
func stallUpload(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	head := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: %s\r\nContent-Length: 100000\r\n\r\n", TracesPath, addr, ctProto)
	if _, err := c.Write(append([]byte(head), bytes.Repeat([]byte{0x0a}, 1000)...)); err != nil {
		t.Fatal(err)
	}
	return c
}

// serveCounting serves h on a loopback listener and reports each request on entered as it
// reaches the receiver.
func serveCounting(t *testing.T, h http.Handler, entered chan<- struct{}) string {
	t.Helper()
	ln, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		h.ServeHTTP(w, r)
	}))
	go srv.Serve(ln) //nolint:errcheck // ends with ErrServerClosed at cleanup
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// Sixteen senders that open an upload, send a part of its body and stall keep nobody out: a
// good export beside them is acknowledged at once, since a request takes a decode slot only
// with its whole body; and each stalled upload is answered 408 (or closed) once its body is
// overdue, not held for ever.
func TestStalledUploadsDoNotBlockIngest(t *testing.T) {
	const stalled = 16
	const bodyTimeout = 3 * time.Second
	_, st := startReceiver(t, Options{})
	entered := make(chan struct{}, stalled+1)
	addr := serveCounting(t, NewHandler(st, Options{BodyTimeout: bodyTimeout}), entered)

	started := time.Now()
	conns := make([]net.Conn, stalled)
	for i := range conns {
		conns[i] = stallUpload(t, addr)
	}
	for range stalled {
		<-entered
	}
	client := &http.Client{Timeout: 2 * time.Second}
	sent := time.Now()
	resp, err := client.Post("http://"+addr+TracesPath, ctProto, bytes.NewReader(protoTraces(t, makeTraces("a", 1, 0, 3))))
	if err != nil {
		t.Fatalf("a good export beside %d stalled uploads: %v", stalled, err)
	}
	readAll(t, resp)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("a good export beside %d stalled uploads: status %d", stalled, resp.StatusCode)
	}
	t.Logf("a good export beside %d stalled uploads answered in %s", stalled, time.Since(sent).Round(time.Millisecond))
	if n := countRows(t, st, "otel_traces"); n != 3 {
		t.Errorf("stored %d spans, want 3", n)
	}

	for i, c := range conns {
		if err := c.SetReadDeadline(started.Add(bodyTimeout + 20*time.Second)); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		switch {
		case err == nil:
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(body), "in time") {
				t.Errorf("stalled upload %d: status %d %q, want 408 saying the body came too late", i, resp.StatusCode, body)
			}
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), isReset(err):
		default:
			t.Fatalf("stalled upload %d is still open: %v", i, err)
		}
	}
	if took := time.Since(started); took < bodyTimeout {
		t.Errorf("the stalled uploads were answered after %s, before the %s body timeout", took, bodyTimeout)
	}
}

// However many senders stall mid-body, the receiver holds at most bodyReadsPerSlot ×
// MaxConcurrent bodies (the listener bounds the connections, this the memory behind them):
// twelve stalled uploads against one decode slot have four bodies read while the other eight
// wait unread, and each in turn is answered once overdue.
func TestStalledUploadsHoldABoundedNumberOfBodies(t *testing.T) {
	const stalled = 12
	_, st := startReceiver(t, Options{})
	rc := newReceiver(st, Options{MaxConcurrent: 1, BodyTimeout: time.Second})
	entered := make(chan struct{}, stalled)
	addr := serveCounting(t, rc.handler(), entered)
	conns := make([]net.Conn, stalled)
	for i := range conns {
		conns[i] = stallUpload(t, addr)
	}
	for range stalled {
		<-entered
	}
	waitFor(t, 5*time.Second, "four bodies to be read", func() bool { return len(rc.reads) == bodyReadsPerSlot })
	if cap(rc.reads) != bodyReadsPerSlot {
		t.Fatalf("%d bodies may be read at once, want %d", cap(rc.reads), bodyReadsPerSlot)
	}
	for i, c := range conns {
		if err := c.SetReadDeadline(time.Now().Add(30 * time.Second)); err != nil {
			t.Fatal(err)
		}
		if _, err := http.ReadResponse(bufio.NewReader(c), nil); err != nil && !errors.Is(err, io.EOF) && !isReset(err) {
			t.Fatalf("stalled upload %d: %v", i, err)
		}
	}
	waitFor(t, 5*time.Second, "the reads to end", func() bool { return len(rc.reads) == 0 })
}
