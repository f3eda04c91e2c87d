package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// Binaries are the servers under measurement and the bare loop that calibrates them.
type Binaries struct {
	Runlens, Peer, Floor string
}

// Build compiles runlens, the go-sdk peer and the floor loop from the module at root into dir. A release build
// is static and path-free (CGO_ENABLED=0, -trimpath), as shipped; otherwise it uses the same
// flags as the other tests' builds, so a smoke run reuses their build cache.
func Build(ctx context.Context, root, dir string, release bool) (Binaries, error) {
	b := Binaries{Runlens: filepath.Join(dir, "runlens"), Peer: filepath.Join(dir, "peer"), Floor: filepath.Join(dir, "floor")}
	for _, p := range []struct{ out, pkg string }{
		{b.Runlens, "./cmd/runlens"}, {b.Peer, "./internal/bench/peer"}, {b.Floor, "./internal/bench/floor"},
	} {
		args := []string{"build", "-o", p.out}
		if release {
			args = append(args, "-trimpath")
		}
		cmd := exec.CommandContext(ctx, "go", append(args, p.pkg)...)
		cmd.Dir = root
		cmd.Env = os.Environ()
		if release {
			cmd.Env = append(cmd.Env, "CGO_ENABLED=0")
		}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			return Binaries{}, fmt.Errorf("go build %s: %w\n%s", p.pkg, err, stderr.String())
		}
	}
	return b, nil
}
