package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// The store holds unredacted telemetry (attribute values, log bodies, statements), so its
// file, its WAL and shared-memory files are readable by their owner only, and the folders
// runlens creates for it are the owner's only, wherever `--store` puts them and whatever the
// umask: SQLite creates new files 0644, and the umask can only take bits away, never add the
// ones a shared folder would need removed.
const (
	privateFile fs.FileMode = 0o600
	privateDir  fs.FileMode = 0o700
)

// sidecars are the files SQLite keeps beside the database; they hold its pages too.
var sidecars = []string{"-wal", "-shm", "-journal"}

// mkdirPrivate creates dir and its missing parents with mode 0700. Folders that already exist
// keep their mode: a shared folder the user chose stays shared, only what runlens adds is not.
func mkdirPrivate(dir string) error {
	var missing []string
	for d := dir; ; {
		if _, err := os.Lstat(d); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		missing = append(missing, d)
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	if err := os.MkdirAll(dir, privateDir); err != nil {
		return err
	}
	for _, d := range missing {
		if err := os.Chmod(d, privateDir); err != nil {
			return err
		}
	}
	return nil
}

// preparePrivateFile creates the database file with mode 0600 before SQLite opens it (SQLite
// gives its WAL and shared-memory files the mode of the database), and makes an existing one
// private, as an earlier release may have left it readable by everyone.
func preparePrivateFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, privateFile)
	if err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return makePrivate(path)
}

// makeSidecarsPrivate makes the WAL, shared-memory and journal files that exist private: they
// may predate the database's own change of mode.
func makeSidecarsPrivate(path string) error {
	for _, suffix := range sidecars {
		if err := makePrivate(path + suffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

func makePrivate(path string) error {
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	if info.Mode().Perm() == privateFile {
		return nil
	}
	if err := os.Chmod(path, privateFile); err != nil {
		return fmt.Errorf("make %s readable by its owner only: %w", filepath.Base(path), err)
	}
	return nil
}
