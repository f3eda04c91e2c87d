package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/runlens/runlens/gen"
)

// A file is decoded into gen.Config, the type generated from config.schema.json: pointers
// tell an absent key from a zero value, so only the keys a file sets replace defaults. It is
// decoded only after the schema accepted the file. appliedKeys and ignoredKeys name every key
// of the schema; a key added to the schema fails TestEveryConfigKeyIsAppliedOrIgnored until
// applyFile applies it or it is listed as ignored.
var (
	appliedKeys = []string{
		"/telemetry/source", "/telemetry/apiKeyEnv", "/telemetry/passwordEnv", "/telemetry/tokenEnv", "/telemetry/stackSnippetDeny",
		"/telemetry/clickhouse/tracesTable", "/telemetry/clickhouse/logsTable",
		"/receiver/address", "/receiver/grpcAddress", "/receiver/enabled", "/receiver/allowedHosts", "/receiver/detached",
		"/store/path", "/store/retention", "/store/maxBytes",
		"/docs/root", "/docs/exclude",
		"/commands/catalog/*/path", "/commands/catalog/*/argv", "/commands/catalog/*/description",
		"/commands/catalog/*/usage", "/commands/catalog/*/timeoutMs", "/commands/catalog/*/telemetry",
		"/commands/discover/makefile", "/commands/discover/packageJson",
		"/commands/policy/allow/*/name", "/commands/policy/allow/*/prefix",
		"/commands/policy/deny/*/name", "/commands/policy/deny/*/prefix", "/commands/policy/deny/*/flags",
		"/commands/defaultTimeoutMs", "/commands/maxTimeoutMs", "/commands/secretEnv",
		"/commands/outputTailBytes", "/commands/telemetryGraceMs",
		"/budgets/standard", "/budgets/large", "/budgets/summary", "/budgets/fullCeiling",
		"/conventions", // handed whole to the conventions package, which has its own schema
		"/sensitiveKeys", "/doctor/allowRemoteEndpoints", "/mcp/profile",
	}
	// ignoredKeys are keys the schema allows that change nothing at run time.
	ignoredKeys = []string{"/$schema"}
)

// applyFile lays the file's keys over cfg. It returns the problems the schema cannot express
// (a source that does not parse, a duplicate command path), each at its pointer, and which of
// the settings naming the store file it chose.
func applyFile(cfg *Config, f *gen.Config, origin string) (set chosen, errs Errors) {
	bad := func(ptr, problem, fix string) {
		errs = append(errs, &Error{Origin: origin, Pointer: ptr, Problem: problem, Fix: fix})
	}
	root := cfg.ProjectRoot
	if t := f.Telemetry; t != nil {
		if t.Source != nil {
			src, err := ParseSource(*t.Source, root)
			if err != nil {
				bad("/telemetry/source", err.Error(), "use sqlite:PATH, clickhouse://HOST:PORT, aspire, aspire+http://HOST:PORT or jaeger+http://HOST:PORT")
			} else {
				cfg.Telemetry.Source, set.source = src, true
				cfg.Telemetry.SourceOrigin = FileName + " telemetry.source"
			}
		}
		setString(&cfg.Telemetry.APIKeyEnv, t.APIKeyEnv)
		setString(&cfg.Telemetry.PasswordEnv, t.PasswordEnv)
		setString(&cfg.Telemetry.TokenEnv, t.TokenEnv)
		if t.StackSnippetDeny != nil {
			cfg.Telemetry.StackSnippetDeny = t.StackSnippetDeny
		}
		if ch := t.Clickhouse; ch != nil {
			setString(&cfg.Telemetry.TracesTable, ch.TracesTable)
			setString(&cfg.Telemetry.LogsTable, ch.LogsTable)
		}
	}
	if r := f.Receiver; r != nil {
		if r.Address != nil {
			if err := checkAddress(*r.Address); err != nil {
				bad("/receiver/address", err.Error(), "use host:port, such as "+DefaultReceiverAddress)
			} else {
				cfg.Receiver.Address = *r.Address
			}
		}
		if r.Enabled != nil {
			cfg.Receiver.Enabled = *r.Enabled
			if !*r.Enabled {
				cfg.Receiver.GRPCEnabled = false
			}
		}
		if r.GrpcAddress != nil {
			if *r.GrpcAddress == Off {
				cfg.Receiver.GRPCEnabled = false
			} else if err := checkAddress(*r.GrpcAddress); err != nil {
				bad("/receiver/grpcAddress", err.Error(), "use host:port, such as "+DefaultGRPCAddress+", or off")
			} else {
				cfg.Receiver.GRPCAddress, cfg.Receiver.GRPCEnabled = *r.GrpcAddress, true
			}
		}
		if r.AllowedHosts != nil {
			cfg.Receiver.AllowedHosts = r.AllowedHosts
		}
		setBool(&cfg.Receiver.Detached, r.Detached)
	}
	if s := f.Store; s != nil {
		if s.Path != nil {
			cfg.Store.Path, set.store = resolve(root, *s.Path), true
			if src := cfg.Telemetry.Source; set.source && src.Kind == SourceSQLite && src.Path != cfg.Store.Path {
				bad("/store/path", "store.path and telemetry.source name two different files, but the embedded source reads the store the receiver writes",
					"keep one of them, or make both name the same file")
			}
		}
		if s.Retention != nil {
			d, err := parseRetention(*s.Retention)
			if err != nil {
				bad("/store/retention", err.Error(), "use a number followed by m, h or d, such as 24h")
			} else {
				cfg.Store.Retention = d
			}
		}
		if s.MaxBytes != nil {
			cfg.Store.MaxBytes = int64(*s.MaxBytes)
		}
	}
	if d := f.Docs; d != nil {
		if d.Root != nil {
			dir := resolve(root, *d.Root)
			if !insideProject(root, dir) {
				bad("/docs/root", "docs.root "+quoteValue(*d.Root)+" resolves outside the project root (symbolic links followed)",
					"name a folder inside the project, such as docs; a symbolic link on the way must point inside the project too")
			} else {
				cfg.Docs.Root = dir
				cfg.Docs.Configured = true
			}
		}
		if d.Exclude != nil {
			cfg.Docs.Exclude = d.Exclude
		}
	}
	if c := f.Commands; c != nil {
		errs = append(errs, applyCommands(&cfg.Commands, c, origin)...)
	}
	if b := f.Budgets; b != nil {
		setInt(&cfg.Budgets.Standard, b.Standard)
		setInt(&cfg.Budgets.Large, b.Large)
		setInt(&cfg.Budgets.Summary, b.Summary)
		setInt(&cfg.Budgets.FullCeiling, b.FullCeiling)
	}
	if c := f.Conventions; c != nil {
		if c.Preset != nil {
			cfg.Conventions.Preset = string(*c.Preset)
		}
		doc, err := json.Marshal(c)
		if err != nil {
			bad("/conventions", "cannot be encoded again: "+err.Error(), "report this")
		} else {
			cfg.Conventions.Document = doc
		}
	}
	if f.SensitiveKeys != nil {
		cfg.SensitiveKeys = f.SensitiveKeys
	}
	if d := f.Doctor; d != nil && d.AllowRemoteEndpoints != nil {
		cfg.Doctor.AllowRemoteEndpoints = *d.AllowRemoteEndpoints
	}
	if m := f.MCP; m != nil && m.Profile != nil {
		cfg.MCP.Profile = string(*m.Profile)
	}
	return set, errs
}

func applyCommands(cmds *Commands, c *gen.ConfigCommands, origin string) Errors {
	var errs Errors
	seen := map[string]int{}
	for i, e := range c.Catalog {
		if j, dup := seen[e.Path]; dup {
			errs = append(errs, &Error{
				Origin:  origin,
				Pointer: "/commands/catalog/" + strconv.Itoa(i) + "/path",
				Problem: fmt.Sprintf("command path %q is already declared at /commands/catalog/%d", e.Path, j),
				Fix:     "give each catalog entry its own path, or remove one of them",
			})
			continue
		}
		seen[e.Path] = i
		cmds.Catalog = append(cmds.Catalog, CatalogEntry{
			Path:        e.Path,
			Argv:        e.Argv,
			Description: valueOr0(e.Description),
			Usage:       valueOr0(e.Usage),
			Timeout:     time.Duration(valueOr0(e.TimeoutMs)) * time.Millisecond,
			NoTelemetry: e.Telemetry != nil && !*e.Telemetry,
		})
	}
	if d := c.Discover; d != nil {
		setBool(&cmds.DiscoverMakefile, d.Makefile)
		setBool(&cmds.DiscoverPackageJSON, d.PackageJSON)
	}
	if p := c.Policy; p != nil {
		cmds.Allow = make([]Rule, len(p.Allow))
		for i, r := range p.Allow {
			cmds.Allow[i] = Rule{Name: r.Name, Prefix: r.Prefix}
		}
		cmds.Deny = make([]Rule, len(p.Deny))
		for i, r := range p.Deny {
			cmds.Deny[i] = Rule{Name: r.Name, Prefix: r.Prefix, Flags: r.Flags}
		}
	}
	if c.DefaultTimeoutMs != nil {
		cmds.DefaultTimeout = time.Duration(*c.DefaultTimeoutMs) * time.Millisecond
	}
	if c.MaxTimeoutMs != nil {
		cmds.MaxTimeout = time.Duration(*c.MaxTimeoutMs) * time.Millisecond
	}
	if cmds.DefaultTimeout > cmds.MaxTimeout {
		ptr := "/commands/defaultTimeoutMs"
		if c.DefaultTimeoutMs == nil {
			ptr = "/commands/maxTimeoutMs"
		}
		errs = append(errs, &Error{
			Origin:  origin,
			Pointer: ptr,
			Problem: fmt.Sprintf("defaultTimeoutMs (%d) is larger than maxTimeoutMs (%d)", cmds.DefaultTimeout.Milliseconds(), cmds.MaxTimeout.Milliseconds()),
			Fix:     "make defaultTimeoutMs at most maxTimeoutMs",
		})
	}
	if c.SecretEnv != nil {
		cmds.SecretEnv = append([]string{AlwaysSecretEnv}, c.SecretEnv...)
	}
	setInt(&cmds.OutputTailBytes, c.OutputTailBytes)
	if c.TelemetryGraceMs != nil {
		cmds.TelemetryGrace = time.Duration(*c.TelemetryGraceMs) * time.Millisecond
	}
	return errs
}

// valueOr0 is the value *p, or the zero value when the key is absent.
func valueOr0[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// parseRetention reads the schema's retention form: a number followed by m, h or d.
func parseRetention(s string) (time.Duration, error) {
	if len(s) < 2 {
		return 0, fmt.Errorf("retention %q is too short", s)
	}
	n, err := strconv.Atoi(s[:len(s)-1])
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("retention %q does not start with a positive number", s)
	}
	unit := map[byte]time.Duration{'m': time.Minute, 'h': time.Hour, 'd': 24 * time.Hour}[s[len(s)-1]]
	if unit == 0 {
		return 0, fmt.Errorf("retention %q does not end in m, h or d", s)
	}
	d := time.Duration(n) * unit
	if d > 90*24*time.Hour {
		return 0, fmt.Errorf("retention %q is longer than 90d", s)
	}
	return d, nil
}

// insideProject reports whether dir, its symbolic links resolved, is the project root or a
// folder under it. A part of dir that does not exist yet is taken as written, so a docs folder
// created later is accepted; the docs corpus checks again each time it opens the folder.
func insideProject(root, dir string) bool {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return false
	}
	realDir, err := realPath(dir)
	if err != nil {
		return false
	}
	rel, err := filepath.Rel(realRoot, realDir)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// realPath resolves the symbolic links of the longest part of p that exists.
func realPath(p string) (string, error) {
	p = filepath.Clean(p)
	rest := ""
	for {
		real, err := filepath.EvalSymlinks(p)
		if err == nil {
			return filepath.Join(real, rest), nil
		}
		parent := filepath.Dir(p)
		if !errors.Is(err, fs.ErrNotExist) || parent == p {
			return "", err
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}

func resolve(root, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(root, p)
}

func setString(dst *string, v *string) {
	if v != nil {
		*dst = *v
	}
}

func setInt(dst *int, v *int) {
	if v != nil {
		*dst = *v
	}
}

func setBool(dst *bool, v *bool) {
	if v != nil {
		*dst = *v
	}
}
