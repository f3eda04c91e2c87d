package otlp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"
)

// IdentityPath is where a runlens receiver says whose it is. Two projects configured with the
// same port would otherwise share one receiver silently: the second project's app would send
// its telemetry into the first project's store. A process that finds its port taken asks here
// and compares the answer with its own store.
const IdentityPath = "/runlens/identity"

// identityService is the service name every runlens receiver answers with.
const identityService = "runlens"

// Identity is a receiver's answer at IdentityPath.
type Identity struct {
	// Service is always "runlens".
	Service string `json:"service"`
	// Store is the opaque id of the store the receiver writes (StoreID).
	Store string `json:"store"`
}

// StoreID turns a store's random instance id into the id a receiver publishes. Two processes
// writing one file publish the same id, two files different ones; the id reveals neither the
// file's path nor the instance id itself (which also keys the store's cursors).
func StoreID(instanceID string) string {
	sum := sha256.Sum256([]byte("runlens receiver store\x00" + instanceID))
	return hex.EncodeToString(sum[:16])
}

// identityHandler answers GET IdentityPath for the store with id store. Only loopback
// clients are answered (the guard has already refused foreign Host and Origin headers): a
// receiver asked to listen beyond loopback still tells nobody else which store it writes.
func identityHandler(store string) http.Handler {
	body, _ := json.Marshal(Identity{Service: identityService, Store: store})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			writePlain(w, http.StatusMethodNotAllowed, "only GET is supported")
			return
		}
		if !isLoopbackRemote(r.RemoteAddr) {
			writePlain(w, http.StatusForbidden, "refused: the identity is answered to loopback clients only")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write(body)
	})
}

// isLoopbackRemote reports whether a request's remote address (ip:port) is loopback.
func isLoopbackRemote(remoteAddr string) bool {
	ap, err := netip.ParseAddrPort(remoteAddr)
	return err == nil && ap.Addr().Unmap().IsLoopback()
}

// Errors Probe returns, besides transport failures.
var (
	// ErrNoListener: nothing accepts connections at the address.
	ErrNoListener = errors.New("nothing listens at the receiver address")
	// ErrNotRunlens: something listens at the address but does not answer as a runlens
	// receiver (another program, or a runlens too old to say).
	ErrNotRunlens = errors.New("the listener is not a runlens receiver")
)

// probeTimeout bounds one identity request: a receiver answers it from memory.
const probeTimeout = 2 * time.Second

// Probe asks the receiver at addr (host:port) whose it is. It returns ErrNoListener when
// nothing listens, ErrNotRunlens when the answer is not a runlens identity (or not HTTP), and
// another error when the listener did not answer in time.
func Probe(ctx context.Context, addr string) (Identity, error) {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	client := &http.Client{Transport: &http.Transport{
		Proxy:             nil, // a loopback receiver is never reached through a proxy
		DisableKeepAlives: true,
		DialContext:       (&net.Dialer{}).DialContext,
	}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+IdentityPath, nil)
	if err != nil {
		return Identity{}, fmt.Errorf("probe %s: %w", addr, err)
	}
	resp, err := client.Do(req)
	var ne net.Error
	switch {
	case err == nil:
	case errors.Is(err, syscall.ECONNREFUSED):
		return Identity{}, fmt.Errorf("probe %s: %w", addr, ErrNoListener)
	case ctx.Err() != nil || (errors.As(err, &ne) && ne.Timeout()):
		// A busy receiver may answer late; the caller cannot tell who holds the port.
		return Identity{}, fmt.Errorf("probe %s: no answer: %w", addr, err)
	default:
		// It accepted the connection but did not speak HTTP back.
		return Identity{}, fmt.Errorf("probe %s: %w: %v", addr, ErrNotRunlens, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return Identity{}, fmt.Errorf("probe %s: HTTP %d: %w", addr, resp.StatusCode, ErrNotRunlens)
	}
	var id Identity
	if err := json.NewDecoder(io.LimitReader(resp.Body, 4<<10)).Decode(&id); err != nil || id.Service != identityService || id.Store == "" {
		return Identity{}, fmt.Errorf("probe %s: %w", addr, ErrNotRunlens)
	}
	return id, nil
}
