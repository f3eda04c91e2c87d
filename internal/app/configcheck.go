package app

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/runlens/runlens/gen"
	"github.com/runlens/runlens/internal/config"
	"github.com/runlens/runlens/internal/toolerr"
)

// Open loads the configuration leniently and assembles runlens from it, for the commands that
// must keep answering when runlens.json is broken (serve, doctor): an agent whose server exits
// sees only "connection closed" and cannot even ask the doctor why. A file with problems is
// left out (see config.LoadLenient), and so is a file that passes its schema but names parts
// runlens cannot build (conventions that do not load, a policy rule that does not build).
// Problems of the environment or the flags still stop it.
func Open(cwd string, getenv func(string) string, flags config.Overrides, logger *slog.Logger) (*App, error) {
	cfg, err := config.LoadLenient(cwd, getenv, flags)
	if err != nil {
		return nil, err
	}
	a, err := New(cfg, logger)
	var part *partError
	if err == nil || cfg.FileProblems != nil || cfg.File == "" || !errors.As(err, &part) {
		return a, err
	}
	problem := &config.Error{Origin: cfg.File, Pointer: part.pointer, Problem: part.Error(), Fix: partFix}
	cfg, err = config.LoadWithoutFile(cwd, getenv, flags, config.Errors{problem})
	if err != nil {
		return nil, err
	}
	return New(cfg, logger)
}

// partFix is the fix of a part of the file that passed its schema but does not build.
const partFix = "correct this part of " + config.FileName + "; the published config.schema.json describes it"

// ConfigInvalid reports whether runlens started without its configuration file because the
// file has problems; every tool but doctor then answers config_invalid.
func (a *App) ConfigInvalid() bool { return a.Config.FileProblems != nil }

// configProblem is the configuration file's problem, worded for the tools (msg) and the doctor
// (summary, the error text), with the fix.
type configProblem struct {
	msg, summary, fix string
}

func (p *configProblem) Error() string { return p.summary }

// Fix says what to change, and that the server must be restarted to read the file again.
func (p *configProblem) Fix() string { return p.fix }

// restartAdvice ends every fix: runlens reads its configuration once, at start-up.
const restartAdvice = "Then restart the runlens MCP server (reconnect it in your MCP host) so it reads the file again."

// fileProblem checks the configuration file as a start-up would now. It is nil when runlens
// runs on the file and the file is still valid. A file broken since start-up is reported (the
// running server keeps what it read); a file fixed since a broken start-up is reported too,
// because this process still runs on the defaults until it is restarted.
func (a *App) fileProblem() *configProblem {
	cfg := a.Config
	if cfg.File == "" {
		return nil
	}
	if now := a.recheckFile(); now != nil {
		return describe(now, cfg.ProjectRoot, a.ConfigInvalid())
	}
	if !a.ConfigInvalid() {
		return nil
	}
	msg := config.FileName + " is valid now, but this runlens server started while it was invalid and runs on the defaults"
	return &configProblem{msg: msg, summary: msg + ".",
		fix: "Restart the runlens MCP server (reconnect it in your MCP host) so it loads " + config.FileName + "."}
}

// recheckFile loads the file the way a start-up would, without the environment and flags
// (which name none of its parts), and returns its problems.
func (a *App) recheckFile() config.Errors {
	root := a.Config.ProjectRoot
	cfg, err := config.Load(root, nil, config.Overrides{ProjectRoot: root})
	var errs config.Errors
	switch {
	case errors.As(err, &errs):
		return errs
	case err != nil:
		return config.Errors{{Origin: a.Config.File, Problem: err.Error(), Fix: "make " + config.FileName + " a readable JSON file"}}
	}
	if len(cfg.Conventions.Document) > 0 {
		if _, err := loadConventions(cfg.Conventions); err != nil {
			return config.Locate(cfg.File, config.Errors{{Origin: cfg.File, Pointer: "/conventions", Problem: err.Error(), Fix: partFix}})
		}
	}
	if _, _, err := buildParts(cfg); err != nil {
		var part *partError
		errors.As(err, &part)
		return config.Locate(cfg.File, config.Errors{{Origin: cfg.File, Pointer: part.pointer, Problem: err.Error(), Fix: partFix}})
	}
	return nil
}

// The schema bounds of a tool error's message and hint.
const (
	maxErrorMessage = 2048
	maxErrorHint    = 1024
)

// describe words the first of errs for the tools and the doctor: where (the file relative to
// the project root, line:column, JSON pointer), what is wrong, how many more problems there
// are, and the fix. running says this process runs on the defaults because of them.
func describe(errs config.Errors, root string, running bool) *configProblem {
	first := errs[0]
	what := first.Problem
	if first.Pointer != "" {
		what = first.Pointer + ": " + what
	}
	if n := len(errs) - 1; n == 1 {
		what += " (and 1 more problem)"
	} else if n > 1 {
		what += fmt.Sprintf(" (and %d more problems)", n)
	}
	loc := first.Location(root)
	fix := capitalise(strings.TrimSuffix(first.Fix, ".")) + ". " + restartAdvice
	if first.Fix == "" {
		fix = "Correct " + config.FileName + " at that position. " + restartAdvice
	}
	if running {
		fix += " Until then runlens runs on the defaults: every tool but doctor answers config_invalid, and the other doctor checks describe the defaults."
	}
	return &configProblem{
		msg:     capRunes(loc+": "+what, maxErrorMessage),
		summary: capRunes("Invalid configuration at "+loc+": "+what+".", maxErrorMessage),
		fix:     capRunes(fix, maxErrorHint),
	}
}

// configError is the tool error every tool but doctor answers while the file is invalid.
func (a *App) configError() error {
	p := a.fileProblem()
	if p == nil {
		// Not reachable while FileProblems is set (fileProblem reports the restart then).
		p = describe(a.Config.FileProblems, a.Config.ProjectRoot, true)
	}
	return toolerr.New(gen.ErrorCodeConfigInvalid, p.msg).WithHint(p.fix)
}

func capitalise(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func capRunes(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
