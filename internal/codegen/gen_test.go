package codegen_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/runlens/runlens/gen"
)

// typed returns fresh values of a tool's generated input and output types.
var typed = map[string]func() (in, out any){
	gen.ToolGetAppStatus:     func() (any, any) { return &gen.GetAppStatusInput{}, &gen.GetAppStatusOutput{} },
	gen.ToolListRuns:         func() (any, any) { return &gen.ListRunsInput{}, &gen.ListRunsOutput{} },
	gen.ToolGetRun:           func() (any, any) { return &gen.GetRunInput{}, &gen.GetRunOutput{} },
	gen.ToolGetRecentErrors:  func() (any, any) { return &gen.GetRecentErrorsInput{}, &gen.GetRecentErrorsOutput{} },
	gen.ToolGetLastJobResult: func() (any, any) { return &gen.GetLastJobResultInput{}, &gen.GetLastJobResultOutput{} },
	gen.ToolAnalyzeServicePerformance: func() (any, any) {
		return &gen.AnalyzeServicePerformanceInput{}, &gen.AnalyzeServicePerformanceOutput{}
	},
	gen.ToolAnalyzeDBBottlenecks: func() (any, any) { return &gen.AnalyzeDBBottlenecksInput{}, &gen.AnalyzeDBBottlenecksOutput{} },
	gen.ToolDoctor:               func() (any, any) { return &gen.DoctorInput{}, &gen.DoctorOutput{} },
	gen.ToolSearchDocs:           func() (any, any) { return &gen.SearchDocsInput{}, &gen.SearchDocsOutput{} },
	gen.ToolListDocs:             func() (any, any) { return &gen.ListDocsInput{}, &gen.ListDocsOutput{} },
	gen.ToolGetDoc:               func() (any, any) { return &gen.GetDocInput{}, &gen.GetDocOutput{} },
	gen.ToolListCommands:         func() (any, any) { return &gen.ListCommandsInput{}, &gen.ListCommandsOutput{} },
	gen.ToolExecuteCommand:       func() (any, any) { return &gen.ExecuteCommandInput{}, &gen.ExecuteCommandOutput{} },
	gen.ToolRunlensCapabilities:  func() (any, any) { return &gen.RunlensCapabilitiesInput{}, &gen.RunlensCapabilitiesOutput{} },
	gen.ToolRunlens:              func() (any, any) { return &gen.RunlensInput{}, &gen.RunlensOutput{} },
}

// TestValidExamplesSurviveADecodeEncodeRoundTrip decodes every valid example into its
// generated type and encodes it back: the JSON must be equal, so the generated types lose
// nothing a client may send or a flow may answer.
func TestValidExamplesSurviveADecodeEncodeRoundTrip(t *testing.T) {
	for _, name := range append(append([]string{}, gen.FullProfile...), gen.CompactProfile...) {
		newTypes, ok := typed[name]
		if !ok {
			t.Errorf("no generated types listed for %s in this test", name)
			continue
		}
		files, _ := filepath.Glob(filepath.Join("../../schemas/examples", name, "valid-*.json"))
		if len(files) == 0 {
			t.Errorf("%s has no valid examples", name)
		}
		for _, f := range files {
			t.Run(name+"/"+filepath.Base(f), func(t *testing.T) {
				data, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				in, out := newTypes()
				v := in
				if strings.HasPrefix(filepath.Base(f), "valid-output") {
					v = out
				}
				dec := json.NewDecoder(strings.NewReader(string(data)))
				dec.DisallowUnknownFields()
				if err := dec.Decode(v); err != nil {
					t.Fatalf("decode into %T: %v", v, err)
				}
				back, err := json.Marshal(v)
				if err != nil {
					t.Fatal(err)
				}
				var want, got any
				if err := json.Unmarshal(data, &want); err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal(back, &got); err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(want, got) {
					t.Errorf("round trip through %T changed the JSON\nwant %s\ngot  %s", v, data, back)
				}
			})
		}
	}
}

// listRunsOnly is a Flows that answers list_runs and remembers its input; the embedded
// interface stays nil, so any other call would fail the test loudly.
type listRunsOnly struct {
	gen.Flows
	got gen.ListRunsInput
}

func (f *listRunsOnly) ListRuns(_ context.Context, in gen.ListRunsInput) (gen.ListRunsOutput, error) {
	f.got = in
	return gen.ListRunsOutput{Count: 1}, nil
}

func TestCallDecodesAppliesSchemaDefaultsAndReturnsTheTypedOutput(t *testing.T) {
	tool, ok := gen.Lookup(gen.ToolListRuns)
	if !ok || tool.Call == nil {
		t.Fatal("list_runs is not callable from the registry")
	}
	f := &listRunsOnly{}
	out, err := tool.Call(context.Background(), f, json.RawMessage(`{"service": "checkout"}`))
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := out.(gen.ListRunsOutput); !ok || o.Count != 1 {
		t.Errorf("Call returned %#v, want the flow's gen.ListRunsOutput", out)
	}
	if f.got.Limit != 20 {
		t.Errorf("limit = %d, want the schema default 20", f.got.Limit)
	}
	if f.got.Detail != gen.DetailStandard {
		t.Errorf("detail = %q, want the schema default %q", f.got.Detail, gen.DetailStandard)
	}
	if f.got.Service == nil || *f.got.Service != "checkout" {
		t.Errorf("service = %v, want the caller's value", f.got.Service)
	}
	f.got = gen.ListRunsInput{}
	if _, err := tool.Call(context.Background(), f, json.RawMessage(`{"limit": 7}`)); err != nil {
		t.Fatal(err)
	}
	if f.got.Limit != 7 {
		t.Errorf("limit = %d, a value the caller sent must win over the default", f.got.Limit)
	}
}

func TestRegistryListsEveryToolOnceWithItsSchemas(t *testing.T) {
	if len(gen.Tools) != len(gen.FullProfile) || len(gen.CompactTools) != len(gen.CompactProfile) {
		t.Fatalf("registry has %d+%d tools, profiles name %d+%d", len(gen.Tools), len(gen.CompactTools), len(gen.FullProfile), len(gen.CompactProfile))
	}
	for i, tl := range gen.Tools {
		if tl.Name != gen.FullProfile[i] || tl.Call == nil {
			t.Errorf("Tools[%d] = %s (call set: %v), want %s with a Call", i, tl.Name, tl.Call != nil, gen.FullProfile[i])
		}
	}
	for i, tl := range gen.CompactTools {
		if tl.Name != gen.CompactProfile[i] || tl.Call != nil {
			t.Errorf("CompactTools[%d] = %s, want %s without a Call", i, tl.Name, gen.CompactProfile[i])
		}
	}
	for _, tl := range append(append([]gen.Tool{}, gen.Tools...), gen.CompactTools...) {
		for side, schema := range map[string][]byte{"input": tl.InputSchema, "output": tl.OutputSchema} {
			var m map[string]any
			if err := json.Unmarshal(schema, &m); err != nil || m["type"] != "object" {
				t.Errorf("%s %s schema is not an object schema: %v", tl.Name, side, err)
			}
		}
		if tl.Title == "" || tl.Description == "" || tl.Annotations.ReadOnlyHint == nil {
			t.Errorf("%s lacks title, description or annotations", tl.Name)
		}
	}
	if _, ok := gen.Lookup("no_such_tool"); ok {
		t.Error("Lookup found a tool that does not exist")
	}
	if !strings.HasPrefix(gen.SchemaDigest, "sha256:") || len(gen.SchemaDigest) != len("sha256:")+64 {
		t.Errorf("SchemaDigest = %q", gen.SchemaDigest)
	}
}

// TestEmbeddedSchemaFilesAreTheOnesTheDigestCovers proves that the files package schemas
// embeds are the ones generation wrote with gen/: the digest over their compact bytes is the
// digest the generator stamped into gen/schemas_gen.go.
func TestEmbeddedSchemaFilesAreTheOnesTheDigestCovers(t *testing.T) {
	h := sha256.New()
	for _, p := range gen.Published {
		var compact bytes.Buffer
		if err := json.Compact(&compact, p.JSON); err != nil {
			t.Fatalf("%s: %v", p.Path, err)
		}
		h.Write([]byte(p.Path + "\n"))
		h.Write(compact.Bytes())
		h.Write([]byte("\n"))
	}
	if got := "sha256:" + hex.EncodeToString(h.Sum(nil)); got != gen.SchemaDigest {
		t.Errorf("digest of the embedded schemas %s, gen.SchemaDigest %s", got, gen.SchemaDigest)
	}
}
