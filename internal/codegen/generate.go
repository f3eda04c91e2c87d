package codegen

import "io/fs"

// Generate runs the whole pipeline in memory: load, lint, resolve into a Model, render. root
// names the schema tree in errors and headers (normally "schemas").
func Generate(fsys fs.FS, root string) (*Output, *Model, error) {
	src, err := Load(fsys, root)
	if err != nil {
		return nil, nil, err
	}
	if err := Lint(src); err != nil {
		return nil, nil, err
	}
	m, err := Build(src)
	if err != nil {
		return nil, nil, err
	}
	out, err := m.Render()
	if err != nil {
		return nil, nil, err
	}
	return out, m, nil
}
