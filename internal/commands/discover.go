package commands

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Discovery bounds: project files are read whole, so they are capped, and a huge Makefile must
// not flood list_commands.
const (
	maxDiscoverFileBytes = 1 << 20
	maxDiscovered        = 200
)

// discoveredName is what a discovered target or script name must look like to become a path
// token: file targets (with /), pattern rules and anything exotic are left out.
var discoveredName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+:-]*$`) })

// makeRule matches a rule line: one or more targets, then ":" or "::" not followed by "=" (which
// would be an assignment), then prerequisites and an optional "## description".
var makeRule = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([^\s:=#][^:=#]*?)\s*::?(?:[^:=].*)?$`) })

// makefileNames are the files GNU make reads by default, in its order.
var makefileNames = []string{"GNUmakefile", "makefile", "Makefile"}

// DiscoverMakefile lists the targets of the project's Makefile as "make <target>" commands. It
// skips special targets (.PHONY and other names starting with a dot), pattern rules, variable
// assignments, targets with variables or slashes, and recipe lines. A "## text" comment on the
// rule line becomes the description. No Makefile means no commands and no error.
func DiscoverMakefile(root string) ([]Command, error) {
	for _, name := range makefileNames {
		data, err := readProjectFile(filepath.Join(root, name))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		return parseMakefile(data), nil
	}
	return nil, nil
}

func parseMakefile(data []byte) []Command {
	var out []Command
	seen := map[string]bool{}
	inDefine := false
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), maxDiscoverFileBytes)
	for sc.Scan() {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		switch {
		case inDefine:
			inDefine = trimmed != "endef"
			continue
		case strings.HasPrefix(trimmed, "define ") || trimmed == "define":
			inDefine = true
			continue
		case line == "" || line[0] == '\t' || line[0] == '#':
			continue
		}
		comment := ""
		if i := strings.Index(line, "##"); i >= 0 {
			comment = strings.TrimSpace(line[i+2:])
			line = line[:i]
		} else if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		m := makeRule().FindStringSubmatch(strings.TrimRight(line, " \t"))
		if m == nil {
			continue
		}
		for _, target := range strings.Fields(m[1]) {
			if !discoveredName().MatchString(target) || seen[target] {
				continue
			}
			seen[target] = true
			desc := comment
			if desc == "" {
				desc = "Makefile target " + target + "."
			}
			out = append(out, Command{
				Path:        "make " + target,
				Argv:        []string{"make", target},
				Description: desc,
				Usage:       "make " + target,
				Origin:      OriginMakefile,
			})
			if len(out) == maxDiscovered {
				return out
			}
		}
	}
	return out
}

// DiscoverPackageJSON lists the scripts of the project's package.json as "npm run <name>"
// commands. Arguments go after "--", so npm passes them to the script instead of reading them
// as its own options. The script's text is not shown: it may embed values a project would not
// want in an agent's context. No package.json means no commands and no error.
func DiscoverPackageJSON(root string) ([]Command, error) {
	data, err := readProjectFile(filepath.Join(root, "package.json"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var pkg struct {
		Scripts map[string]json.RawMessage `json:"scripts"`
	}
	if err := json.Unmarshal(data, &pkg); err != nil {
		return nil, fmt.Errorf("parse package.json: %w", err)
	}
	names := make([]string, 0, len(pkg.Scripts))
	for name := range pkg.Scripts {
		if discoveredName().MatchString(name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	if len(names) > maxDiscovered {
		names = names[:maxDiscovered]
	}
	out := make([]Command, 0, len(names))
	for _, name := range names {
		out = append(out, Command{
			Path:        "npm run " + name,
			Argv:        []string{"npm", "run", name, "--"},
			Description: "package.json script " + name + ".",
			Usage:       "npm run " + name + " [args…]",
			Origin:      OriginPackageJSON,
		})
	}
	return out, nil
}

// readProjectFile reads a regular file of at most maxDiscoverFileBytes. Symbolic links are not
// followed, so discovery never reads outside the project through a link.
func readProjectFile(path string) ([]byte, error) {
	info, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", filepath.Base(path))
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxDiscoverFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", filepath.Base(path), err)
	}
	if len(data) > maxDiscoverFileBytes {
		return nil, fmt.Errorf("%s is larger than 1 MiB", filepath.Base(path))
	}
	return data, nil
}
