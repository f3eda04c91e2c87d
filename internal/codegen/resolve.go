package codegen

import (
	"net/url"
	"path"
	"strconv"
	"strings"
)

// node returns the JSON value at a location, or false when there is none.
func (s *Source) node(at Location) (any, bool) {
	v, ok := s.Docs[at.File]
	if !ok {
		return nil, false
	}
	for _, tok := range at.Tokens() {
		switch c := v.(type) {
		case map[string]any:
			if v, ok = c[tok]; !ok {
				return nil, false
			}
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			v = c[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// resolveRef finds the target of a $ref written at location at: a relative file reference
// ("../defs/page.json"), a pointer into the same file ("#/$defs/x"), or both. Remote
// references are refused: the published schemas must be self-contained.
func (s *Source) resolveRef(at Location, ref string) (Location, any, error) {
	u, err := url.Parse(ref)
	if err != nil {
		return Location{}, nil, errorf(at, "$ref %q is not a URI reference: %v", ref, err)
	}
	if u.Scheme != "" || u.Host != "" || strings.HasPrefix(ref, "//") {
		return Location{}, nil, errorf(at, "$ref %q is remote; only relative file references and #/ pointers are allowed", ref)
	}
	file, frag, _ := strings.Cut(ref, "#")
	target := Location{File: at.File}
	if file != "" {
		target.File = path.Join(path.Dir(at.File), file)
	}
	if frag != "" && !strings.HasPrefix(frag, "/") {
		return Location{}, nil, errorf(at, "$ref %q: fragment must be a JSON pointer starting with #/ (anchors are not allowed)", ref)
	}
	if unesc, err := url.PathUnescape(frag); err == nil {
		frag = unesc
	}
	target.Pointer = frag
	if _, ok := s.Docs[target.File]; !ok {
		return Location{}, nil, errorf(at, "$ref %q: file %s not found", ref, target.File)
	}
	v, ok := s.node(target)
	if !ok {
		return Location{}, nil, errorf(at, "$ref %q: nothing at %s", ref, target)
	}
	return target, v, nil
}

// deref follows a chain of $refs from a schema at location at to the schema that defines
// something, returning its location and value and the description written closest to the
// use site (a $ref may carry a description that overrides its target's). A chain that comes
// back to itself is reported as a cycle.
func (s *Source) deref(at Location, v any) (Location, any, string, error) {
	var desc string
	seen := map[Location]bool{at: true}
	trail := []string{at.String()}
	for {
		m, ok := v.(map[string]any)
		if !ok {
			return at, v, desc, nil
		}
		if desc == "" {
			desc, _ = m["description"].(string)
		}
		ref, ok := m["$ref"].(string)
		if !ok {
			return at, v, desc, nil
		}
		target, tv, err := s.resolveRef(at.Child("$ref"), ref)
		if err != nil {
			return at, nil, "", err
		}
		trail = append(trail, target.String())
		if seen[target] {
			return at, nil, "", errorf(at, "$ref cycle: %s", strings.Join(trail, " → "))
		}
		seen[target] = true
		at, v = target, tv
	}
}

// refCycleError reports a schema that contains itself through $refs, which a bundled,
// self-contained schema cannot express.
func refCycleError(at Location, stack []Location, target Location) error {
	parts := make([]string, 0, len(stack)+1)
	for _, l := range stack {
		parts = append(parts, l.String())
	}
	parts = append(parts, target.String())
	return errorf(at, "$ref cycle (a schema contains itself): %s", strings.Join(parts, " → "))
}
