package shape

import (
	"bytes"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzCursorDecodeRejectsForgeries decodes arbitrary text, and a real cursor with one byte
// changed, against the query the real one was minted for: anything but the real cursor's
// bytes is refused with a *CursorError, never accepted and never a panic.
func FuzzCursorDecodeRejectsForgeries(f *testing.F) {
	c := NewCodec([]byte("fuzz key"))
	q := listRunsQuery{Domain: "checkout", Window: "1h"}
	real, err := c.Encode("list_runs", q, "fp-1", 40)
	if err != nil {
		f.Fatal(err)
	}
	realBytes, _ := base64.RawURLEncoding.DecodeString(real)
	other, _ := NewCodec([]byte("another key")).Encode("list_runs", q, "fp-1", 40)
	for _, s := range []string{real, other, "", "AA", real[:len(real)-1], real + "A", "not a cursor!", base64.RawURLEncoding.EncodeToString([]byte{1})} {
		f.Add(s, uint8(0), uint8(0))
	}
	f.Add(real, uint8(5), uint8(1))
	f.Add(real, uint8(len(realBytes)-17), uint8(0x80))
	f.Fuzz(func(t *testing.T, cursor string, at, flip uint8) {
		for _, cur := range []string{cursor, mutate(realBytes, at, flip)} {
			off, err := c.Decode(cur, "list_runs", q, "fp-1")
			b, decErr := base64.RawURLEncoding.DecodeString(cur)
			genuine := decErr == nil && bytes.Equal(b, realBytes)
			switch {
			case genuine && (err != nil || off != 40):
				t.Fatalf("Decode(%q) of the real cursor = %d, %v", cur, off, err)
			case !genuine && err == nil:
				t.Fatalf("Decode(%q) accepted a cursor that is not the one minted: offset %d", cur, off)
			case !genuine && !errors.Is(err, ErrCursorInvalid):
				t.Fatalf("Decode(%q) = %v, want a cursor_invalid refusal", cur, err)
			}
		}
	})
}

// mutate returns b with the byte at (at mod len) XORed with flip, base64url.
func mutate(b []byte, at, flip uint8) string {
	m := bytes.Clone(b)
	if len(m) > 0 {
		m[int(at)%len(m)] ^= flip
	}
	return base64.RawURLEncoding.EncodeToString(m)
}

// FuzzCursorKeyFile reads arbitrary key files: a 32-byte file is the key, and a codec keyed
// with it accepts its own cursors; anything longer is refused as damaged, and a file codec over
// a damaged file still pages with a key of its own, never a panic. (A shorter file is waited for
// as one still being written, a second per input; TestCursorKey* cover it.)
func FuzzCursorKeyFile(f *testing.F) {
	f.Add(bytes.Repeat([]byte{7}, cursorKeyLen))
	f.Add(bytes.Repeat([]byte{0}, cursorKeyLen+1))
	f.Add([]byte("-----BEGIN PRIVATE KEY-----\nnot a cursor key at all, but long\n"))
	f.Fuzz(func(t *testing.T, content []byte) {
		if len(content) < cursorKeyLen {
			t.Skip("a short file is waited for as one being written")
		}
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, CursorKeyFile), content, 0o600); err != nil {
			t.Fatal(err)
		}
		key, err := LoadOrCreateCursorKey(dir)
		switch {
		case len(content) == cursorKeyLen && (err != nil || !bytes.Equal(key, content)):
			t.Fatalf("LoadOrCreateCursorKey = %x, %v; want the file's key", key, err)
		case len(content) > cursorKeyLen && (err == nil || !errors.Is(err, errCursorKeyDamaged)):
			t.Fatalf("LoadOrCreateCursorKey of %d bytes = %x, %v; want it refused as damaged", len(content), key, err)
		}
		c := NewFileCodec(dir, nil)
		cur, err := c.Encode("get_run", map[string]any{"id": "r1"}, "fp", 3)
		if err != nil {
			t.Fatal(err)
		}
		if off, err := c.Decode(cur, "get_run", map[string]any{"id": "r1"}, "fp"); err != nil || off != 3 {
			t.Fatalf("the file codec refuses its own cursor: %d, %v", off, err)
		}
	})
}
