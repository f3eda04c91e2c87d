package flows

import "testing"

func TestTheInvocationAttributeIsRunlenssToSet(t *testing.T) {
	tests := []struct {
		name, inherited, want string
		replaced              bool
	}{
		{"an empty environment gets the id alone", "", "runlens.invocation.id=new", false},
		{"other attributes are kept before it", "service.version=1.2,deployment.environment.name=ci", "service.version=1.2,deployment.environment.name=ci,runlens.invocation.id=new", false},
		{"an inherited id is replaced", "a=1,runlens.invocation.id=old,b=2", "a=1,b=2,runlens.invocation.id=new", true},
		{"an inherited id with spaces around its key is replaced", " runlens.invocation.id =old", "runlens.invocation.id=new", true},
		{"empty entries are dropped", "a=1,,", "a=1,runlens.invocation.id=new", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, replaced := withInvocation(tt.inherited, "new")
			if got != tt.want || replaced != tt.replaced {
				t.Fatalf("withInvocation(%q) = %q, %v; want %q, %v", tt.inherited, got, replaced, tt.want, tt.replaced)
			}
		})
	}
}
