package conventions

import (
	"errors"
	"reflect"
	"testing"
)

func TestPresetsLoadAndValidate(t *testing.T) {
	for _, name := range PresetNames() {
		c, err := Preset(name)
		if err != nil {
			t.Fatalf("preset %s: %v", name, err)
		}
		if c.Preset != name || len(c.Domains) == 0 || c.DefaultDomain == "" || len(c.DBKeys.KeyPrefixes) == 0 {
			t.Fatalf("preset %s is incomplete: %+v", name, c)
		}
	}
	if Default().Preset != "otel" {
		t.Fatal("the default preset is not otel")
	}
}

func TestLoad(t *testing.T) {
	tests := []struct {
		name    string
		doc     string
		wantErr bool
		check   func(t *testing.T, c *Conventions)
	}{
		{name: "an empty document is the otel preset", doc: ``, check: func(t *testing.T, c *Conventions) {
			if c.Preset != "otel" || c.DefaultDomain != "internal" {
				t.Fatalf("got %+v", c)
			}
		}},
		{name: "a list in the override replaces the preset's list", doc: `{"preset":"netscript","executionIdKeys":["my.run"]}`, check: func(t *testing.T, c *Conventions) {
			if !reflect.DeepEqual(c.ExecutionIDKeys, []string{"my.run"}) {
				t.Fatalf("execution keys %v", c.ExecutionIDKeys)
			}
			if c.DefaultDomain != "service" {
				t.Fatalf("netscript default domain lost: %q", c.DefaultDomain)
			}
		}},
		{name: "a nested object merges key by key", doc: `{"job":{"nameKeys":["task.name"]}}`, check: func(t *testing.T, c *Conventions) {
			if !reflect.DeepEqual(c.JobKeys.NameKeys, []string{"task.name"}) {
				t.Fatalf("name keys %v", c.JobKeys.NameKeys)
			}
			if !reflect.DeepEqual(c.JobKeys.IDKeys, []string{"job.id"}) {
				t.Fatalf("id keys not kept from the preset: %v", c.JobKeys.IDKeys)
			}
		}},
		{name: "a scalar overrides", doc: `{"defaultDomain":"other"}`, check: func(t *testing.T, c *Conventions) {
			if c.DefaultDomain != "other" {
				t.Fatalf("default domain %q", c.DefaultDomain)
			}
		}},
		{name: "an unknown key is refused", doc: `{"executionKeys":["x"]}`, wantErr: true},
		{name: "an unknown preset is refused", doc: `{"preset":"zipkin"}`, wantErr: true},
		{name: "a rule with both a prefix and a key is refused", doc: `{"domains":[{"domain":"x","when":{"keyPrefix":"a.","key":"b"}}]}`, wantErr: true},
		{name: "a rule with equals but no key is refused", doc: `{"domains":[{"domain":"x","when":{"keyPrefix":"a.","equals":"b"}}]}`, wantErr: true},
		{name: "a domain name with capitals is refused", doc: `{"defaultDomain":"Other"}`, wantErr: true},
		{name: "a document that is not an object is refused", doc: `[1]`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Load([]byte(tt.doc))
			if tt.wantErr {
				if !errors.Is(err, ErrInvalid) {
					t.Fatalf("want ErrInvalid, got %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("load: %v", err)
			}
			tt.check(t, c)
		})
	}
}

func TestDomain(t *testing.T) {
	otel, netscript := Default(), mustPreset(t, "netscript")
	tests := []struct {
		name  string
		c     *Conventions
		attrs Attributes
		want  string
	}{
		{"a stable http method is http", otel, Attributes{"http.request.method": "GET"}, "http"},
		{"a legacy http method is http", otel, Attributes{"http.method": "GET"}, "http"},
		{"an rpc system is rpc", otel, Attributes{"rpc.system": "grpc"}, "rpc"},
		{"a messaging system is messaging", otel, Attributes{"messaging.system": "kafka"}, "messaging"},
		{"a job id is job", otel, Attributes{"job.id": "j1"}, "job"},
		{"a timer trigger is job", otel, Attributes{"faas.trigger": "timer"}, "job"},
		{"an http trigger is not job", otel, Attributes{"faas.trigger": "http"}, "internal"},
		{"nothing known is internal", otel, Attributes{"x": "y"}, "internal"},
		{"an empty value does not match", otel, Attributes{"http.method": ""}, "internal"},
		{"saga wins over trigger by order", netscript, Attributes{"netscript.trigger.id": "t", "netscript.saga.id": "s"}, "saga"},
		{"a trigger attribute is trigger", netscript, Attributes{"netscript.trigger.id": "t"}, "trigger"},
		{"a worker attribute is worker", netscript, Attributes{"netscript.worker.id": "w"}, "worker"},
		{"an sse attribute is stream", netscript, Attributes{"netscript.sse.channel": "c"}, "stream"},
		{"a job attribute alone is service", netscript, Attributes{"netscript.job.id": "j"}, "service"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.c.Domain(tt.attrs); got != tt.want {
				t.Fatalf("Domain = %q, want %q", got, tt.want)
			}
		})
	}
	if got, want := netscript.DomainNames(), []string{"saga", "trigger", "worker", "stream", "service"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("netscript domain names %v, want %v", got, want)
	}
	if got, want := otel.DomainNames(), []string{"http", "rpc", "messaging", "job", "internal"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("otel domain names %v, want %v", got, want)
	}
}

func TestExecutionIDTakesTheFirstNonEmptyKey(t *testing.T) {
	c := mustPreset(t, "netscript")
	attrs := Attributes{"netscript.execution.id": "", "netscript.job.id": "job-1", "netscript.trigger.id": "t-1"}
	if got := c.ExecutionID(attrs); got != "job-1" {
		t.Fatalf("ExecutionID = %q, want job-1", got)
	}
	if got := c.ExecutionID(Attributes{}); got != "" {
		t.Fatalf("ExecutionID of a span without keys = %q, want empty", got)
	}
}

func TestJob(t *testing.T) {
	c := mustPreset(t, "netscript")
	tests := []struct {
		name     string
		attrs    Attributes
		ok       bool
		exitCode *int64
	}{
		{"a numeric exit code is read", Attributes{"netscript.job.id": "j", "netscript.job.exit_code": "2"}, true, ptr(2)},
		{"a numeric string exit code is read", Attributes{"netscript.job.id": "j", "netscript.job.exit_code": " 3 "}, true, ptr(3)},
		{"a float-looking integer exit code is read", Attributes{"netscript.job.id": "j", "netscript.job.exit_code": "4.0"}, true, ptr(4)},
		{"a word is not an exit code", Attributes{"netscript.job.id": "j", "netscript.job.exit_code": "boom"}, true, nil},
		{"a span without a job id is no job", Attributes{"netscript.job.name": "x"}, false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j, ok := c.Job(tt.attrs)
			if ok != tt.ok {
				t.Fatalf("ok = %v", ok)
			}
			if !reflect.DeepEqual(j.ExitCode, tt.exitCode) {
				t.Fatalf("exit code %v, want %v", deref(j.ExitCode), deref(tt.exitCode))
			}
		})
	}
	j, _ := c.Job(Attributes{"netscript.job.id": "j", "netscript.job.name": "nightly", "netscript.job.status": "failed", "netscript.outcome": "retry"})
	if j.ID != "j" || j.Name != "nightly" || j.Status != "failed" || j.OutcomeText != "retry" {
		t.Fatalf("job fields %+v", j)
	}
}

func TestDBOperation(t *testing.T) {
	otel, netscript := Default(), mustPreset(t, "netscript")
	tests := []struct {
		name       string
		c          *Conventions
		attrs      Attributes
		wantOK     bool
		wantLabel  string
		wantSystem string
	}{
		{"the query summary wins", otel, Attributes{"db.query.summary": "SELECT users", "db.operation.name": "SELECT", "db.collection.name": "orders", "db.system.name": "postgresql"}, true, "SELECT users", "postgresql"},
		{"operation and collection come next", otel, Attributes{"db.operation.name": "INSERT", "db.collection.name": "orders", "db.system": "mysql"}, true, "INSERT orders", "mysql"},
		{"the stable system name wins over the legacy one", otel, Attributes{"db.system.name": "postgresql", "db.system": "postgres", "db.operation": "SELECT", "db.sql.table": "t"}, true, "SELECT t", "postgresql"},
		{"a legacy statement is normalized", otel, Attributes{"db.statement": "SELECT * FROM users WHERE id = 42", "db.system": "postgresql"}, true, "SELECT * FROM users WHERE id = ?", "postgresql"},
		{"a stable query text is normalized", otel, Attributes{"db.query.text": "DELETE FROM s WHERE k = 'x'"}, true, "DELETE FROM s WHERE k = ?", ""},
		{"an operation alone is the label when there is no statement", netscript, Attributes{"netscript.kv.operation": "get"}, true, "get", ""},
		{"a pool connect without a query is not a db operation", otel, Attributes{"db.namespace": "app", "db.system": "postgresql"}, false, "", ""},
		{"a span without db attributes is not a db operation", otel, Attributes{"http.method": "GET"}, false, "", ""},
		{"kv attributes are not db operations under otel", otel, Attributes{"netscript.kv.operation": "get"}, false, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			op, ok := tt.c.DBOperation("span-name", tt.attrs)
			if ok != tt.wantOK || op.Label != tt.wantLabel || op.System != tt.wantSystem {
				t.Fatalf("got %+v ok=%v, want label %q system %q ok=%v", op, ok, tt.wantLabel, tt.wantSystem, tt.wantOK)
			}
		})
	}
}

func TestDBOperationKeysByStatementNotByTable(t *testing.T) {
	c := Default()
	fast, _ := c.DBOperation("SELECT orders", Attributes{"db.system.name": "postgresql", "db.operation.name": "SELECT", "db.collection.name": "orders", "db.query.text": "SELECT * FROM orders WHERE id = 7"})
	fast2, _ := c.DBOperation("SELECT orders", Attributes{"db.system.name": "postgresql", "db.operation.name": "SELECT", "db.collection.name": "orders", "db.query.text": "SELECT * FROM orders WHERE id = 8"})
	slow, _ := c.DBOperation("SELECT orders", Attributes{"db.system.name": "postgresql", "db.operation.name": "SELECT", "db.collection.name": "orders", "db.query.text": "SELECT * FROM orders JOIN customers ON c.id = o.cid WHERE c.name ILIKE '%x%'"})
	if fast.Key != fast2.Key {
		t.Fatalf("the same query with other literals has two keys: %q, %q", fast.Key, fast2.Key)
	}
	if fast.Key == slow.Key {
		t.Fatalf("two different queries on one table share the key %q", fast.Key)
	}
	if fast.Label != "SELECT orders" || slow.Statement != "SELECT * FROM orders JOIN customers ON c.id = o.cid WHERE c.name ILIKE ?" {
		t.Fatalf("label %q statement %q", fast.Label, slow.Statement)
	}
}

func TestNormalizeStatusTreatsErrorWordsAsErrors(t *testing.T) {
	c := Default()
	one := int64(1)
	tests := []struct {
		name, word string
		failed     bool
		exit       *int64
		want       string
	}{
		{"failed is an error", "failed", false, nil, StatusError},
		{"case and spaces do not matter", "  Cancelled ", false, nil, StatusError},
		{"succeeded is ok even if a span failed", "succeeded", true, nil, StatusOK},
		{"no word and a failed span is an error", "", true, nil, StatusError},
		{"no word and a non-zero exit code is an error", "", false, &one, StatusError},
		{"no word and nothing failed is ok", "", false, nil, StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := c.NormalizeStatus(tt.word, tt.failed, tt.exit); got != tt.want {
				t.Fatalf("NormalizeStatus(%q, %v) = %s, want %s", tt.word, tt.failed, got, tt.want)
			}
		})
	}
}

func TestIsSensitiveIgnoresCase(t *testing.T) {
	if !Default().IsSensitive("HTTP.Request.Header.Authorization") {
		t.Fatal("authorization header not sensitive")
	}
	if Default().IsSensitive("http.request.method") {
		t.Fatal("method is sensitive")
	}
}

func TestIsErrorLog(t *testing.T) {
	tests := []struct {
		name string
		num  int32
		text string
		want bool
	}{
		{"severity ERROR is an error", 17, "", true},
		{"severity FATAL4 is an error", 24, "", true},
		{"severity WARN4 is not", 16, "", false},
		{"the text error in any case is an error", 0, "Error", true},
		{"the text FATAL is an error", 0, "FATAL", true},
		{"the text warning is not", 13, "warning", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := IsErrorLog(tt.num, tt.text); got != tt.want {
				t.Fatalf("IsErrorLog(%d, %q) = %v", tt.num, tt.text, got)
			}
		})
	}
}

func mustPreset(t *testing.T, name string) *Conventions {
	t.Helper()
	c, err := Preset(name)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func ptr(n int64) *int64 { return &n }

func deref(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}
