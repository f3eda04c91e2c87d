package config

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/runlens/runlens/gen"
)

// TestEveryConfigKeyIsAppliedOrIgnored is the configuration's drift proof: the keys of
// config.schema.json, read from the generated gen.Config, must be exactly appliedKeys plus
// ignoredKeys. A key added to the schema fails here until applyFile applies it (or it is
// listed as ignored); a key removed from the schema fails until it leaves the lists.
func TestEveryConfigKeyIsAppliedOrIgnored(t *testing.T) {
	var schemaKeys []string
	var walk func(typ reflect.Type, prefix string)
	walk = func(typ reflect.Type, prefix string) {
		for typ.Kind() == reflect.Pointer {
			typ = typ.Elem()
		}
		for i := range typ.NumField() {
			f := typ.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			ptr := prefix + "/" + name
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			switch {
			case ptr == "/conventions": // a document of its own schema, handed on whole
				schemaKeys = append(schemaKeys, ptr)
			case ft.Kind() == reflect.Struct:
				walk(ft, ptr)
			case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
				walk(ft.Elem(), ptr+"/*")
			default:
				schemaKeys = append(schemaKeys, ptr)
			}
		}
	}
	walk(reflect.TypeOf(gen.Config{}), "")
	listed := slices.Concat(appliedKeys, ignoredKeys)
	for _, k := range schemaKeys {
		if !slices.Contains(listed, k) {
			t.Errorf("config.schema.json has %s, which applyFile neither applies nor lists as ignored", k)
		}
	}
	for _, k := range listed {
		if !slices.Contains(schemaKeys, k) {
			t.Errorf("%s is listed as applied or ignored but is not in config.schema.json", k)
		}
	}
	if len(schemaKeys) < 30 {
		t.Fatalf("found only %d keys in gen.Config: the walk is broken", len(schemaKeys))
	}
}
