//go:build race

package store

// raceEnabled is true when the race detector instruments the tests: it slows SQLite's code
// tenfold, so the data-driven tests run on less data (the detector checks concurrency, which
// does not need volume).
const raceEnabled = true
