//go:build !race

package store

// raceEnabled is true when the race detector instruments the tests (race_on_test.go).
const raceEnabled = false
