package clickhouse

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	ch "github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/runlens/runlens/internal/telemetry"
)

// sqlText builds one statement with its values bound as ClickHouse query parameters
// ({p0:String}): no value is ever spliced into the text. Only identifiers the adapter
// validated (table names) and fixed SQL are written into it.
type sqlText struct {
	b    strings.Builder
	args []any
	// bound holds the placeholder of each scalar value bound so far: the same key bound twice
	// is one parameter, so the expressions the compiler writes twice are the same text, which
	// ClickHouse computes once per row.
	bound map[string]string
}

// w appends SQL text.
func (q *sqlText) w(parts ...string) *sqlText {
	for _, p := range parts {
		q.b.WriteString(p)
	}
	return q
}

// bind returns the placeholder of a new parameter of ClickHouse type typ holding v.
func (q *sqlText) bind(typ string, v any) string {
	name := "p" + strconv.Itoa(len(q.args))
	q.args = append(q.args, ch.Named(name, v))
	return "{" + name + ":" + typ + "}"
}

// scalar binds v as a parameter of type typ, once per statement.
func (q *sqlText) scalar(typ, v string) string {
	k := typ + "\x00" + v
	if p, ok := q.bound[k]; ok {
		return p
	}
	if q.bound == nil {
		q.bound = map[string]string{}
	}
	p := q.bind(typ, v)
	q.bound[k] = p
	return p
}

// str binds a String.
func (q *sqlText) str(v string) string { return q.scalar("String", v) }

// strs binds an Array(String).
func (q *sqlText) strs(v []string) string { return q.bind("Array(String)", v) }

// i64 binds an Int64.
func (q *sqlText) i64(v int64) string { return q.scalar("Int64", strconv.FormatInt(v, 10)) }

func (q *sqlText) String() string { return q.b.String() }

// ClickHouse error codes the adapter tells apart.
const (
	codeUnknownIdentifier = 47
	codeTypeMismatch      = 53
	codeIllegalType       = 43
	codeUnknownTable      = 60
	codeUnknownDatabase   = 81
	codeTooManyRows       = 158
	codeTimeoutExceeded   = 159
	codeReadonly          = 164
	codeTooManyResultRows = 396
	codeAccessDenied      = 497
	codeAuthFailed        = 516
	codeNoColumn          = 16
)

// errLimited is returned by run when a query hit max_rows_to_read or max_execution_time even
// in break mode; callers turn it into Scan.Limited.
var errLimited = errors.New("query limit reached")

// runner executes the adapter's queries with its per-query bounds.
type runner struct {
	conn driver.Conn
	o    Options
	// noSettings is set once the server refused per-query settings (a user whose profile is
	// readonly=1 may change none): that user is read-only already, and the server's profile
	// bounds its queries.
	noSettings atomic.Bool
	// slots bounds the queries in flight to the client's pool (maxOpenConns): past it the
	// client gives a query only its dial timeout to find a connection, while a query waiting
	// here waits as long as its context allows.
	slots chan struct{}
}

// maxOpenConns is the client's pool size.
const maxOpenConns = maxParallel

// settings bound one query: read-only, a time limit, a read limit and a result limit. Over a
// limit the server throws (overflow mode throw), so the adapter knows it was cut; it then
// re-runs in break mode to answer with what fits and says Limited.
func (r *runner) settings(resultRows int, breakMode bool) ch.Settings {
	mode := "throw"
	if breakMode {
		mode = "break"
	}
	s := ch.Settings{
		"readonly":             "1",
		"max_execution_time":   strconv.Itoa(max(1, int(r.o.MaxExecutionTime.Seconds()))),
		"max_rows_to_read":     strconv.FormatInt(r.o.MaxRowsToRead, 10),
		"max_result_rows":      strconv.Itoa(max(resultRows, 1)),
		"result_overflow_mode": "break",
	}
	// throw is the default overflow mode; it is sent only when it is not.
	if breakMode {
		s["read_overflow_mode"], s["timeout_overflow_mode"] = mode, mode
	}
	if r.o.MaxMemoryBytes > 0 {
		s["max_memory_usage"] = strconv.FormatInt(r.o.MaxMemoryBytes, 10)
	}
	return s
}

// query runs q, calling each for every row; resultRows bounds the rows the server returns. A
// read or time limit makes it re-run in break mode (limited is then true) — unless rows of the
// failed attempt had already arrived (the server streams blocks before it finds a limit
// passed): those are kept, and limited is true, so no row is seen twice.
func (r *runner) query(ctx context.Context, q *sqlText, resultRows int, each func(driver.Rows) error) (limited bool, err error) {
	n, err := r.once(ctx, q, resultRows, false, each)
	if err == nil {
		return false, nil
	}
	var ex *ch.Exception
	if errors.As(err, &ex) && (ex.Code == codeTooManyRows || ex.Code == codeTimeoutExceeded) {
		if n > 0 {
			return true, nil
		}
		if _, err := r.once(ctx, q, resultRows, true, each); err != nil {
			return true, classify(err, r.o)
		}
		return true, nil
	}
	return false, classify(err, r.o)
}

// once runs q once and says how many rows reached each.
func (r *runner) once(ctx context.Context, q *sqlText, resultRows int, breakMode bool, each func(driver.Rows) error) (int, error) {
	select {
	case r.slots <- struct{}{}:
		defer func() { <-r.slots }()
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	qctx := ctx
	if !r.noSettings.Load() {
		qctx = ch.Context(ctx, ch.WithSettings(r.settings(resultRows, breakMode)))
	}
	rows, err := r.conn.Query(qctx, q.String(), q.args...)
	var ex *ch.Exception
	if err != nil && errors.As(err, &ex) && ex.Code == codeReadonly && !r.noSettings.Load() {
		r.noSettings.Store(true)
		rows, err = r.conn.Query(ctx, q.String(), q.args...)
	}
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		n++
		if err := each(rows); err != nil {
			return n, err
		}
	}
	return n, rows.Err()
}

// classify turns a ClickHouse failure into an error the tools can act on: a tool error with a
// fix, wrapping ErrUnreachable so every flow treats the source as not answering. Server text
// is not passed on (it may name hosts, users or settings); the code is.
func classify(err error, o Options) error {
	if err == nil || errors.Is(err, context.Canceled) {
		return err
	}
	if o.Logger != nil {
		o.Logger.Warn("clickhouse query failed", "err", err)
	}
	var ex *ch.Exception
	if !errors.As(err, &ex) {
		if errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		return sourceError(telemetry.ErrUnreachable, "the ClickHouse server did not answer",
			"check that it runs and that telemetry.source names its host and port (native 9000/9440, HTTP 8123/8443); run the doctor tool")
	}
	switch ex.Code {
	case codeUnknownTable, codeUnknownDatabase:
		return sourceError(telemetry.ErrRefused, fmt.Sprintf("ClickHouse has no such table or database (code %d)", ex.Code),
			"the tables are the OpenTelemetry Collector ClickHouse exporter's: set their names with traces_table= and logs_table= in the source URL, or let the exporter create them (create_schema: true); run the doctor tool")
	case codeUnknownIdentifier, codeNoColumn, codeTypeMismatch, codeIllegalType:
		return sourceError(telemetry.ErrRefused, fmt.Sprintf("the ClickHouse tables do not have the exporter's columns (code %d)", ex.Code),
			"runlens reads the exporter's default Map-typed schema; the JSON-typed variant and hand-made tables are not supported; run the doctor tool to see which column differs")
	case codeAccessDenied:
		return sourceError(telemetry.ErrRefused, "the ClickHouse user may not read the telemetry tables (code 497)",
			"GRANT SELECT ON the traces and logs tables (and the _trace_id_ts table) TO the user in the source URL")
	case codeAuthFailed:
		return sourceError(telemetry.ErrRefused, "ClickHouse refused the user or password (code 516)",
			"check the user in the source URL and the password in the variable named by telemetry.passwordEnv")
	case codeTooManyRows, codeTimeoutExceeded, codeTooManyResultRows:
		return errLimited
	}
	return sourceError(telemetry.ErrUnreachable, fmt.Sprintf("ClickHouse failed the query (code %d)", ex.Code), "run the doctor tool to check the source")
}

// sourceError is a failure the user can fix, said for people: what went wrong and what
// fixes it (shown as the tool error's hint and the doctor's fix). kind is
// telemetry.ErrUnreachable when waiting may help, telemetry.ErrRefused when only a change
// will.
func sourceError(kind error, msg, hint string) error {
	return &telemetry.SourceError{Kind: kind, Message: msg, Hint: hint}
}

// maxParallel bounds the queries one answer has in flight at once.
const maxParallel = 4

// parallel runs the independent queries of one answer at once, at most maxParallel, and
// returns the first failure (in argument order). The client's pool (MaxOpenConns) is sized
// for it.
func parallel(fns ...func() error) error {
	errs := make([]error, len(fns))
	sem := make(chan struct{}, maxParallel)
	var wg sync.WaitGroup
	for i, fn := range fns {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			errs[i] = fn()
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
