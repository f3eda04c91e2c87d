package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/runlens/runlens/gen"
	"github.com/runlens/runlens/internal/app"
	"github.com/runlens/runlens/internal/config"
)

// Options configure a demo run.
type Options struct {
	// Exe is the runlens binary the MCP session starts (`<Exe> serve`).
	Exe string
	// Out receives the readable report; Progress receives the progress line.
	Out, Progress io.Writer
	// Requests sizes the workload (default 60).
	Requests int
}

// Run performs the demo end to end in a temporary project that it removes afterwards:
// receiver → instrumented workload → store → `runlens serve` → MCP tool calls.
func Run(ctx context.Context, o Options) (err error) {
	dir, err := os.MkdirTemp("", "runlens-demo-")
	if err != nil {
		return fmt.Errorf("create demo project: %w", err)
	}
	defer func() { err = errors.Join(err, os.RemoveAll(dir)) }()
	if err := writeProject(dir); err != nil {
		return err
	}

	if err := collect(ctx, dir, o); err != nil {
		return err
	}

	fmt.Fprintf(o.Out, "\n▸ an agent's view: runlens serve over stdio, MCP 2025-11-25\n")
	c, err := startClient(ctx, []string{o.Exe, "serve", "--project-root", dir, "--receiver", "off"}, dir, o.Progress)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, c.Close()) }()
	return report(c, o.Out)
}

// writeProject lays out a tiny project: a docs page, so the workspace looks like a real one.
func writeProject(dir string) error {
	if err := os.MkdirAll(filepath.Join(dir, "docs"), 0o755); err != nil {
		return err
	}
	doc := "# Shop\n\nThe shop API serves `/products`, `/checkout` and `/reports/sales`.\n\n## Billing\n\nThe nightly-invoices job mails invoices.\n"
	return os.WriteFile(filepath.Join(dir, "docs", "index.md"), []byte(doc), 0o644)
}

// collect starts the receiver on a free loopback port, runs the workload against it, and
// closes the store so the serve process reads everything that was acknowledged.
func collect(ctx context.Context, dir string, o Options) error {
	cfg, err := app.LoadConfig(dir, nil, config.Overrides{ProjectRoot: dir, Receiver: "127.0.0.1:0"})
	if err != nil {
		return err
	}
	a, err := app.New(cfg, nil)
	if err != nil {
		return err
	}
	defer a.Close()
	r, err := a.ListenReceiver(ctx, "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("start receiver: %w", err)
	}
	fmt.Fprintf(o.Out, "▸ runlens receiver on http://%s, embedded store in a temporary project\n", r.Addr)
	fmt.Fprintf(o.Out, "▸ running an app instrumented with the OpenTelemetry Go SDK (shop-api, billing-worker)\n")
	w := Workload{Endpoint: "http://" + r.Addr, Requests: o.Requests, Seed: 7, Progress: func(done, total int) {
		bar := strings.Repeat("█", done*30/total) + strings.Repeat("·", 30-done*30/total)
		fmt.Fprintf(o.Progress, "\r  %s %d/%d", bar, done, total)
		if done == total {
			fmt.Fprintln(o.Progress)
		}
	}}
	runErr := w.Run(ctx)
	return errors.Join(runErr, r.Shutdown(ctx))
}

// report calls each telemetry tool (and the doctor) and prints what an agent would read.
func report(c *client, out io.Writer) error {
	var status gen.GetAppStatusOutput
	if err := c.callTool(gen.ToolGetAppStatus, nil, &status); err != nil {
		return err
	}
	fmt.Fprintf(out, "\nget_app_status → %s: %d services, %d spans, %d logs, %d errors\n",
		strings.ToUpper(string(status.Status)), status.Counts.Services, status.Counts.Spans, status.Counts.Logs, status.Counts.Errors)
	for _, d := range status.Domains {
		fmt.Fprintf(out, "    domain %-9s %3d runs, %d failed\n", d.Domain, d.SeenCount, d.ErrorCount)
	}

	var runs gen.ListRunsOutput
	if err := c.callTool(gen.ToolListRuns, map[string]any{"limit": 5}, &runs); err != nil {
		return err
	}
	total := ""
	if runs.Page.Total != nil {
		total = fmt.Sprintf(" of %d", *runs.Page.Total)
	}
	fmt.Fprintf(out, "\nlist_runs (newest %d%s)\n", runs.Count, total)
	for _, r := range runs.Runs {
		fmt.Fprintf(out, "    %-20s %-7s %-8s %s\n", r.Name, r.Status, fmtMs(r.DurationMs), r.Service)
	}

	var errs gen.GetRecentErrorsOutput
	if err := c.callTool(gen.ToolGetRecentErrors, nil, &errs); err != nil {
		return err
	}
	fmt.Fprintf(out, "\nget_recent_errors → %d error events in %d groups\n", errs.Count, len(errs.Groups))
	for _, g := range errs.Groups {
		fmt.Fprintf(out, "    %2d× %s/%s: %s\n", g.Count, g.Service, g.Domain, g.SampleMessage)
	}
	// Open the largest group's newest run: the failure an agent would look at first.
	biggest := -1
	for i, g := range errs.Groups {
		if len(g.RelatedRunIDs) > 0 && (biggest < 0 || g.Count > errs.Groups[biggest].Count) {
			biggest = i
		}
	}
	if biggest >= 0 {
		var run gen.GetRunOutput
		if err := c.callTool(gen.ToolGetRun, map[string]any{"id": errs.Groups[biggest].RelatedRunIDs[0]}, &run); err != nil {
			return err
		}
		fmt.Fprintf(out, "\nget_run %s\n    %s\n", short(run.ID), run.Summary)
		for _, s := range run.Spans {
			fmt.Fprintf(out, "    %s%-22s %-6s %s\n", strings.Repeat("  ", s.Depth), s.Name, s.Status, fmtMs(s.DurationMs))
		}
		for _, l := range run.Logs {
			fmt.Fprintf(out, "    log %-5s %s\n", l.Severity, l.Message)
		}
	}

	var job gen.GetLastJobResultOutput
	if err := c.callTool(gen.ToolGetLastJobResult, map[string]any{"jobName": "nightly-invoices"}, &job); err != nil {
		return err
	}
	if job.Found {
		line := fmt.Sprintf("\nget_last_job_result nightly-invoices → %s", *job.Status)
		if job.Outcome != nil {
			line += " (" + *job.Outcome + ")"
		}
		if job.ExitCode != nil {
			line += fmt.Sprintf(", exit code %d", *job.ExitCode)
		}
		if job.Previous != nil {
			line += ", previous run " + string(job.Previous.Status)
		}
		fmt.Fprintln(out, line)
	} else {
		fmt.Fprintln(out, "\nget_last_job_result nightly-invoices → not found")
	}

	var perf gen.AnalyzeServicePerformanceOutput
	if err := c.callTool(gen.ToolAnalyzeServicePerformance, map[string]any{"service": "shop-api"}, &perf); err != nil {
		return err
	}
	fmt.Fprintf(out, "\nanalyze_service_performance shop-api → %d spans, p50 %s, p95 %s, p99 %s, error rate %.1f%%\n",
		perf.SampleCount, fmtMs(&perf.P50DurationMs), fmtMs(&perf.P95DurationMs), fmtMs(&perf.P99DurationMs), perf.ErrorRate*100)
	for _, op := range perf.TopOperations {
		fmt.Fprintf(out, "    %-20s p95 %-8s %d calls\n", op.Name, fmtMs(&op.P95DurationMs), op.Count)
	}

	var db gen.AnalyzeDBBottlenecksOutput
	if err := c.callTool(gen.ToolAnalyzeDBBottlenecks, nil, &db); err != nil {
		return err
	}
	fmt.Fprintf(out, "\nanalyze_db_bottlenecks → %d database spans\n", db.SampleCount)
	for _, op := range db.Operations {
		fmt.Fprintf(out, "    %4.0f%%  %-48s total %s, p95 %s\n", op.ShareOfTotal*100, trim(dbLabel(op), 48), fmtMs(&op.TotalDurationMs), fmtMs(&op.P95DurationMs))
	}
	fmt.Fprintln(out, "\n▸ done: the temporary project is removed; nothing was left behind.")
	return nil
}

// dbLabel is an operation's label, which the answer leaves out when it is the statement.
func dbLabel(op gen.AnalyzeDBBottlenecksOutputOperation) string {
	switch {
	case op.Operation != nil:
		return *op.Operation
	case op.Statement != nil:
		return *op.Statement
	}
	return ""
}

func fmtMs(v *float64) string {
	if v == nil {
		return "-"
	}
	if *v >= 1000 {
		return fmt.Sprintf("%.2fs", *v/1000)
	}
	return fmt.Sprintf("%.1fms", *v)
}

func short(id string) string {
	if len(id) > 16 {
		return id[:16] + "…"
	}
	return id
}

func trim(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
