//go:build chdb

package clickhouse

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"pgregory.net/rapid"

	"github.com/runlens/runlens/internal/telemetry"
	"github.com/runlens/runlens/internal/telemetry/clickhouse/chfront"
	"github.com/runlens/runlens/internal/telemetry/conventions"
)

// probeRow is one generated span (or log record) the compiled expressions are evaluated on.
type probeRow struct {
	ID      uint32            `json:"id"`
	Attrs   map[string]string `json:"attrs"`
	Name    string            `json:"name"`
	Code    string            `json:"code"`
	SevNum  uint8             `json:"sev_num"`
	SevText string            `json:"sev_text"`
}

// probeValues are attribute values chosen to sit on the rules' edges: blanks, case and white
// space variants of status words, numbers in every form ParseExitCode meets.
var probeValues = []string{"", " ", "\t", "timer", "Timer", "failed", " FAILED ", "Cancelled\n", "ok", "succeeded",
	"0", "1", "3", " 3 ", "3.0", "-2", "+5", "1e2", "2.5", "5.", ".5", "abc", "0x10", "inf", "NaN", "1_000",
	"9223372036854775807", "9223372036854775808", "-0", "\u00a0error\u2003", "error", "Error", "ERROR ", "fatal",
	"postgresql", "SELECT * FROM orders WHERE id = 42", "get", "orders", "kafka", "grpc", "GET", "nightly-report"}

// probeKeys are every key either preset reads, near misses of them, and a few others.
func probeKeys() []string {
	seen := map[string]bool{}
	var keys []string
	add := func(ks ...string) {
		for _, k := range ks {
			if k != "" && !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	for _, p := range []string{"otel", "netscript"} {
		c, err := conventions.Preset(p)
		if err != nil {
			panic(err)
		}
		add(c.ExecutionIDKeys...)
		add(c.JobKeys.IDKeys...)
		add(c.JobKeys.NameKeys...)
		add(c.JobKeys.StatusKeys...)
		add(c.JobKeys.ExitCodeKeys...)
		add(c.JobKeys.OutcomeKeys...)
		add(c.DBKeys.SystemKeys...)
		add(c.DBKeys.SummaryKeys...)
		add(c.DBKeys.OperationKeys...)
		add(c.DBKeys.CollectionKeys...)
		add(c.DBKeys.StatementKeys...)
		for _, r := range c.Domains {
			add(r.When.Key, r.When.KeyPrefix+"x", r.When.KeyPrefix+"instance.id")
		}
		for _, p := range c.DBKeys.KeyPrefixes {
			add(p+"other", p)
		}
	}
	add("db", "dbx.system", "netscript.saga", "http.request.methods", "job.id2", "service.version", "x")
	return keys
}

func genRows(t *rapid.T) []probeRow {
	keys := probeKeys()
	n := rapid.IntRange(1, 40).Draw(t, "rows")
	rows := make([]probeRow, n)
	for i := range rows {
		attrs := map[string]string{}
		for j, m := 0, rapid.IntRange(0, 8).Draw(t, "attrs"); j < m; j++ {
			attrs[rapid.SampledFrom(keys).Draw(t, "key")] = rapid.OneOf(rapid.SampledFrom(probeValues), rapid.String()).Draw(t, "value")
		}
		rows[i] = probeRow{ID: uint32(i), Attrs: attrs, Name: rapid.SampledFrom([]string{"work", "GET /orders", ""}).Draw(t, "name"),
			Code:    rapid.SampledFrom([]string{telemetry.CodeUnset, telemetry.CodeOk, telemetry.CodeError}).Draw(t, "code"),
			SevNum:  uint8(rapid.IntRange(0, 24).Draw(t, "sev")),
			SevText: rapid.SampledFrom([]string{"", "error", " ERROR ", "Fatal", "warn", "\terror\n", "errors", "\u00a0fatal"}).Draw(t, "sevText")}
	}
	return rows
}

// expected is what the conventions package computes in Go for one row.
type expected struct {
	ExecID, Domain, JobID, JobName, JobStatus string
	ExitCode                                  string // "" when none
	IsDB, DBAttr, ErrorLog                    bool
	System, Statement, Summary, Op, Coll      string
	ExecMatch                                 bool
}

func goEval(conv *conventions.Conventions, r probeRow, execValue string) expected {
	a := conventions.Attributes(r.Attrs)
	span := telemetry.SpanRow{Name: r.Name, StatusCode: r.Code, Attributes: a}
	e := expected{ExecID: conv.ExecutionID(a), Domain: conv.Domain(a)}
	if job, ok := conv.Job(a); ok {
		e.JobID, e.JobName = job.ID, cmp.Or(job.Name, r.Name)
		e.JobStatus = conv.NormalizeStatus(job.Status, span.IsError(), job.ExitCode)
	}
	first := func(keys []string) string {
		for _, k := range keys {
			if v := a[k]; v != "" {
				return v
			}
		}
		return ""
	}
	if code, ok := conventions.ParseExitCode(first(conv.JobKeys.ExitCodeKeys)); ok {
		e.ExitCode = strconv.FormatInt(code, 10)
	}
	scan := telemetry.SpanScan{AttrKeys: telemetry.DBAttrKeys(conv)}
	e.DBAttr = telemetry.MatchSpan(&scan, &span)
	for k := range a {
		for _, p := range conv.DBKeys.KeyPrefixes {
			if len(k) >= len(p) && k[:len(p)] == p {
				e.IsDB = true
			}
		}
	}
	e.System, e.Statement, e.Summary = first(conv.DBKeys.SystemKeys), first(conv.DBKeys.StatementKeys), first(conv.DBKeys.SummaryKeys)
	e.Op, e.Coll = first(conv.DBKeys.OperationKeys), first(conv.DBKeys.CollectionKeys)
	e.ErrorLog = conventions.IsErrorLog(int32(r.SevNum), r.SevText)
	execScan := telemetry.SpanScan{AttrKeys: conv.ExecutionIDKeys, AttrValue: execValue}
	e.ExecMatch = telemetry.MatchSpan(&execScan, &span)
	return e
}

// The conventions compiled to ClickHouse SQL compute, on the ClickHouse engine, what the
// conventions package computes in Go — run key, domain, job fields and normalized status,
// exit code, database fields and the scan filters, the log error rule — for both presets, on
// generated attribute sets.
func TestCompiledConventionsAgreeWithTheGoEvaluation(t *testing.T) {
	if err := chfront.Available(); err != nil {
		t.Fatal(err)
	}
	e, err := chfront.Shared()
	if err != nil {
		t.Fatal(err)
	}
	db := fmt.Sprintf("props_%d", os.Getpid())
	if err := e.Exec("CREATE DATABASE IF NOT EXISTS " + db); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Exec("DROP DATABASE IF EXISTS " + db) })
	srv := httptest.NewServer(&chfront.Front{E: e})
	t.Cleanup(srv.Close)
	b, err := Open(Options{Source: "clickhouse+http://" + srv.Listener.Addr().String() + "/" + db})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	ctx := context.Background()
	for _, preset := range []string{"otel", "netscript"} {
		conv, err := conventions.Preset(preset)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(preset, func(t *testing.T) {
			rapid.Check(t, func(rt *rapid.T) {
				rows := genRows(rt)
				execValue := rapid.SampledFrom(probeValues[1:]).Draw(rt, "execValue")
				table := loadProbe(rt, e, db, rows)
				got := compiledEval(rt, ctx, b, conv, table, execValue)
				for _, r := range rows {
					want := goEval(conv, r, execValue)
					if got[r.ID] != want {
						rt.Fatalf("row %d %q:\n  SQL %+v\n  Go  %+v", r.ID, r.Attrs, got[r.ID], want)
					}
				}
			})
		})
	}
}

var probeTables int

func loadProbe(t *rapid.T, e *chfront.Engine, db string, rows []probeRow) string {
	probeTables++
	table := fmt.Sprintf("`%s`.`p%d`", db, probeTables)
	path := filepath.Join(e.Dir(), fmt.Sprintf("probe-%d.jsonl", probeTables))
	var data []byte
	for _, r := range rows {
		line, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		data = append(append(data, line...), '\n')
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(path)
	err := e.Exec("CREATE TABLE "+table+" (id UInt32, SpanAttributes Map(LowCardinality(String), String), SpanName LowCardinality(String), "+
		"StatusCode LowCardinality(String), SeverityNumber UInt8, SeverityText LowCardinality(String)) ENGINE = Memory",
		"INSERT INTO "+table+" SELECT id, attrs, name, code, sev_num, sev_text FROM file('"+path+
			"', JSONEachRow, 'id UInt32, attrs Map(String, String), name String, code String, sev_num UInt8, sev_text String')")
	if err != nil {
		t.Fatal(err)
	}
	return table
}

func compiledEval(t *rapid.T, ctx context.Context, b *Backend, conv *conventions.Conventions, table, execValue string) map[uint32]expected {
	const col = "SpanAttributes"
	k := conv.DBKeys
	q := &sqlText{}
	jobID := first(q, col, conv.JobKeys.IDKeys)
	q.w("SELECT id, ", executionIDExpr(q, conv, col), ", ", domainExpr(q, conv, col), ", ", jobID,
		", if(", jobID, " != '', ", jobNameExpr(q, conv, col), ", ''), if(", jobID, " != '', ", jobStatusExpr(q, conv, col), ", ''), ",
		"ifNull(toString(", exitCodeExpr(q, conv, col), "), ''), ",
		hasKeyPrefix(q, col, k.KeyPrefixes), ", ", attrCondition(q, col, telemetry.DBAttrKeys(conv), ""), ", ", errorLogExpr, ", ",
		first(q, col, k.SystemKeys), ", ", first(q, col, k.StatementKeys), ", ", first(q, col, k.SummaryKeys), ", ",
		first(q, col, k.OperationKeys), ", ", first(q, col, k.CollectionKeys), ", ",
		attrCondition(q, col, conv.ExecutionIDKeys, execValue), " FROM ", table)
	out := map[uint32]expected{}
	_, err := b.r.query(ctx, q, 1000, func(rows driver.Rows) error {
		var id uint32
		var e expected
		var isDB, dbAttr, errLog, execMatch uint8
		if err := rows.Scan(&id, &e.ExecID, &e.Domain, &e.JobID, &e.JobName, &e.JobStatus, &e.ExitCode,
			&isDB, &dbAttr, &errLog, &e.System, &e.Statement, &e.Summary, &e.Op, &e.Coll, &execMatch); err != nil {
			return err
		}
		e.IsDB, e.DBAttr, e.ErrorLog, e.ExecMatch = isDB == 1, dbAttr == 1, errLog == 1, execMatch == 1
		out[id] = e
		return nil
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, q)
	}
	return out
}
