package config

// embedded checks files against the published configuration schema through the validator the
// generator emits into gen: nothing is compiled at start-up or on the first file.
var embedded = &Loader{}

// Load is Loader.Load with the configuration schema built into the binary.
func Load(projectRoot string, getenv func(string) string, flags Overrides) (*Config, error) {
	return embedded.Load(projectRoot, getenv, flags)
}

// LoadLenient is Loader.LoadLenient with the configuration schema built into the binary.
func LoadLenient(projectRoot string, getenv func(string) string, flags Overrides) (*Config, error) {
	return embedded.LoadLenient(projectRoot, getenv, flags)
}

// LoadWithoutFile is Loader.LoadWithoutFile with the configuration schema built into the binary.
func LoadWithoutFile(projectRoot string, getenv func(string) string, flags Overrides, problems Errors) (*Config, error) {
	return embedded.LoadWithoutFile(projectRoot, getenv, flags, problems)
}

// Check is Loader.Check with the configuration schema built into the binary.
func Check(origin string, data []byte) error {
	return embedded.Check(origin, data)
}
