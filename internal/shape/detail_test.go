package shape

import "testing"

func TestParseDetail(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    Detail
		wantErr bool
	}{
		{name: "an empty argument means standard", in: "", want: Standard},
		{name: "summary is accepted", in: "summary", want: Summary},
		{name: "standard is accepted", in: "standard", want: Standard},
		{name: "full is accepted", in: "full", want: Full},
		{name: "surrounding space is ignored", in: " full ", want: Full},
		{name: "an unknown level is an error", in: "verbose", wantErr: true},
		{name: "case matters as in the schema enum", in: "Full", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseDetail(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("ParseDetail(%q) error = %v, want error %v", tt.in, err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("ParseDetail(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestDefaultLimits(t *testing.T) {
	tests := []struct {
		name  string
		d     Detail
		large bool
		want  int
	}{
		{name: "summary answers get 4 KiB", d: Summary, want: 4096},
		{name: "summary stays 4 KiB for large tools", d: Summary, large: true, want: 4096},
		{name: "standard answers get 16 KiB", d: Standard, want: 16384},
		{name: "standard answers of large tools get 32 KiB", d: Standard, large: true, want: 32768},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := DefaultLimits(tt.d, tt.large)
			if got.Budget != tt.want || got.FullCeiling != 8<<20 {
				t.Errorf("DefaultLimits(%q, %v) = %+v, want budget %d and an 8 MiB ceiling", tt.d, tt.large, got, tt.want)
			}
		})
	}
}
