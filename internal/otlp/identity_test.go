package otlp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"testing"
)

// TestProbeTellsTwoStoresApart serves two receivers into two stores: each answers the id of its
// own store, the ids differ, and neither is the store's instance id itself.
func TestProbeTellsTwoStoresApart(t *testing.T) {
	var ids []string
	for range 2 {
		_, st := startReceiver(t, Options{})
		// Serve the same store again, this time saying whose it is.
		url := serveSink(t, st, Options{StoreID: StoreID(st.InstanceID())})
		id, err := Probe(context.Background(), url[len("http://"):])
		if err != nil {
			t.Fatalf("probe: %v", err)
		}
		if id.Service != "runlens" || id.Store != StoreID(st.InstanceID()) || id.Store == st.InstanceID() {
			t.Fatalf("identity %+v, want runlens with the hashed id of store %s", id, st.InstanceID())
		}
		if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(id.Store) {
			t.Errorf("store id %q is not 32 hex digits", id.Store)
		}
		ids = append(ids, id.Store)
	}
	if ids[0] == ids[1] {
		t.Errorf("two stores publish the same id %s", ids[0])
	}
}

func TestProbeSaysWhenNothingOrSomethingElseListens(t *testing.T) {
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	freeAddr := free.Addr().String()
	free.Close()

	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"service":"something"}`)
	}))
	t.Cleanup(other.Close)

	garbage, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { garbage.Close() })
	go func() {
		for {
			c, err := garbage.Accept()
			if err != nil {
				return
			}
			fmt.Fprint(c, "SSH-2.0-OpenSSH_9.6\r\n")
			c.Close()
		}
	}()

	noIdentity, _ := startReceiver(t, Options{}) // a receiver that does not say whose it is

	tests := []struct {
		name string
		addr string
		want error
	}{
		{"a free port has no listener", freeAddr, ErrNoListener},
		{"an HTTP server that is not runlens is told apart", other.Listener.Addr().String(), ErrNotRunlens},
		{"a listener that does not speak HTTP is not runlens", garbage.Addr().String(), ErrNotRunlens},
		{"a receiver without an identity is not this runlens", noIdentity[len("http://"):], ErrNotRunlens},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Probe(context.Background(), tt.addr)
			if !errors.Is(err, tt.want) {
				t.Fatalf("probe: %v, want %v", err, tt.want)
			}
		})
	}
}

func TestIdentityIsAnsweredToLoopbackClientsOnly(t *testing.T) {
	h := NewHandler(&failingSink{}, Options{StoreID: StoreID("x")})
	for _, tt := range []struct {
		remote string
		want   int
	}{
		{"127.0.0.1:50000", http.StatusOK},
		{"[::1]:50000", http.StatusOK},
		{"192.0.2.7:50000", http.StatusForbidden},
	} {
		req := httptest.NewRequest(http.MethodGet, "http://127.0.0.1:4318"+IdentityPath, nil)
		req.RemoteAddr = tt.remote
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != tt.want {
			t.Errorf("identity from %s: %d %s, want %d", tt.remote, rec.Code, rec.Body, tt.want)
		}
	}
}
