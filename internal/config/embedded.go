package config

import (
	"fmt"
	"sync"

	"github.com/runlens/runlens/gen"
)

// embeddedLoader compiles the published configuration schema that the generator embeds in gen,
// once per process: compiling costs milliseconds, so it happens on first use, not at start-up.
var embeddedLoader = sync.OnceValues(func() (*Loader, error) {
	l, err := NewLoader([]byte(gen.ConfigSchema))
	if err != nil {
		return nil, fmt.Errorf("load configuration schema: %w", err)
	}
	return l, nil
})

// Load is Loader.Load with the configuration schema built into the binary.
func Load(projectRoot string, getenv func(string) string, flags Overrides) (*Config, error) {
	l, err := embeddedLoader()
	if err != nil {
		return nil, err
	}
	return l.Load(projectRoot, getenv, flags)
}

// Check is Loader.Check with the configuration schema built into the binary.
func Check(origin string, data []byte) error {
	l, err := embeddedLoader()
	if err != nil {
		return err
	}
	return l.Check(origin, data)
}
