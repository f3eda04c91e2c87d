package app

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/runlens/runlens/gen"
	"github.com/runlens/runlens/internal/toolerr"
)

// missingStoreError is a sqlite telemetry source naming a file that is not there. Opening it
// would create an empty store and every tool would answer "no telemetry" while the user's data
// sits elsewhere, so it is reported instead, with the way to create it.
type missingStoreError struct {
	// shown is the path as the user should read it: relative to the project root when inside it.
	shown string
	// origin is where the source was set ("flag --telemetry", …).
	origin string
}

func (e *missingStoreError) Error() string {
	return fmt.Sprintf("the telemetry store sqlite:%s (set by %s) does not exist", e.shown, e.origin)
}

// Fix says how to get a store there, or back to the default.
func (e *missingStoreError) Fix() string {
	return fmt.Sprintf("Correct the path given by %s, or create the store by receiving into it with `runlens collect --store %s`; without a source setting runlens uses .runlens/telemetry.db.",
		e.origin, e.shown)
}

// toolError is how the telemetry tools report it.
func (e *missingStoreError) toolError() *toolerr.Error {
	return toolerr.New(gen.ErrorCodeSourceUnreachable, e.Error()).
		WithHint(fmt.Sprintf("correct the path given by %s, or create the store with `runlens collect --store %s`; run the doctor tool for the whole picture", e.origin, e.shown))
}

// checkStoreExists returns a *missingStoreError when the configuration requires the store file
// to exist (a sqlite:PATH source) and it does not. It is checked on every open attempt, so a
// store created later is picked up without a restart.
func (a *App) checkStoreExists() error {
	cfg := a.Config
	if !cfg.Store.MustExist {
		return nil
	}
	if _, err := os.Stat(cfg.Store.Path); !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	origin := cfg.Telemetry.SourceOrigin
	if origin == "" {
		origin = "the configuration"
	}
	return &missingStoreError{shown: a.shownPath(cfg.Store.Path), origin: origin}
}

// shownPath renders a path of the user's configuration for messages: relative to the project
// root when it lies inside it, as configured otherwise.
func (a *App) shownPath(p string) string {
	rel, err := filepath.Rel(a.Config.ProjectRoot, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return p
	}
	return filepath.ToSlash(rel)
}
