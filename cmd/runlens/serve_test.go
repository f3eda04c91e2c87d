package main

import (
	"bytes"
	"math"
	"runtime/debug"
	"strings"
	"testing"
)

func TestServeBoundsItsGoMemoryUnlessGOMEMLIMITIsSet(t *testing.T) {
	for _, c := range []struct {
		name, env string
		want      int64
	}{
		{"without GOMEMLIMIT the soft limit is serve's own", "", serveMemoryLimit},
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
