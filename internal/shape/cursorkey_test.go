package shape

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

func TestFileCodecKeepsCursorsAcrossCodecs(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".runlens")
	cur, err := NewFileCodec(dir, nil).Encode("list_docs", nil, "fp", 7)
	if err != nil {
		t.Fatal(err)
	}
	if off, err := NewFileCodec(dir, nil).Decode(cur, "list_docs", nil, "fp"); err != nil || off != 7 {
		t.Errorf("a second codec on the same folder decoded %d, %v; want 7", off, err)
	}
	di, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, CursorKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	if di.Mode().Perm() != 0o700 || fi.Mode().Perm() != 0o600 || fi.Size() != cursorKeyLen {
		t.Errorf("folder %v, key file %v of %d bytes; want drwx------ and -rw------- of %d", di.Mode(), fi.Mode(), fi.Size(), cursorKeyLen)
	}
	if leftovers, _ := filepath.Glob(filepath.Join(dir, ".cursor.key-*")); len(leftovers) != 0 {
		t.Errorf("temporary key files left behind: %v", leftovers)
	}

	if err := os.Remove(filepath.Join(dir, CursorKeyFile)); err != nil {
		t.Fatal(err)
	}
	_, err = NewFileCodec(dir, nil).Decode(cur, "list_docs", nil, "fp")
	var ce *CursorError
	if !errors.As(err, &ce) || ce.Reason != CursorOtherKey {
		t.Errorf("after the key file was removed Decode = %v, want reason %q", err, CursorOtherKey)
	}
}

func TestConcurrentFirstStartsAgreeOnOneKey(t *testing.T) {
	for round := range 20 {
		dir := filepath.Join(t.TempDir(), ".runlens")
		const n = 8
		keys := make([][]byte, n)
		errs := make([]error, n)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				keys[i], errs[i] = LoadOrCreateCursorKey(dir)
			}()
		}
		close(start)
		wg.Wait()
		for i := range n {
			if errs[i] != nil {
				t.Fatalf("round %d, start %d: %v", round, i, errs[i])
			}
			if !bytes.Equal(keys[i], keys[0]) || len(keys[i]) != cursorKeyLen {
				t.Fatalf("round %d: start %d got a different key than start 0", round, i)
			}
		}
	}
}

func TestFileCodecFallsBackToAProcessKey(t *testing.T) {
	tests := []struct {
		name    string
		prepare func(t *testing.T, root string) string
		level   string
	}{
		{
			name: "a folder that cannot be created is logged at debug level",
			prepare: func(t *testing.T, root string) string {
				blocker := filepath.Join(root, ".runlens")
				if err := os.WriteFile(blocker, []byte("not a folder"), 0o600); err != nil {
					t.Fatal(err)
				}
				return blocker
			},
			level: "DEBUG",
		},
		{
			name: "a damaged key file is logged as a warning and left alone",
			prepare: func(t *testing.T, root string) string {
				dir := filepath.Join(root, ".runlens")
				if err := os.MkdirAll(dir, 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, CursorKeyFile), bytes.Repeat([]byte{1}, cursorKeyLen+1), 0o600); err != nil {
					t.Fatal(err)
				}
				return dir
			},
			level: "WARN",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := tt.prepare(t, t.TempDir())
			var log bytes.Buffer
			logger := slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))
			c := NewFileCodec(dir, logger)
			cur, err := c.Encode("list_docs", nil, "fp", 3)
			if err != nil {
				t.Fatal(err)
			}
			if off, err := c.Decode(cur, "list_docs", nil, "fp"); err != nil || off != 3 {
				t.Errorf("the fallback codec decoded its own cursor as %d, %v; want 3", off, err)
			}
			if _, err := NewFileCodec(dir, nil).Decode(cur, "list_docs", nil, "fp"); !errors.Is(err, ErrCursorInvalid) {
				t.Errorf("another process's fallback codec accepted the cursor: %v", err)
			}
			if fi, err := os.Stat(filepath.Join(dir, CursorKeyFile)); err == nil && fi.Size() != cursorKeyLen+1 {
				t.Errorf("the damaged key file was rewritten to %d bytes", fi.Size())
			}
			if !bytes.Contains(log.Bytes(), []byte("level="+tt.level)) || !bytes.Contains(log.Bytes(), []byte("cursor")) {
				t.Errorf("log = %q, want one %s line about the cursor key", log.String(), tt.level)
			}
		})
	}
}
