package jsonvalid

import (
	"encoding/json"
	"slices"
	"testing"
)

// Numbers compare exactly, beyond what float64 tells apart.
func TestNumbersCompareExactly(t *testing.T) {
	for _, tc := range []struct {
		n    string
		b    Bound
		want int
	}{
		{"9007199254740993", Bound{Text: "9007199254740992", Float: 9007199254740992}, 1},
		{"1099511627776", Bound{Text: "1099511627776", Float: 1099511627776, Integer: 1099511627776, IsInteger: true}, 0},
		{"0.30000000000000001", Bound{Text: "0.3", Float: 0.3}, 1},
		{"-5", Bound{Text: "1", Float: 1, Integer: 1, IsInteger: true}, -1},
		{"1e2", Bound{Text: "100", Float: 100, Integer: 100, IsInteger: true}, 0},
	} {
		if got := CompareNumber(json.Number(tc.n), tc.b); got != tc.want {
			t.Errorf("CompareNumber(%s, %s) = %d, want %d", tc.n, tc.b.Text, got, tc.want)
		}
	}
	if !IsType(json.Number("1.0"), "integer") || IsType(json.Number("1.5"), "integer") || !IsType(json.Number("1e300"), "integer") {
		t.Error("an integer is a number without a fractional part, whatever its spelling")
	}
	if !IsMultipleOf(json.Number("0.3"), "0.1") || IsMultipleOf(json.Number("0.35"), "0.1") {
		t.Error("multipleOf is exact in decimal")
	}
}

// Violations carry the JSON pointer of where they happened, and a passing branch of anyOf
// leaves none behind.
func TestViolationsNameTheirPlace(t *testing.T) {
	var st State
	st.Push("a/b")
	st.PushIndex(2)
	st.Missing("c~d")
	st.Pop()
	st.TypeError(true, []string{"string"})
	st.Pop()
	st.AnyOf("x", func(_ any, st *State) { st.Fail("const", "no") }, Any)
	got := st.Violations()
	want := []string{"/a~1b/2/c~0d", "/a~1b"}
	if len(got) != 2 || got[0].Pointer != want[0] || got[1].Pointer != want[1] || got[1].Got != "boolean" {
		t.Fatalf("violations %+v, want pointers %v", got, want)
	}
	if st.Passes("x", None) || !st.Passes("x", Any) || len(st.Violations()) != 2 {
		t.Error("Passes must say whether a schema passes and record nothing")
	}
	if keys := SortedKeys(map[string]any{"b": 1, "a": 2}); !slices.Equal(keys, []string{"a", "b"}) {
		t.Errorf("SortedKeys = %v", keys)
	}
}
