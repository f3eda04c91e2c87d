package chfront

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"

	"github.com/runlens/runlens/internal/telemetry"
)

var loads atomic.Int64

// LoadSpans inserts rows into t's traces table with the values the exporter writes for them
// (its ServiceName, SpanKind and StatusCode words, attribute values as text), through a
// JSONEachRow file read by INSERT … SELECT (chDB takes no input stream).
func (e *Engine) LoadSpans(t Tables, rows []telemetry.SpanRow) error {
	if len(rows) == 0 {
		return nil
	}
	type span struct {
		Ts      int64               `json:"ts"`
		Trace   string              `json:"trace"`
		Span    string              `json:"span"`
		Parent  string              `json:"parent"`
		Name    string              `json:"name"`
		Kind    string              `json:"kind"`
		Service string              `json:"service"`
		Res     map[string]string   `json:"res"`
		Attrs   map[string]string   `json:"attrs"`
		Dur     int64               `json:"dur"`
		Code    string              `json:"code"`
		Msg     string              `json:"msg"`
		EvTs    []int64             `json:"ev_ts"`
		EvName  []string            `json:"ev_name"`
		EvAttrs []map[string]string `json:"ev_attrs"`
	}
	path, err := e.writeRows(len(rows), func(i int) any {
		r := &rows[i]
		s := span{Ts: r.StartNs, Trace: r.TraceID, Span: r.SpanID, Parent: r.ParentSpanID, Name: r.Name, Kind: r.Kind,
			Service: r.Service, Res: nonNil(r.Resource), Attrs: nonNil(r.Attributes), Dur: r.DurationNs, Code: r.StatusCode, Msg: r.StatusMessage,
			EvTs: []int64{}, EvName: []string{}, EvAttrs: []map[string]string{}}
		for _, ev := range r.Events {
			s.EvTs, s.EvName, s.EvAttrs = append(s.EvTs, ev.TimeNs), append(s.EvName, ev.Name), append(s.EvAttrs, nonNil(ev.Attributes))
		}
		return s
	})
	if err != nil {
		return err
	}
	defer os.Remove(path)
	const structure = `ts Int64, trace String, span String, parent String, name String, kind String, service String,
		res Map(String, String), attrs Map(String, String), dur Int64, code String, msg String,
		ev_ts Array(Int64), ev_name Array(String), ev_attrs Array(Map(String, String))`
	return e.Exec(fmt.Sprintf("INSERT INTO `%s`.`%s` (Timestamp, TraceId, SpanId, ParentSpanId, TraceState, SpanName, SpanKind, ServiceName, "+
		"ResourceAttributes, ScopeName, ScopeVersion, SpanAttributes, Duration, StatusCode, StatusMessage, "+
		"`Events.Timestamp`, `Events.Name`, `Events.Attributes`, `Links.TraceId`, `Links.SpanId`, `Links.TraceState`, `Links.Attributes`) "+
		"SELECT fromUnixTimestamp64Nano(ts), trace, span, parent, '', name, kind, service, res, 'runlens-test', '', attrs, toUInt64(dur), code, msg, "+
		"arrayMap(x -> fromUnixTimestamp64Nano(x), ev_ts), ev_name, ev_attrs, [], [], [], [] FROM file(%s, JSONEachRow, %s)",
		t.Database, t.Traces, quote(path), quote(structure)))
}

// LoadLogs inserts rows into t's logs table as the exporter writes them.
func (e *Engine) LoadLogs(t Tables, rows []telemetry.LogRow) error {
	if len(rows) == 0 {
		return nil
	}
	type record struct {
		Ts      int64             `json:"ts"`
		Trace   string            `json:"trace"`
		Span    string            `json:"span"`
		SevText string            `json:"sev_text"`
		SevNum  int32             `json:"sev_num"`
		Service string            `json:"service"`
		Body    string            `json:"body"`
		Res     map[string]string `json:"res"`
		Attrs   map[string]string `json:"attrs"`
	}
	path, err := e.writeRows(len(rows), func(i int) any {
		r := &rows[i]
		return record{Ts: r.TimeNs, Trace: r.TraceID, Span: r.SpanID, SevText: r.SeverityText, SevNum: r.SeverityNumber,
			Service: r.Service, Body: r.Body, Res: nonNil(r.Resource), Attrs: nonNil(r.Attributes)}
	})
	if err != nil {
		return err
	}
	defer os.Remove(path)
	const structure = `ts Int64, trace String, span String, sev_text String, sev_num Int32, service String, body String,
		res Map(String, String), attrs Map(String, String)`
	return e.Exec(fmt.Sprintf("INSERT INTO `%s`.`%s` (Timestamp, TraceId, SpanId, TraceFlags, SeverityText, SeverityNumber, ServiceName, Body, "+
		"ResourceSchemaUrl, ResourceAttributes, ScopeSchemaUrl, ScopeName, ScopeVersion, ScopeAttributes, LogAttributes, EventName) "+
		"SELECT fromUnixTimestamp64Nano(ts), trace, span, 0, sev_text, toUInt8(sev_num), service, body, '', res, '', 'runlens-test', '', map(), attrs, '' "+
		"FROM file(%s, JSONEachRow, %s)", t.Database, t.Logs, quote(path), quote(structure)))
}

// writeRows writes n JSON rows to a file in the engine's folder.
func (e *Engine) writeRows(n int, row func(int) any) (string, error) {
	path := filepath.Join(e.dir, "load-"+strconv.FormatInt(loads.Add(1), 10)+".jsonl")
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	for i := 0; i < n; i++ {
		if err := enc.Encode(row(i)); err != nil {
			f.Close()
			return "", err
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return "", err
	}
	return path, f.Close()
}

func nonNil(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}
