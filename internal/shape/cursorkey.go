package shape

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"
)

// CursorKeyFile is the name of the cursor key file inside a project's .runlens folder.
const CursorKeyFile = "cursor.key"

// cursorKeyLen is the size of a cursor key, and so of the key file.
const cursorKeyLen = 32

// keySettle bounds how long a reader waits for a key file that another process created without
// a hard link (see writeKeyFile) to reach its full size.
const keySettle = time.Second

// errCursorKeyDamaged marks a key file of the wrong size.
var errCursorKeyDamaged = errors.New("cursor key file damaged")

// NewFileCodec returns a codec whose key is kept in dir/cursor.key, so cursors stay valid across
// restarts of the server for as long as the file and the data fingerprint hold. The file is read,
// or created once with a random key, on the codec's first use. When dir cannot be written the
// codec falls back to a per-process key and says so at debug level: paging still works, only not
// across restarts.
func NewFileCodec(dir string, logger *slog.Logger) *Codec {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Codec{load: func() []byte {
		key, err := LoadOrCreateCursorKey(dir)
		switch {
		case errors.Is(err, errCursorKeyDamaged):
			// The project has a key file that is not a key: worth a user's attention.
			logger.Warn("cursor key file is damaged; cursors will not survive a restart until it is removed", "err", err)
		case err != nil:
			logger.Debug("cursor key not kept; cursors will not survive a restart", "err", err)
		default:
			return key
		}
		return randomKey()
	}}
}

// LoadOrCreateCursorKey returns the key in dir/cursor.key, creating dir (0700) and the file
// (0600, 32 random bytes) when there is none. Creation is atomic and exclusive: the key is
// written to a temporary file and hard-linked into place, which fails if the file appeared in
// the meantime, and the file is always read back, so processes starting together end up with
// the same key.
func LoadOrCreateCursorKey(dir string) ([]byte, error) {
	path := filepath.Join(dir, CursorKeyFile)
	key, err := readKeyFile(path)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return key, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create cursor key folder: %w", err)
	}
	if err := writeKeyFile(dir, path, randomKey()); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, err
	}
	return readKeyFile(path)
}

// writeKeyFile puts key at path unless a file is already there (then fs.ErrExist).
func writeKeyFile(dir, path string, key []byte) error {
	tmp, err := os.CreateTemp(dir, ".cursor.key-*")
	if err != nil {
		return fmt.Errorf("create cursor key: %w", err)
	}
	defer os.Remove(tmp.Name())
	// CreateTemp makes the file 0600 whatever the umask, so the key is never readable by others.
	if _, err := tmp.Write(key); err != nil {
		tmp.Close()
		return fmt.Errorf("write cursor key: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("write cursor key: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write cursor key: %w", err)
	}
	err = os.Link(tmp.Name(), path)
	if err == nil || errors.Is(err, fs.ErrExist) {
		return err
	}
	// A file system without hard links: create the file exclusively and write it in place;
	// readers wait for it to reach its size (readKeyFile).
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("create cursor key: %w", err)
	}
	if _, err := f.Write(key); err != nil {
		f.Close()
		return fmt.Errorf("write cursor key: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write cursor key: %w", err)
	}
	return nil
}

// readKeyFile reads a key file, waiting up to keySettle for one still being written.
func readKeyFile(path string) ([]byte, error) {
	deadline := time.Now().Add(keySettle)
	for {
		key, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("read cursor key: %w", err)
		}
		if len(key) == cursorKeyLen {
			return key, nil
		}
		if len(key) > cursorKeyLen || time.Now().After(deadline) {
			return nil, fmt.Errorf("read cursor key: %w: %d bytes, not %d; remove it to have a new key made", errCursorKeyDamaged, len(key), cursorKeyLen)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
