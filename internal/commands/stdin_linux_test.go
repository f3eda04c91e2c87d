package commands

import (
	"context"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// TestTheChildCannotReadTheServersStdin puts data on this process's standard input, as the MCP
// stream would be, and checks the child reads an immediate EOF instead.
func TestTheChildCannotReadTheServersStdin(t *testing.T) {
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	if _, err := pw.WriteString(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}` + "\n"); err != nil {
		t.Fatal(err)
	}
	defer pw.Close()
	saved, err := unix.Dup(0)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Dup3(int(pr.Fd()), 0, 0); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = unix.Dup3(saved, 0, 0)
		_ = unix.Close(saved)
	}()
	res := run(t, &Executor{Dir: t.TempDir()}, context.Background(), helperArgv(t, "stdin"), RunOptions{})
	if got := string(res.Tail); got != "stdin: 0 bytes, err=<nil>, content=\"\"\n" {
		t.Errorf("child saw %q, want an immediately empty stdin", got)
	}
}
