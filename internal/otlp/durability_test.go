package otlp

import (
	"bufio"
	"context"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/runlens/runlens/internal/telemetry/store"
)

// exportFunc sends batch n to a helper receiver process and reports whether it was
// acknowledged, and whether the receiver is gone (the connection failed).
type exportFunc func(n uint64) (acked, gone bool)

// durabilityProtocols open, per sender and per receiver process, a way of exporting batches.
var durabilityProtocols = []struct {
	name string
	open func(t *testing.T, a helperAddrs, spans int) exportFunc
}{
	{"over HTTP", func(t *testing.T, a helperAddrs, spans int) exportFunc {
		return func(n uint64) (bool, bool) {
			body := encodeProto(makeTraces("durable", n, 0, spans))
			req, _ := http.NewRequest(http.MethodPost, "http://"+a.http+TracesPath, strings.NewReader(string(body)))
			req.Header.Set("Content-Type", ctProto)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return false, true
			}
			resp.Body.Close()
			return resp.StatusCode == http.StatusOK, false
		}
	}},
	{"over gRPC", func(t *testing.T, a helperAddrs, spans int) exportFunc {
		client := ptraceotlp.NewGRPCClient(dialGRPC(t, a.grpc))
		return func(n uint64) (bool, bool) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_, err := client.Export(ctx, ptraceotlp.NewExportRequestFromTraces(makeTraces("durable", n, 0, spans)))
			if status.Code(err) == codes.Unavailable || status.Code(err) == codes.DeadlineExceeded {
				return false, true
			}
			return err == nil, false
		}
	}},
}

// An OK means committed: the receiver process is killed with SIGKILL at a random moment while
// batches are in flight, twice, and every batch it acknowledged is in the store afterwards,
// whole (a batch is one transaction, so none is stored in part) — over each protocol.
func TestAcknowledgedBatchesSurviveSIGKILL(t *testing.T) {
	for _, p := range durabilityProtocols {
		t.Run(p.name, func(t *testing.T) {
			testSurviveSIGKILL(t, p.open)
		})
	}
}

func testSurviveSIGKILL(t *testing.T, open func(t *testing.T, a helperAddrs, spans int) exportFunc) {
	const spansPerBatch, senders = 50, 3
	path := filepath.Join(t.TempDir(), "telemetry.db")
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))

	var (
		mu    sync.Mutex
		acked []uint64
		next  uint64
	)
	for round := range 2 {
		child, addrs := startHelperProcess(t, path)
		killAfter := len(acked) + 5 + rng.IntN(25)
		var wg sync.WaitGroup
		for range senders {
			export := open(t, addrs, spansPerBatch)
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					mu.Lock()
					n := next
					next++
					mu.Unlock()
					ok, gone := export(n)
					if gone {
						return
					}
					if ok {
						mu.Lock()
						acked = append(acked, n)
						mu.Unlock()
					}
				}
			}()
		}
		waitUntil(t, func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(acked) >= killAfter
		})
		if err := child.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		_ = child.Wait()
		wg.Wait()
		t.Logf("round %d: killed after %d acknowledged batches, %d sent", round, len(acked), next)
	}

	st, err := store.Open(context.Background(), store.Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, n := range acked {
		var count int
		if err := st.DB().QueryRow("SELECT COUNT(*) FROM otel_traces WHERE TraceId = ?", testTraceID(n).String()).Scan(&count); err != nil {
			t.Fatal(err)
		}
		if count != spansPerBatch {
			t.Errorf("acknowledged batch %d has %d of its %d spans", n, count, spansPerBatch)
		}
	}
	rows, err := st.DB().Query("SELECT COUNT(*) FROM otel_traces GROUP BY TraceId HAVING COUNT(*) <> ?", spansPerBatch)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		t.Error("a batch is stored in part")
	}
	if st2, err := st.Stats(context.Background()); err != nil || st2.Integrity != "ok" {
		t.Errorf("integrity after two kills: %q (%v)", st2.Integrity, err)
	}
}

// startHelper runs this test binary as a receiver process on path (see TestMain) and returns
// it with its OTLP/HTTP base URL.
func startHelper(t testing.TB, path string) (*exec.Cmd, string) {
	t.Helper()
	cmd, addrs := startHelperProcess(t, path)
	return cmd, "http://" + addrs.http
}

// helperAddrs are where a helper receiver process listens.
type helperAddrs struct{ http, grpc string }

// startHelperProcess runs this test binary as a receiver process on path (see TestMain) and
// returns it with the addresses of its two receivers.
func startHelperProcess(t testing.TB, path string) (*exec.Cmd, helperAddrs) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperStoreEnv+"="+path)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	ready := make(chan helperAddrs, 1)
	go func() {
		var a helperAddrs
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if g, ok := strings.CutPrefix(sc.Text(), "GRPC "); ok {
				a.grpc = g
			}
			if h, ok := strings.CutPrefix(sc.Text(), "ADDR "); ok {
				a.http = h
				ready <- a
			}
		}
		close(ready)
	}()
	select {
	case a, ok := <-ready:
		if !ok {
			t.Fatal("the receiver process exited before listening")
		}
		return cmd, a
	case <-time.After(30 * time.Second):
		t.Fatal("the receiver process did not start listening within 30 s")
	}
	return nil, helperAddrs{}
}

// waitUntil polls cond until it holds or a deadline passes.
func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached before the deadline")
		}
		time.Sleep(time.Millisecond)
	}
}
