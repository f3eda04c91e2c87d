package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/runlens/runlens/gen"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// maxFileBytes bounds the configuration file; anything larger is not a hand-written config.
const maxFileBytes = 1 << 20

// sizeFix is the fix of a file that cannot be read or is over maxFileBytes.
const sizeFix = "make " + FileName + " a readable JSON file of at most 1 MiB"

// Loader loads configurations and checks runlens.json against the configuration schema through
// its generated validator. The zero Loader is ready to use.
type Loader struct {
	// check validates a parsed file; nil means the generated validator (schemaProblems). Tests
	// put the run-time JSON Schema library here to compare the two.
	check func(d *document, origin string) Errors
}

// Load builds the effective configuration: defaults, then runlens.json at the project root
// (a missing file means defaults), then the RUNLENS_* environment, then flags. The project root
// is flags.ProjectRoot, else RUNLENS_PROJECT_ROOT, else projectRoot (usually the working
// directory). getenv may be nil (no environment). Every problem found is returned at once as
// Errors, each naming its origin, JSON pointer, line and column, and a fix.
func (l *Loader) Load(projectRoot string, getenv func(string) string, flags Overrides) (*Config, error) {
	return l.load(projectRoot, getenv, flags, fileStrict, nil)
}

// LoadLenient is Load for a process that must keep serving when runlens.json is broken (`runlens
// serve`: an agent that only sees "connection closed" cannot even ask the doctor why). When the
// file has problems it is left out: the configuration is the defaults under the environment and
// flags, with the file's problems in FileProblems. Problems of the environment or the flags are
// still errors.
func (l *Loader) LoadLenient(projectRoot string, getenv func(string) string, flags Overrides) (*Config, error) {
	return l.load(projectRoot, getenv, flags, fileLenient, nil)
}

// LoadWithoutFile is LoadLenient for a file that passed its schema but that runlens cannot use
// (conventions that do not load, a command policy that does not build): problems, which name
// the file, become FileProblems, located in the file by their pointers.
func (l *Loader) LoadWithoutFile(projectRoot string, getenv func(string) string, flags Overrides, problems Errors) (*Config, error) {
	return l.load(projectRoot, getenv, flags, fileIgnored, problems)
}

// fileMode says what a load does with runlens.json.
type fileMode int

const (
	fileStrict  fileMode = iota // its problems are errors
	fileLenient                 // its problems leave it out and are kept in FileProblems
	fileIgnored                 // it is left out; the given problems are kept
)

func (l *Loader) load(projectRoot string, getenv func(string) string, flags Overrides, mode fileMode, problems Errors) (*Config, error) {
	root, err := resolveRoot(projectRoot, getenv, flags)
	if err != nil {
		return nil, err
	}
	cfg := Defaults(root)
	var errs Errors

	path := filepath.Join(root, FileName)
	var filePick chosen
	switch mode {
	case fileIgnored:
		cfg.File, cfg.FileProblems = path, Locate(path, problems)
	default:
		var fileErrs Errors
		filePick, fileErrs = l.applyFileAt(cfg, path)
		if mode == fileLenient && len(fileErrs) > 0 {
			cfg, filePick = Defaults(root), chosen{}
			cfg.File, cfg.FileProblems = path, bounded(fileErrs)
		} else {
			errs = append(errs, fileErrs...)
		}
	}
	picks, origins := []chosen{filePick}, []string{FileName}
	for _, lay := range []layer{envLayer(getenv), flagLayer(flags)} {
		pick, layErrs := applyLayer(cfg, lay)
		picks, origins = append(picks, pick), append(origins, lay.telemetry.origin)
		errs = append(errs, layErrs...)
	}
	errs = append(errs, resolveStore(cfg, picks, origins)...)
	if src, err := DiscoverAspire(cfg.Telemetry.Source, getenv); err != nil {
		errs = append(errs, &Error{Origin: "environment variable " + EnvAspireDashboardPort, Problem: err.Error(), Fix: "set it to the dashboard's port, or give the source as aspire+http://HOST:PORT"})
	} else {
		cfg.Telemetry.Source = src
	}
	if len(errs) > 0 {
		return nil, bounded(errs)
	}
	if cfg.Telemetry.Source.Kind == SourceAspire && cfg.Telemetry.APIKeyEnv == "" {
		cfg.Telemetry.APIKeyEnv = DefaultAspireAPIKeyEnv
	}
	// The source's credentials are runlens's: the commands it runs never see them.
	for _, name := range []string{cfg.Telemetry.APIKeyEnv, cfg.Telemetry.TokenEnv} {
		if name != "" {
			cfg.Commands.SecretEnv = append(cfg.Commands.SecretEnv, name)
		}
	}
	if cfg.Telemetry.PasswordEnv != "" {
		cfg.Commands.SecretEnv = append(cfg.Commands.SecretEnv, cfg.Telemetry.PasswordEnv)
	}
	return cfg, nil
}

// Locate fills in the line and column of problems that have a pointer but no position, from
// the file at path, and returns them.
func Locate(path string, problems Errors) Errors {
	data, err := readBounded(path)
	if err != nil {
		return problems
	}
	doc, err := parseDocument(data)
	if err != nil {
		return problems
	}
	for _, e := range problems {
		if e.Pointer != "" && e.Line == 0 {
			e.Line, e.Column = doc.locate(e.Pointer)
		}
	}
	return problems
}

// Check validates configuration file bytes against the schema without applying them, for the
// doctor and for editors' save hooks. origin names the file in messages.
func (l *Loader) Check(origin string, data []byte) error {
	cfg := Defaults(filepath.Dir(origin))
	if _, errs := l.apply(cfg, origin, data); len(errs) > 0 {
		return bounded(errs)
	}
	return nil
}

func resolveRoot(projectRoot string, getenv func(string) string, flags Overrides) (string, error) {
	root, origin := projectRoot, "project root"
	if getenv != nil {
		if v := getenv(EnvProjectRoot); v != "" {
			root, origin = v, "environment variable "+EnvProjectRoot
		}
	}
	if flags.ProjectRoot != "" {
		root, origin = flags.ProjectRoot, "flag --project-root"
	}
	if root == "" {
		return "", &Error{Origin: origin, Problem: "no project root given", Fix: "run runlens from the project folder or pass --project-root DIR"}
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", &Error{Origin: origin, Problem: fmt.Sprintf("project root %s cannot be made absolute: %v", root, err), Fix: "pass an absolute --project-root DIR"}
	}
	info, err := os.Stat(abs)
	if err != nil || !info.IsDir() {
		return "", &Error{Origin: origin, Problem: fmt.Sprintf("project root %s is not a folder", abs), Fix: "pass an existing folder as --project-root DIR"}
	}
	return abs, nil
}

// applyFileAt reads and applies the file at path; a missing file is no problem.
func (l *Loader) applyFileAt(cfg *Config, path string) (set chosen, errs Errors) {
	data, err := readBounded(path)
	if errors.Is(err, fs.ErrNotExist) {
		return chosen{}, nil
	}
	if err != nil {
		return chosen{}, Errors{{Origin: path, Problem: err.Error(), Fix: sizeFix}}
	}
	cfg.File = path
	return l.apply(cfg, path, data)
}

// apply parses, validates and applies one file's bytes, reporting every problem it finds.
func (l *Loader) apply(cfg *Config, origin string, data []byte) (set chosen, errs Errors) {
	if len(data) > maxFileBytes {
		return chosen{}, Errors{{Origin: origin, Problem: "larger than 1 MiB", Fix: sizeFix}}
	}
	doc, err := parseDocument(data)
	if err != nil {
		var se *syntaxError
		errors.As(err, &se)
		line, col := position(data, se.offset)
		if se.fix != "" {
			return chosen{}, Errors{{Origin: origin, Line: line, Column: col, Problem: se.msg, Fix: se.fix}}
		}
		return chosen{}, Errors{{Origin: origin, Line: line, Column: col, Problem: "invalid JSON: " + se.msg, Fix: "correct the JSON syntax at this position"}}
	}
	for _, dup := range doc.dups {
		line, col := doc.position(dup.offset)
		errs = append(errs, &Error{Origin: origin, Pointer: dup.ptr, Line: line, Column: col,
			Problem: "this key appears more than once in the same object",
			Fix:     "keep a single occurrence; JSON readers disagree on which one wins"})
	}
	check := l.check
	if check == nil {
		check = schemaProblems
	}
	errs = append(errs, check(doc, origin)...)
	if len(errs) > 0 {
		return chosen{}, errs
	}
	var f gen.Config
	if err := json.Unmarshal(doc.data, &f); err != nil {
		return chosen{}, Errors{{Origin: origin, Problem: "decode: " + err.Error(), Fix: "check the file against " + SchemaID}}
	}
	set, errs = applyFile(cfg, &f, origin)
	for _, e := range errs {
		e.Line, e.Column = doc.locate(e.Pointer)
	}
	return set, errs
}

func readBounded(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open: %w", err)
	}
	defer f.Close()
	if info, err := f.Stat(); err == nil && info.IsDir() {
		return nil, errors.New("is a folder, not a file")
	}
	data, err := io.ReadAll(io.LimitReader(f, maxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read: %w", err)
	}
	if len(data) > maxFileBytes {
		return nil, errors.New("larger than 1 MiB")
	}
	return data, nil
}
