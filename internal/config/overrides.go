package config

import (
	"errors"
	"fmt"
	"net"
	"strconv"
)

// Overrides are the command-line flags that may replace configuration. An empty field was not
// given. Flags win over the environment, which wins over the file.
type Overrides struct {
	// ProjectRoot is --project-root.
	ProjectRoot string
	// Telemetry is --telemetry SOURCE.
	Telemetry string
	// Profile is --profile full|compact.
	Profile string
	// Receiver is --receiver ADDR|off (serve) or --listen ADDR (collect).
	Receiver string
	// ReceiverGRPC is --receiver-grpc ADDR|off (serve) or --listen-grpc ADDR|off (collect).
	ReceiverGRPC string
	// Store is --store PATH (collect); relative to the project root.
	Store string
	// LogLevel is a log level flag, when a command offers one.
	LogLevel string
}

// The environment variables runlens reads, named once.
const (
	EnvProjectRoot  = "RUNLENS_PROJECT_ROOT"
	EnvTelemetry    = "RUNLENS_TELEMETRY"
	EnvProfile      = "RUNLENS_MCP_PROFILE"
	EnvReceiver     = "RUNLENS_RECEIVER"
	EnvReceiverGRPC = "RUNLENS_RECEIVER_GRPC"
	EnvLogLevel     = "RUNLENS_LOG_LEVEL"
	// EnvDetached is true or false: whether serve runs the receivers detached (receiver.detached).
	EnvDetached = "RUNLENS_RECEIVER_DETACHED"
)

// setting is one override value with where it came from, for error messages.
type setting struct {
	value, origin string
}

// layer is one set of overrides (the environment or the flags) in a common form.
type layer struct {
	telemetry, profile, receiver, receiverGRPC, store, logLevel, detached setting
}

// Off is the value that turns a receiver off.
const Off = "off"

func envLayer(getenv func(string) string) layer {
	get := func(name string) setting {
		if getenv == nil {
			return setting{}
		}
		return setting{value: getenv(name), origin: "environment variable " + name}
	}
	return layer{
		telemetry:    get(EnvTelemetry),
		profile:      get(EnvProfile),
		receiver:     get(EnvReceiver),
		receiverGRPC: get(EnvReceiverGRPC),
		logLevel:     get(EnvLogLevel),
		detached:     get(EnvDetached),
	}
}

func flagLayer(o Overrides) layer {
	return layer{
		telemetry:    setting{o.Telemetry, "flag --telemetry"},
		profile:      setting{o.Profile, "flag --profile"},
		receiver:     setting{o.Receiver, "flag --receiver"},
		receiverGRPC: setting{o.ReceiverGRPC, "flag --receiver-grpc"},
		store:        setting{o.Store, "flag --store"},
		logLevel:     setting{o.LogLevel, "flag --log-level"},
	}
}

// applyLayer lays one set of overrides over cfg; set says which of the settings naming the
// store file it chose.
func applyLayer(cfg *Config, l layer) (set chosen, errs Errors) {
	bad := func(s setting, problem, fix string) {
		errs = append(errs, &Error{Origin: s.origin, Problem: problem, Fix: fix})
	}
	if s := l.telemetry; s.value != "" {
		src, err := ParseSource(s.value, cfg.ProjectRoot)
		if err != nil {
			bad(s, err.Error(), "use sqlite:PATH, clickhouse://HOST:PORT, aspire, aspire+http://HOST:PORT or jaeger+http://HOST:PORT")
		} else {
			cfg.Telemetry.Source, set.source = src, true
			cfg.Telemetry.SourceOrigin = s.origin
		}
	}
	if s := l.profile; s.value != "" {
		if s.value != "full" && s.value != "compact" {
			bad(s, fmt.Sprintf("expected full or compact, got %s", quoteValue(s.value)), "use full or compact")
		} else {
			cfg.MCP.Profile = s.value
		}
	}
	if s := l.receiver; s.value != "" {
		if s.value == Off {
			// Off means no receiver at all, unless this layer names a gRPC address below.
			cfg.Receiver.Enabled, cfg.Receiver.GRPCEnabled = false, false
		} else if err := checkAddress(s.value); err != nil {
			bad(s, err.Error(), "use host:port, such as "+DefaultReceiverAddress+", or off")
		} else {
			cfg.Receiver.Address, cfg.Receiver.Enabled = s.value, true
		}
	}
	if s := l.receiverGRPC; s.value != "" {
		if s.value == Off {
			cfg.Receiver.GRPCEnabled = false
		} else if err := checkAddress(s.value); err != nil {
			bad(s, err.Error(), "use host:port, such as "+DefaultGRPCAddress+", or off")
		} else {
			cfg.Receiver.GRPCAddress, cfg.Receiver.GRPCEnabled = s.value, true
		}
	}
	if s := l.store; s.value != "" {
		cfg.Store.Path, set.store = resolve(cfg.ProjectRoot, s.value), true
	}
	if s := l.detached; s.value != "" {
		switch s.value {
		case "true", "1":
			cfg.Receiver.Detached = true
		case "false", "0":
			cfg.Receiver.Detached = false
		default:
			bad(s, fmt.Sprintf("expected true or false, got %s", quoteValue(s.value)), "use true or false")
		}
	}
	if s := l.logLevel; s.value != "" {
		switch s.value {
		case "debug", "info", "warn", "error":
			cfg.LogLevel = s.value
		default:
			bad(s, fmt.Sprintf("expected debug, info, warn or error, got %s", quoteValue(s.value)), "use debug, info, warn or error")
		}
	}
	return set, errs
}

// checkAddress accepts host:port with a numeric port.
func checkAddress(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("address %s is not host:port", quoteValue(addr))
	}
	if host == "" {
		return errors.New("address has no host (an empty host would listen on every interface)")
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("address %s has no valid port", quoteValue(addr))
	}
	return nil
}
