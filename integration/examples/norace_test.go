//go:build !race

package examples_test

// raceEnabled: see race_test.go.
const raceEnabled = false
