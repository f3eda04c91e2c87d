package bench

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
)

// errNoProc is returned where a measure needs /proc (Linux only).
var errNoProc = errors.New("process memory needs /proc (Linux)")

// Memory is a process's resident set: now (VmRSS) and at its peak (VmHWM), in bytes; and now,
// the part of it that is the process's own (RssAnon: heap, stacks) and the part that is pages
// of files mapped into it (RssFile: mostly the executable's, shared with every process that
// runs it and dropped by the kernel first when memory is short).
type Memory struct {
	RSS, HWM      int64
	Anon, ByFiles int64
}

// ReadMemory reads /proc/<pid>/status.
func ReadMemory(pid int) (Memory, error) {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if os.IsNotExist(err) {
		return Memory{}, errNoProc
	}
	if err != nil {
		return Memory{}, fmt.Errorf("read process status: %w", err)
	}
	var m Memory
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		key, val, ok := bytes.Cut(sc.Bytes(), []byte(":"))
		if !ok {
			continue
		}
		var dst *int64
		switch string(key) {
		case "VmRSS":
			dst = &m.RSS
		case "VmHWM":
			dst = &m.HWM
		case "RssAnon":
			dst = &m.Anon
		case "RssFile":
			dst = &m.ByFiles
		default:
			continue
		}
		f := bytes.Fields(val) // "1234", "kB"
		if len(f) != 2 || string(f[1]) != "kB" {
			return Memory{}, fmt.Errorf("process status %s: unexpected value %q", key, val)
		}
		kb, err := strconv.ParseInt(string(f[0]), 10, 64)
		if err != nil {
			return Memory{}, fmt.Errorf("process status %s: %w", key, err)
		}
		*dst = kb << 10
	}
	if m.RSS == 0 || m.HWM == 0 {
		return Memory{}, fmt.Errorf("process status of %d lacks VmRSS or VmHWM", pid)
	}
	return m, nil
}

// IdleMemory spawns t `runs` times, reads its memory right after initialize and tools/list,
// and returns the median of each figure.
func IdleMemory(t Target, runs int) (Memory, error) {
	var rss, hwm, anon, files []int64
	for range runs {
		s, err := Open(t)
		if err != nil {
			return Memory{}, err
		}
		m, err := ReadMemory(s.Pid())
		s.Close()
		if err != nil {
			return Memory{}, err
		}
		rss = append(rss, m.RSS)
		hwm = append(hwm, m.HWM)
		anon = append(anon, m.Anon)
		files = append(files, m.ByFiles)
	}
	return Memory{RSS: median(rss), HWM: median(hwm), Anon: median(anon), ByFiles: median(files)}, nil
}

// median is the nearest-rank median of a non-empty series.
func median(v []int64) int64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[(len(s)+1)/2-1]
}

// mib prints a byte count in MiB.
func mib(n int64) string {
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}
