package app

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/runlens/runlens/internal/config"
)

// appOn assembles runlens for a fresh project whose OTLP/HTTP receiver address is addr.
func appOn(t *testing.T, addr string) *App {
	t.Helper()
	root := t.TempDir()
	cfg, err := LoadConfig(root, func(string) string { return "" }, config.Overrides{ProjectRoot: root, Receiver: addr, ReceiverGRPC: "off"})
	if err != nil {
		t.Fatal(err)
	}
	a, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// clientEnd connects to a listener and returns the client's local address, the connection
// and the server's end of it.
func clientEnd(t *testing.T) (string, net.Conn, net.Conn) {
	t.Helper()
	srv, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := srv.Accept()
		if err == nil {
			accepted <- c
		}
	}()
	c, err := net.Dial("tcp", srv.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	peer := <-accepted
	t.Cleanup(func() { c.Close(); peer.Close() })
	return c.LocalAddr().String(), c, peer
}

func TestThePortDiagnosisTellsAConnectionFromNothing(t *testing.T) {
	t.Run("a port held by an open client connection is taken, not free", func(t *testing.T) {
		addr, _, _ := clientEnd(t)
		s := appOn(t, addr).ReceiverStatus(context.Background())
		if s.State != ReceiverForeign || !strings.Contains(s.Note, "connection") || !strings.Contains(s.Fix, "own port") {
			t.Errorf("status of %s held by a connection = %+v; want foreign, naming the connection, with a port fix", addr, s)
		}
	})
	t.Run("a client's port in TIME_WAIT is taken, as a bind finds", func(t *testing.T) {
		addr, c, peer := clientEnd(t)
		c.Close() // the client closes first, so its end lingers in TIME_WAIT once the peer closes
		_, _ = io.ReadAll(peer)
		peer.Close()
		waitTCPState(t, addr, tcpTimeWait)
		s := appOn(t, addr).ReceiverStatus(context.Background())
		if s.State != ReceiverForeign || !strings.Contains(s.Note, "TIME_WAIT") {
			t.Errorf("status of %s in TIME_WAIT = %+v; want foreign, saying a closed connection may linger", addr, s)
		}
		if ln, err := net.Listen("tcp", addr); err == nil {
			ln.Close()
			t.Errorf("a receiver could listen on %s after all: the diagnosis is wrong", addr)
		}
	})
	t.Run("a previous receiver's port in TIME_WAIT is free", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		served, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		served.Close() // the receiver's end closes first and lingers in TIME_WAIT
		_, _ = io.ReadAll(c)
		c.Close()
		ln.Close()
		waitTCPState(t, addr, tcpTimeWait)
		s := appOn(t, addr).ReceiverStatus(context.Background())
		if s.State != ReceiverOff || !strings.Contains(s.Note, "Nothing listens") {
			t.Errorf("status of %s = %+v; want off: a receiver can listen there", addr, s)
		}
		if ln, err := net.Listen("tcp", addr); err != nil {
			t.Errorf("a receiver cannot listen on %s: %v", addr, err)
		} else {
			ln.Close()
		}
	})
}

// tcpTimeWait is TIME_WAIT's code in /proc/net/tcp.
const tcpTimeWait = "06"

// waitTCPState waits until a socket whose local address is addr is in state (Linux's
// /proc/net/tcp); elsewhere the test is skipped, except under CI=true, where it fails.
func waitTCPState(t *testing.T, addr, state string) {
	t.Helper()
	_, p, _ := net.SplitHostPort(addr)
	n, _ := strconv.Atoi(p)
	local := fmt.Sprintf("0100007F:%04X", n)
	deadline := time.Now().Add(5 * time.Second)
	for {
		raw, err := os.ReadFile("/proc/net/tcp")
		if err != nil {
			// CI runs on Linux, where the file is always there: its absence is a failure.
			if os.Getenv("CI") == "true" {
				t.Fatalf("read socket states: %v", err)
			}
			t.Skip("no /proc/net/tcp to see socket states")
		}
		for _, line := range strings.Split(string(raw), "\n") {
			f := strings.Fields(line)
			if len(f) > 3 && f[1] == local && f[3] == state {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no socket on %s reached state %s", addr, state)
		}
		time.Sleep(5 * time.Millisecond) // polling the kernel's table with a deadline
	}
}

func TestProposedPortsArePairedFreeAndOutsideTheEphemeralRange(t *testing.T) {
	a := appOn(t, "127.0.0.1:4318")
	h, g := a.ProposePorts()
	hp, gp := port(t, h), port(t, g)
	if hp < ProposedHTTPBase || hp >= ProposedHTTPBase+proposedSpan || gp != hp+ProposedGRPCBase-ProposedHTTPBase {
		t.Errorf("proposed %s and %s; want HTTP in [%d, %d) and gRPC the same offset above %d", h, g, ProposedHTTPBase, ProposedHTTPBase+proposedSpan, ProposedGRPCBase)
	}
	if gp >= 32768 {
		t.Errorf("proposed gRPC port %d lies in the ephemeral range", gp)
	}
	if h2, g2 := a.ProposePorts(); h2 != h || g2 != g {
		t.Errorf("a second proposal differs: %s %s, then %s %s", h, g, h2, g2)
	}
}

func port(t *testing.T, addr string) int {
	t.Helper()
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(p)
	return n
}

func TestAppStatusListsTheReceiversThatAreOn(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0") // a program that is not runlens, on the address
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	go func() { // it hangs up on everyone
		for {
			c, err := busy.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	tests := []struct {
		name      string
		overrides config.Overrides
		want      []string // protocol:state
	}{
		{"both receivers are listed, HTTP first", config.Overrides{Receiver: busy.Addr().String(), ReceiverGRPC: busy.Addr().String()}, []string{"http:foreign", "grpc:foreign"}},
		{"a receiver turned off is left out, with its advice", config.Overrides{Receiver: busy.Addr().String(), ReceiverGRPC: "off"}, []string{"http:foreign"}},
		{"with both off there is nothing to say", config.Overrides{Receiver: "off"}, nil},
		{"another source takes no advice about the embedded receivers", config.Overrides{Receiver: busy.Addr().String(), ReceiverGRPC: "off", Telemetry: "jaeger+http://127.0.0.1:1"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			tt.overrides.ProjectRoot = root
			a, err := Open(root, func(string) string { return "" }, tt.overrides, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			var got []string
			for _, r := range a.receiversAnswer(context.Background()) {
				got = append(got, string(r.Protocol)+":"+string(r.State))
			}
			if strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Errorf("receivers = %v, want %v", got, tt.want)
			}
		})
	}
}
