package mcp

import (
	"log/slog"
	"os"
	"runtime"
	"time"
)

// Options configure a Server. The zero value of every field picks the documented default.
type Options struct {
	Name, Title, Version, Instructions string
	MaxMessageBytes                    int           // default 1 MiB
	Workers                            int           // default GOMAXPROCS*4
	PageSize                           int           // tools/list page size, default 0 = all on one page
	DrainTimeout                       time.Duration // default 5s
	Logger                             *slog.Logger  // stderr
}

const (
	defaultMaxMessageBytes = 1 << 20
	defaultDrainTimeout    = 5 * time.Second
)

// withDefaults returns o with every unset field filled in.
func (o Options) withDefaults() Options {
	if o.MaxMessageBytes <= 0 {
		o.MaxMessageBytes = defaultMaxMessageBytes
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0) * 4
	}
	if o.PageSize < 0 {
		o.PageSize = 0
	}
	if o.DrainTimeout <= 0 {
		o.DrainTimeout = defaultDrainTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	return o
}
