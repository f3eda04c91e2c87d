package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// packageInit is one line of GODEBUG=inittrace=1: what one package's init allocated.
type packageInit struct {
	pkg           string
	bytes, allocs int64
}

// initLine is "init <package> @<t> ms, <clock> ms clock, <bytes> bytes, <allocs> allocs".
var initLine = regexp.MustCompile(`^init (\S+) @\S+ ms, \S+ ms clock, (\d+) bytes, (\d+) allocs$`)

// parseInitTrace returns the package inits that stderr reports, in order.
func parseInitTrace(stderr string) ([]packageInit, error) {
	var inits []packageInit
	for _, line := range strings.Split(stderr, "\n") {
		if !strings.HasPrefix(line, "init ") {
			continue
		}
		m := initLine.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			return nil, fmt.Errorf("unparsed inittrace line %q", line)
		}
		b, _ := strconv.ParseInt(m[2], 10, 64)
		a, _ := strconv.ParseInt(m[3], 10, 64)
		inits = append(inits, packageInit{m[1], b, a})
	}
	return inits, nil
}

func TestParseInitTrace(t *testing.T) {
	got, err := parseInitTrace("init internal/bytealg @0.004 ms, 0.002 ms clock, 0 bytes, 0 allocs\nother\ninit github.com/x/y @12 ms, 1.5 ms clock, 2048 bytes, 17 allocs\n")
	if err != nil {
		t.Fatal(err)
	}
	want := []packageInit{{"internal/bytealg", 0, 0}, {"github.com/x/y", 2048, 17}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("parseInitTrace = %v, want %v", got, want)
	}
	if _, err := parseInitTrace("init github.com/x/y @12 ms, garbled\n"); err == nil {
		t.Error("a garbled init line parsed")
	}
}

// Package initialisation is what every start pays, whichever source and receiver the project
// uses, so runlens's own packages build their expressions, parsers and tables on first use. The
// bounds are on allocation, which does not vary with the machine's load; init CPU time does.
const (
	// ownInitBytes and ownInitAllocs bound each of runlens's packages but gen (today 3 KB, 13
	// allocations at most); a regular expression with a bounded repetition compiled at package
	// level was 119 KB and 1,700 allocations alone.
	ownInitBytes  = 16 << 10
	ownInitAllocs = 128
	// genInitBytes bounds the generated registry, which holds the tool list and schemas (181 KB).
	genInitBytes = 256 << 10
	// thirdPartyInitBytes bounds any one dependency's init; the largest today is goldmark's
	// util (139 KB), linked for the docs index.
	thirdPartyInitBytes = 192 << 10
	// totalInitBytes bounds the sum over every package (1.1 MB today, not counting the schema
	// validator exempted below).
	totalInitBytes = 1536 << 10
)

// exemptInit is a dependency whose init is not bounded: the run-time JSON Schema validator,
// which is on its way out (1.7 MB at init).
const exemptInit = "github.com/santhosh-tekuri/jsonschema/"

func TestServeStartUpInitialisesLittle(t *testing.T) {
	bin := runlensBinary(t)
	// An empty stdin ends the session at once; package init has run before main either way.
	cmd := exec.Command(bin, "serve", "--project-root", t.TempDir(), "--receiver", "off")
	cmd.Stdin = strings.NewReader("")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("serve: %v\n%s", err, stderr.String())
	}
	inits, err := parseInitTrace(stderr.String())
	if err != nil {
		t.Fatal(err)
	}
	// A binary that links runlens's store, receiver and sources inits well over a hundred
	// packages; a handful means the trace was not read.
	if len(inits) < 100 {
		t.Fatalf("inittrace reported %d package inits, want the whole binary's:\n%s", len(inits), stderr.String())
	}
	const module = "github.com/runlens/runlens"
	var total int64
	for _, in := range inits {
		if strings.HasPrefix(in.pkg, exemptInit) {
			continue
		}
		total += in.bytes
		switch {
		case in.pkg == module+"/gen":
			if in.bytes > genInitBytes {
				t.Errorf("%s init allocated %d bytes, want at most %d", in.pkg, in.bytes, genInitBytes)
			}
		case in.pkg == module || strings.HasPrefix(in.pkg, module+"/"):
			if in.bytes > ownInitBytes || in.allocs > ownInitAllocs {
				t.Errorf("%s init allocated %d bytes in %d allocations, want at most %d bytes and %d allocations: build it on first use",
					in.pkg, in.bytes, in.allocs, ownInitBytes, ownInitAllocs)
			}
		default:
			if in.bytes > thirdPartyInitBytes {
				t.Errorf("dependency %s init allocated %d bytes, want at most %d", in.pkg, in.bytes, thirdPartyInitBytes)
			}
		}
	}
	if total > totalInitBytes {
		sort.Slice(inits, func(i, j int) bool { return inits[i].bytes > inits[j].bytes })
		t.Errorf("package init allocated %d bytes in all, want at most %d; the largest: %v", total, totalInitBytes, inits[:min(10, len(inits))])
	}
}
