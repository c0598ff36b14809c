//go:build race

package examples_test

// raceEnabled makes TestMain build the examples with -race too, so the
// programs' own concurrency is checked when the tests run with -race.
const raceEnabled = true
