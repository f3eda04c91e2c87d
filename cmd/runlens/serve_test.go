package main

import (
	"bytes"
	"io"
	"math"
	"net"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runlens/runlens/internal/gcpolicy"
)

// syncBuffer is a bytes.Buffer the server's logger and the test may use at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestServeSaysOnStderrThatTheReceiverPortIsTaken(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	busy := ln.Addr().String()
	root := t.TempDir()

	stdin, feed := io.Pipe()
	var stdout, stderr syncBuffer
	exited := make(chan int, 1)
	go func() {
		exited <- run([]string{"serve", "--project-root", root, "--receiver", busy, "--receiver-grpc", "off"}, stdin, &stdout, &stderr)
	}()
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(stderr.String(), "otlp receiver address in use") {
		if time.Now().After(deadline) {
			feed.Close()
			t.Fatalf("serve did not say the receiver port %s is taken; stderr:\n%s", busy, stderr.String())
		}
		time.Sleep(10 * time.Millisecond) // polling with a deadline
	}
	feed.Close()
	if code := <-exited; code != 0 {
		t.Errorf("serve exited %d after stdin closed, want 0", code)
	}
	e := stderr.String()
	if !strings.Contains(e, busy) || !strings.Contains(e, "reading the store only") {
		t.Errorf("stderr does not name the port and what serve does instead:\n%s", e)
	}
}

func TestServeBoundsItsGoMemoryUnlessGOMEMLIMITIsSet(t *testing.T) {
	for _, c := range []struct {
		name, env string
		want      int64
	}{
		{"without GOMEMLIMIT the soft limit is serve's own", "", gcpolicy.ServeLimit},
		{"a GOMEMLIMIT of the user's is left alone", "1GiB", math.MaxInt64},
	} {
		t.Run(c.name, func(t *testing.T) {
			defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
			defer debug.SetGCPercent(debug.SetGCPercent(100))
			t.Setenv("GOMEMLIMIT", c.env)
			var out, errOut bytes.Buffer
			// An empty stdin ends the session at once.
			code := run([]string{"serve", "--project-root", t.TempDir(), "--receiver", "off"}, strings.NewReader(""), &out, &errOut)
			if code != 0 {
				t.Fatalf("serve exited %d: %s", code, errOut.String())
			}
			if got := debug.SetMemoryLimit(-1); got != c.want {
				t.Errorf("memory limit after serve = %d, want %d", got, c.want)
			}
		})
	}
}
