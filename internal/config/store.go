package config

import "path/filepath"

// chosen says which of the two settings that name the embedded store's file one layer (the
// file, the environment, the flags) set: a sqlite telemetry source, or the store path.
type chosen struct{ source, store bool }

// resolveStore makes the sqlite source and the store path name one file, because the store the
// tools read must be the store the receiver writes. The later layer decides: a source named
// after the store path (or with no store path at all) is the store, and must exist unless it is
// the default file; a store path named after the source moves the source with it. picks are
// the layers' choices in order (file, environment, flags); the file's own conflict between
// the two is reported where it is decoded, with its position.
func resolveStore(cfg *Config, picks []chosen, origins []string) Errors {
	srcAt, storeAt := -1, -1
	for i, c := range picks {
		if c.source {
			srcAt = i
		}
		if c.store {
			storeAt = i
		}
	}
	src := &cfg.Telemetry.Source
	switch {
	case src.Kind != SourceSQLite:
		// A remote source: the store is the receiver's alone.
	case srcAt < 0 || storeAt > srcAt:
		*src = Source{Kind: SourceSQLite, Path: cfg.Store.Path}
		cfg.Telemetry.SourceOrigin = ""
	case storeAt == srcAt:
		if src.Path != cfg.Store.Path {
			return Errors{{Origin: origins[srcAt],
				Problem: "the store path and the sqlite telemetry source name two different files, but the embedded source reads the store the receiver writes",
				Fix:     "give only one of them"}}
		}
	default:
		cfg.Store.Path = src.Path
		cfg.Store.MustExist = src.Path != filepath.Join(cfg.ProjectRoot, DefaultStorePath)
	}
	return nil
}
