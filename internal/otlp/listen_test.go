package otlp

import (
	"errors"
	"net"
	"testing"
)

func TestListenAcceptsOnlyLoopback(t *testing.T) {
	cases := []struct {
		name string
		addr string
		want error
	}{
		{"IPv4 loopback is accepted", "127.0.0.1:0", nil},
		{"localhost is accepted", "localhost:0", nil},
		{"every interface is refused", ":0", ErrNotLoopback},
		{"the IPv4 wildcard is refused", "0.0.0.0:0", ErrNotLoopback},
		{"a routable address is refused", "192.0.2.1:4318", ErrNotLoopback},
		{"a host name is refused", "example.com:4318", ErrNotLoopback},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ln, err := Listen(c.addr)
			if ln != nil {
				defer ln.Close()
			}
			if !errors.Is(err, c.want) {
				t.Fatalf("Listen(%q) = %v, want %v", c.addr, err, c.want)
			}
			if err == nil && !ln.Addr().(*net.TCPAddr).IP.IsLoopback() {
				t.Errorf("listening on %v", ln.Addr())
			}
		})
	}
}

func TestListenReportsAPortInUse(t *testing.T) {
	first, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	second, err := Listen(first.Addr().String())
	if err == nil {
		second.Close()
	}
	if !errors.Is(err, ErrAddrInUse) {
		t.Errorf("a second Listen on %s = %v, want ErrAddrInUse", first.Addr(), err)
	}
}
