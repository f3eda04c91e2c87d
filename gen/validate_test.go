package gen

import (
	"encoding/json"
	"testing"
)

// The generated validators compare numbers exactly, taking int64 and float64 short cuts only
// where they cannot change the answer.
func TestNumbersCompareExactly(t *testing.T) {
	one := numberBound{text: "1", float: 1, integer: 1, isInteger: true}
	hundredth := numberBound{text: "0.01", float: 0.01}
	big := numberBound{text: "12345678901234567891", float: 12345678901234567891}
	tests := []struct {
		n    string
		b    numberBound
		want int
	}{
		{"1", one, 0},
		{"0", one, -1},
		{"2", one, 1},
		{"1.0", one, 0},
		{"1e0", one, 0},
		{"0.99999999999999999999", one, -1}, // rounds to 1.0 as a float
		{"1.00000000000000000001", one, 1},
		{"-0", one, -1},
		{"1e400", one, 1},
		{"-1e400", one, -1},
		{"0.01", hundredth, 0},
		{"0.010000000000000000001", hundredth, 1},
		{"0.009999999999999999999", hundredth, -1},
		{"12345678901234567890", big, -1}, // both round to the same float
		{"12345678901234567891", big, 0},
		{"12345678901234567892", big, 1},
	}
	for _, tc := range tests {
		if got := compareNumber(json.Number(tc.n), tc.b); got != tc.want {
			t.Errorf("compareNumber(%s, %s) = %d, want %d", tc.n, tc.b.text, got, tc.want)
		}
	}
}

func TestIntegersAreNumbersWithoutAFraction(t *testing.T) {
	for n, want := range map[string]bool{
		"3": true, "-3": true, "3.0": true, "3e2": true, "1e400": true, "123456789012345678901234": true,
		"3.5": false, "1.00000000000000000001": false, "1e-400": false, "-0.5": false,
	} {
		if got := isInteger(json.Number(n)); got != want {
			t.Errorf("isInteger(%s) = %v, want %v", n, got, want)
		}
	}
}

func TestValidatePublishedKnowsEveryPublishedSchema(t *testing.T) {
	for _, p := range Published {
		if _, ok := ValidatePublished(p.Path, map[string]any{}); !ok {
			t.Errorf("no validator for %s", p.Path)
		}
	}
	if _, ok := ValidatePublished("tools/nothing.input.json", nil); ok {
		t.Error("a path nothing is published at must have no validator")
	}
}
