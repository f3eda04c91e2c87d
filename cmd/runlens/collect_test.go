package main

import (
	"math"
	"runtime/debug"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/runlens/runlens/internal/gcpolicy"
)

// TestCollectTakesTheIngestGCTargetsUnlessGOMEMLIMITIsSet runs collect in this process until it
// receives, reads the soft memory limit it left, and stops it as an init system would.
func TestCollectTakesTheIngestGCTargetsUnlessGOMEMLIMITIsSet(t *testing.T) {
	for _, c := range []struct {
		name, env string
		want      int64
	}{
		{"without GOMEMLIMIT the soft limit is collect's own", "", gcpolicy.IngestLimit},
		{"a GOMEMLIMIT of the user's is left alone", "1GiB", math.MaxInt64},
	} {
		t.Run(c.name, func(t *testing.T) {
			defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
			defer debug.SetGCPercent(debug.SetGCPercent(100))
			t.Setenv("GOMEMLIMIT", c.env)
			var out, errOut syncBuffer
			done := make(chan int, 1)
			go func() {
				done <- run([]string{"collect", "--project-root", t.TempDir(), "--listen", "127.0.0.1:0", "--listen-grpc", "off"},
					strings.NewReader(""), &out, &errOut)
			}()
			// collect says it receives only after it has asked for SIGTERM, so the signal below
			// reaches it and not the test process's default handler.
			deadline := time.Now().Add(30 * time.Second)
			for !strings.Contains(errOut.String(), "receiving OTLP/HTTP") {
				select {
				case code := <-done:
					t.Fatalf("collect exited %d before receiving: %s", code, errOut.String())
				default:
				}
				if time.Now().After(deadline) {
					t.Fatalf("collect did not start receiving: %s", errOut.String())
				}
				time.Sleep(10 * time.Millisecond) // polling its output with a deadline
			}
			if got := debug.SetMemoryLimit(-1); got != c.want {
				t.Errorf("memory limit while collecting = %d, want %d", got, c.want)
			}
			if err := syscall.Kill(syscall.Getpid(), syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			if code := <-done; code != 0 {
				t.Fatalf("collect exited %d after SIGTERM: %s", code, errOut.String())
			}
		})
	}
}
