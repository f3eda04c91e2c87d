package config

import (
	"fmt"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/runlens/runlens/gen"
)

// embeddedLoader checks files against the published configuration schema that the generator
// embeds in gen. Compiling the schema costs milliseconds, so it happens when the first file is
// read, not at start-up: a project without runlens.json never compiles it.
var embeddedLoader = sync.OnceValues(func() (*Loader, error) {
	compile := sync.OnceValues(func() (*jsonschema.Schema, error) {
		s, err := compileSchema(gen.ConfigSchema)
		if err != nil {
			return nil, fmt.Errorf("load configuration schema: %w", err)
		}
		return s, nil
	})
	return &Loader{schema: compile}, nil
})

// Load is Loader.Load with the configuration schema built into the binary.
func Load(projectRoot string, getenv func(string) string, flags Overrides) (*Config, error) {
	l, err := embeddedLoader()
	if err != nil {
		return nil, err
	}
	return l.Load(projectRoot, getenv, flags)
}

// LoadLenient is Loader.LoadLenient with the configuration schema built into the binary.
func LoadLenient(projectRoot string, getenv func(string) string, flags Overrides) (*Config, error) {
	l, err := embeddedLoader()
	if err != nil {
		return nil, err
	}
	return l.LoadLenient(projectRoot, getenv, flags)
}

// LoadWithoutFile is Loader.LoadWithoutFile with the configuration schema built into the binary.
func LoadWithoutFile(projectRoot string, getenv func(string) string, flags Overrides, problems Errors) (*Config, error) {
	l, err := embeddedLoader()
	if err != nil {
		return nil, err
	}
	return l.LoadWithoutFile(projectRoot, getenv, flags, problems)
}

// Check is Loader.Check with the configuration schema built into the binary.
func Check(origin string, data []byte) error {
	l, err := embeddedLoader()
	if err != nil {
		return err
	}
	return l.Check(origin, data)
}
