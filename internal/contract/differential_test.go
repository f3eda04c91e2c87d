package contract_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/runlens/runlens/gen"
	"github.com/runlens/runlens/internal/contract"
	"github.com/runlens/runlens/internal/contract/oracle"
	"github.com/runlens/runlens/internal/testkit"
)

// patternSamples are strings each schema pattern matches, for building valid instances: a
// pattern is not a generator. A pattern added to the schemas needs a sample here.
var patternSamples = map[string]string{
	`\S`: "x",
	`^(sqlite:.+|clickhouse(\+https?)?://.+|aspire|aspire\+https?://.+|jaeger\+https?://.+)$`: "sqlite:a.db",
	`^--?[^\s=-][^\s=]*(=.*)?$`:                                      "--flag=v",
	`^[1-9][0-9]{0,5}(m|h|d)$`:                                       "24h",
	`^[1-9]\d{0,3}[smhd]$`:                                           "15m",
	`^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$`:                      "host.local",
	`^[A-Za-z0-9][A-Za-z0-9:._+-]*( [A-Za-z0-9][A-Za-z0-9:._+-]*)*$`: "db migrate",
	`^[A-Za-z0-9][A-Za-z0-9_.:-]*$`:                                  "a.b",
	`^[A-Za-z_][A-Za-z0-9_.]*$`:                                      "a.b",
	`^[A-Za-z_][A-Za-z0-9_]*$`:                                       "A_B",
	`^[\w-]{1,64}$`:                                                  "inv-1",
	`^[^\r\n]+$`:                                                     "one line",
	`^[a-z][a-z0-9_-]*$`:                                             "db",
	`^\*?[A-Za-z0-9_]+\*?$`:                                          "*x*",
}

// ecmaOnly are characters on which ECMA-262 patterns (the generated validators, Ajv) and Go's
// RE2 read by the run-time library disagree: "." does not match the line terminators, and \s
// counts Unicode spaces. Instances holding them are compared with Ajv only.
const ecmaOnly = "\v\r\u00a0\u1680\u2000\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"

// instance is one generated test instance of one published schema.
type instance struct {
	schema int // index into gen.Published
	value  any
	what   string // how it was made, for failure messages
	ecma   bool   // holds an ecmaOnly character
}

// TestGeneratedValidatorsAgreeWithTheOracleAndAjv builds valid instances of every published
// schema and mutations of them (wrong type, missing required, unknown property, out of range,
// fractional integer, bad enum, too long or short, pattern-breaking, too many or few items, at
// every depth) and requires three validators to agree: the generated one, the run-time library
// (same field errors: pointers and messages) and Ajv's draft 2020-12 (same verdict).
func TestGeneratedValidatorsAgreeWithTheOracleAndAjv(t *testing.T) {
	var all []instance
	schemas := make([]any, len(gen.Published))
	for i, p := range gen.Published {
		s, err := contract.Decode(p.JSON)
		if err != nil {
			t.Fatalf("%s: %v", p.Path, err)
		}
		schemas[i] = s
		g := &instanceGen{t: t, rng: rand.New(rand.NewPCG(uint64(i), 7))}
		for round := range 3 {
			g.optional = round > 0
			valid := g.valid(s)
			all = append(all, instance{schema: i, value: valid, what: fmt.Sprintf("valid #%d", round)})
			for _, m := range g.mutations(s, valid, "") {
				m.schema = i
				all = append(all, m)
			}
		}
	}
	o := oracle.NewValidator()
	validCount := map[int]int{}
	generated := make([]bool, len(all))
	for n, in := range all {
		p := gen.Published[in.schema]
		raw, err := json.Marshal(in.value)
		if err != nil {
			t.Fatal(err)
		}
		got, err := contract.Validate(p.Path, raw)
		if err != nil {
			t.Fatalf("%s %s: %v", p.Path, in.what, err)
		}
		generated[n] = len(got) == 0
		if generated[n] {
			validCount[in.schema]++
		}
		if strings.HasPrefix(in.what, "valid") && len(got) > 0 {
			t.Errorf("%s: the generated valid instance %s fails: %v", p.Path, raw, got)
		}
		if in.ecma {
			continue
		}
		want, err := o.Validate(p.Path, p.JSON, raw)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s, %s %s:\ngenerated %v\noracle    %v", p.Path, in.what, raw, got, want)
		}
	}
	for i, p := range gen.Published {
		if validCount[i] == 0 {
			t.Errorf("%s: no generated instance is valid", p.Path)
		}
	}
	t.Logf("%d instances of %d schemas", len(all), len(gen.Published))
	ajv := ajvVerdicts(t, schemas, all)
	for n, in := range all {
		if ajv[n] != generated[n] {
			raw, _ := json.Marshal(in.value)
			t.Errorf("%s, %s %s: generated valid=%v, Ajv valid=%v", gen.Published[in.schema].Path, in.what, raw, generated[n], ajv[n])
		}
	}
}

// instanceGen builds instances from a schema.
type instanceGen struct {
	t        *testing.T
	rng      *rand.Rand
	optional bool // include optional properties
}

// valid builds an instance the schema accepts.
func (g *instanceGen) valid(s any) any {
	m, _ := s.(map[string]any)
	if enum, ok := m["enum"].([]any); ok {
		return enum[g.rng.IntN(len(enum))]
	}
	if c, ok := m["const"]; ok {
		return c
	}
	switch typeOf(m) {
	case "object":
		return g.validObject(m)
	case "array":
		items, _ := m["items"].(map[string]any)
		n := intKeyword(m, "minItems", 0)
		if g.optional {
			n = min(n+1, intKeyword(m, "maxItems", n+1))
		}
		out := make([]any, n)
		for i := range out {
			out[i] = g.valid(items)
		}
		return out
	case "string":
		return g.validString(m)
	case "integer":
		lo := intKeyword(m, "minimum", 0)
		return json.Number(fmt.Sprint(min(lo+g.rng.IntN(2), intKeyword(m, "maximum", lo+1))))
	case "number":
		lo := floatKeyword(m, "minimum", 0)
		hi := floatKeyword(m, "maximum", lo+1)
		return json.Number(strconv.FormatFloat(lo+(hi-lo)/2, 'f', -1, 64))
	case "boolean":
		return g.rng.IntN(2) == 0
	case "null":
		return nil
	}
	return "untyped"
}

// validObject builds an object with the required properties (and, with g.optional, the
// others), choosing the first branch of a oneOf or anyOf whose own required list it then meets.
func (g *instanceGen) validObject(m map[string]any) map[string]any {
	props, _ := m["properties"].(map[string]any)
	want := map[string]bool{}
	for _, r := range stringList(m["required"]) {
		want[r] = true
	}
	branched := false
	for _, key := range []string{"oneOf", "anyOf"} {
		if branches, ok := m[key].([]any); ok {
			b, _ := branches[g.rng.IntN(len(branches))].(map[string]any)
			for _, r := range stringList(b["required"]) {
				want[r] = true
			}
			branched = true
		}
	}
	out := map[string]any{}
	for name, ps := range props {
		if want[name] || (g.optional && !branched) {
			out[name] = g.valid(ps)
		}
	}
	if ap, ok := m["additionalProperties"].(map[string]any); ok && g.optional {
		out["k1"] = g.valid(ap)
	}
	return out
}

// validString builds a string of the schema's length that matches its pattern.
func (g *instanceGen) validString(m map[string]any) string {
	if p, ok := m["pattern"].(string); ok {
		s, known := patternSamples[p]
		if !known {
			g.t.Fatalf("pattern %s has no sample in patternSamples", p)
		}
		return s
	}
	n := max(intKeyword(m, "minLength", 0), 1)
	n = min(n+g.rng.IntN(3), intKeyword(m, "maxLength", n))
	return strings.Repeat("é", n)
}

// mutations returns instances that each break valid in one way at one place, at at and below.
func (g *instanceGen) mutations(s any, valid any, at string) []instance {
	m, _ := s.(map[string]any)
	var out []instance
	add := func(what string, v any) {
		out = append(out, instance{value: v, what: what + " at " + cmpOr(at, "/"), ecma: holdsECMAOnly(v)})
	}
	for _, wrong := range []any{json.Number("7"), json.Number("2.5"), "text", true, nil, []any{}, map[string]any{}} {
		if typeOf(m) != "" && isA(wrong, typeOf(m)) {
			continue
		}
		add(fmt.Sprintf("wrong type %T", wrong), replaceAt(valid, at, wrong))
	}
	if _, ok := m["enum"]; ok {
		add("bad enum", replaceAt(valid, at, "not-an-enum-value"))
	}
	switch v := lookup(valid, at).(type) {
	case map[string]any:
		for _, r := range stringList(m["required"]) {
			add("missing "+r, deleteAt(valid, at, r))
		}
		if m["additionalProperties"] == false {
			add("unknown property", replaceAt(valid, at+"/zzUnknown", json.Number("1")))
		}
		props, _ := m["properties"].(map[string]any)
		for _, name := range sortedNames(v) {
			ps, ok := props[name]
			if !ok {
				ps = m["additionalProperties"]
			}
			out = append(out, g.mutations(ps, valid, at+"/"+escape(name))...)
		}
		for _, key := range []string{"oneOf", "anyOf"} {
			if _, ok := m[key]; ok {
				for name, ps := range props {
					if _, present := v[name]; !present {
						add("also "+name, replaceAt(valid, at+"/"+escape(name), g.valid(ps)))
					}
				}
			}
		}
	case []any:
		items := m["items"]
		if n, ok := m["maxItems"]; ok && len(v) > 0 {
			extra := slices.Repeat(v[:1], toInt(n)+1)
			add("too many items", replaceAt(valid, at, extra))
		}
		if intKeyword(m, "minItems", 0) > 0 {
			add("too few items", replaceAt(valid, at, []any{}))
		}
		for i := range v {
			out = append(out, g.mutations(items, valid, fmt.Sprintf("%s/%d", at, i))...)
		}
	case string:
		if n, ok := m["maxLength"]; ok {
			add("too long", replaceAt(valid, at, strings.Repeat("é", toInt(n)+1)))
		}
		if n := intKeyword(m, "minLength", 0); n > 0 {
			add("too short", replaceAt(valid, at, strings.Repeat("é", n-1)))
		}
		if _, ok := m["pattern"]; ok {
			for _, bad := range []string{"", "%bad value", v + " x", "a\u00a0b", v + "\r", "--a\u2028b", "sqlite:\u2029"} {
				add(fmt.Sprintf("pattern-breaking %q", bad), replaceAt(valid, at, bad))
			}
		}
	case json.Number:
		if n, ok := m["minimum"]; ok {
			add("below minimum", replaceAt(valid, at, json.Number(fmt.Sprint(toInt(n)-1))))
		}
		if n, ok := m["maximum"]; ok {
			add("above maximum", replaceAt(valid, at, json.Number(fmt.Sprint(toInt(n)+1))))
		}
		if typeOf(m) == "integer" {
			add("fractional integer", replaceAt(valid, at, json.Number(string(v)+".5")))
			add("integer written as a decimal", replaceAt(valid, at, json.Number(string(v)+".0")))
		}
	}
	return out
}

// ajvVerdicts validates every instance with Ajv (draft 2020-12, all errors, formats as
// annotations like the other two) in one Node process, and returns whether each is valid.
func ajvVerdicts(t *testing.T, schemas []any, all []instance) []bool {
	t.Helper()
	dir, err := testkit.NodeTools("ajv/dist/2020.js")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("Ajv is needed: %v (CI is set, so this fails instead of skipping)", err)
		}
		t.Skipf("Ajv is needed: %v; run `make tools` or set %s", err, testkit.EnvNodeTools)
	}
	tmp := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(tmp, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	rawSchemas, err := json.Marshal(schemas)
	if err != nil {
		t.Fatal(err)
	}
	var lines bytes.Buffer
	for _, in := range all {
		b, err := json.Marshal(map[string]any{"s": in.schema, "i": in.value})
		if err != nil {
			t.Fatal(err)
		}
		lines.Write(b)
		lines.WriteByte('\n')
	}
	script := write("ajv.js", []byte(ajvScript))
	cmd := exec.Command(filepath.Join(dir, "node_modules", ".bin", "node"), script,
		write("schemas.json", rawSchemas), write("instances.jsonl", lines.Bytes()))
	cmd.Env = append(os.Environ(), "NODE_PATH="+filepath.Join(dir, "node_modules"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node ajv.js: %v\n%s", err, stderr.String())
	}
	verdicts := strings.Fields(string(out))
	if len(verdicts) != len(all) {
		t.Fatalf("Ajv answered %d verdicts for %d instances", len(verdicts), len(all))
	}
	res := make([]bool, len(all))
	for i, v := range verdicts {
		res[i] = v == "1"
	}
	return res
}

// ajvScript compiles every schema with Ajv's draft 2020-12 class and prints 1 (valid) or 0 for
// each instance line.
const ajvScript = `
const fs = require("fs");
const Ajv2020 = require("ajv/dist/2020").default;
const [schemasFile, instancesFile] = process.argv.slice(2);
const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
const validators = JSON.parse(fs.readFileSync(schemasFile, "utf8")).map((s) => ajv.compile(s));
const out = [];
for (const line of fs.readFileSync(instancesFile, "utf8").split("\n")) {
  if (line === "") continue;
  const { s, i } = JSON.parse(line);
  out.push(validators[s](i) ? "1" : "0");
}
process.stdout.write(out.join("\n") + "\n");
`

// typeOf is a schema's single type, "" when it has none or several.
func typeOf(m map[string]any) string {
	t, _ := m["type"].(string)
	return t
}

// isA reports whether a generated value has JSON type t.
func isA(v any, t string) bool {
	switch x := v.(type) {
	case json.Number:
		return t == "number" || (t == "integer" && !strings.Contains(string(x), "."))
	case string:
		return t == "string"
	case bool:
		return t == "boolean"
	case nil:
		return t == "null"
	case []any:
		return t == "array"
	case map[string]any:
		return t == "object"
	}
	return false
}

func intKeyword(m map[string]any, key string, fallback int) int {
	if n, ok := m[key]; ok {
		return toInt(n)
	}
	return fallback
}

func floatKeyword(m map[string]any, key string, fallback float64) float64 {
	n, ok := m[key].(json.Number)
	if !ok {
		return fallback
	}
	f, err := n.Float64()
	if err != nil {
		return fallback
	}
	return f
}

func toInt(v any) int {
	var i int
	fmt.Sscan(fmt.Sprint(v), &i)
	return i
}

func stringList(v any) []string {
	list, _ := v.([]any)
	var out []string
	for _, x := range list {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func sortedNames(m map[string]any) []string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

func escape(tok string) string {
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~", "~0"), "/", "~1")
}

func unescape(tok string) string {
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
}

func cmpOr(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
}

// holdsECMAOnly reports whether any string in v has a character RE2 and ECMA-262 read apart.
func holdsECMAOnly(v any) bool {
	switch x := v.(type) {
	case string:
		return strings.ContainsAny(x, ecmaOnly)
	case []any:
		return slices.ContainsFunc(x, holdsECMAOnly)
	case map[string]any:
		for k, y := range x {
			if strings.ContainsAny(k, ecmaOnly) || holdsECMAOnly(y) {
				return true
			}
		}
	}
	return false
}

// deepCopy copies a decoded JSON value.
func deepCopy(v any) any {
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, y := range x {
			out[i] = deepCopy(y)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, y := range x {
			out[k] = deepCopy(y)
		}
		return out
	}
	return v
}

// lookup returns the value at pointer at.
func lookup(v any, at string) any {
	if at == "" {
		return v
	}
	for _, tok := range strings.Split(at[1:], "/") {
		switch x := v.(type) {
		case map[string]any:
			v = x[unescape(tok)]
		case []any:
			v = x[toInt(tok)]
		default:
			return nil
		}
	}
	return v
}

// replaceAt returns a copy of v with the value at pointer at replaced (or added to its object).
func replaceAt(v any, at string, with any) any {
	if at == "" {
		return with
	}
	root := deepCopy(v)
	i := strings.LastIndexByte(at, '/')
	parent, last := lookup(root, at[:i]), at[i+1:]
	switch x := parent.(type) {
	case map[string]any:
		x[unescape(last)] = with
	case []any:
		x[toInt(last)] = with
	}
	return root
}

// deleteAt returns a copy of v without property name of the object at pointer at.
func deleteAt(v any, at, name string) any {
	root := deepCopy(v)
	if obj, ok := lookup(root, at).(map[string]any); ok {
		delete(obj, name)
	}
	return root
}
