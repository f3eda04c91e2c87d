package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/runlens/runlens/gen"
	"github.com/runlens/runlens/internal/config"
)

// doctorCmd runs the doctor tool for people: a readable table, or the tool's JSON with --json.
// It exits 1 when any check fails, so scripts can gate on it.
func doctorCmd(args []string, stdout, stderr io.Writer) int {
	fs := newCLI("doctor", stdout, stderr)
	var o config.Overrides
	fs.StringVar(&o.ProjectRoot, "project-root", "", "project `folder`")
	fs.StringVar(&o.Telemetry, "telemetry", "", "telemetry `SOURCE` to check")
	asJSON := fs.Bool("json", false, "print the doctor tool's JSON answer instead of a table")
	fs.defaultIs("project-root", "$RUNLENS_PROJECT_ROOT, else the current directory")
	fs.defaultIs("telemetry", "$RUNLENS_TELEMETRY, else runlens.json, else sqlite:.runlens/telemetry.db")
	if code, ok := fs.parse(args); !ok {
		return code
	}
	a, err := openLenient(o, stderr) // a broken runlens.json is a failing check, not an exit
	if err != nil {
		fmt.Fprintf(stderr, "runlens: %v\n", err)
		return 1
	}
	defer a.Close()

	var in gen.DoctorInput
	in.ApplyDefaults()
	out, err := a.Flows.Doctor(context.Background(), in)
	if err != nil {
		fmt.Fprintf(stderr, "runlens: doctor: %v\n", err)
		return 1
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			return 1
		}
	} else {
		printDoctor(stdout, out)
	}
	if out.Status == gen.StatusFail {
		return 1
	}
	return 0
}

// printDoctor renders the doctor's answer as a table, one row per check, fixes underneath.
func printDoctor(w io.Writer, out gen.DoctorOutput) {
	fmt.Fprintf(w, "runlens doctor: %s  (%d pass, %d warn, %d fail)  endpoint %s\n\n",
		strings.ToUpper(string(out.Status)), out.Counts.Pass, out.Counts.Warn, out.Counts.Fail, out.Endpoint)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, f := range out.Families {
		fmt.Fprintf(tw, "%s\t%s\t\n", strings.ToUpper(string(f.Name)), f.Status)
		for _, c := range f.Checks {
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", c.Name, c.Status, c.Summary)
			if c.Fix != nil && c.Status != gen.StatusPass {
				fmt.Fprintf(tw, "\t\t→ %s\n", *c.Fix)
			}
		}
	}
	tw.Flush()
}
