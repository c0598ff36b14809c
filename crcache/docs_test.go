package crcache_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// docs/crcache.md states the result of controller-runtime's cache tests as
// testdata/crsuite-results.txt has it: the counts, and a row for every
// spec that does not pass everywhere.
func TestSuiteDocMatchesResults(t *testing.T) {
	doc, err := os.ReadFile("../docs/crcache.md")
	if err != nil {
		t.Fatal(err)
	}
	results, err := os.ReadFile("testdata/crsuite-results.txt")
	if err != nil {
		t.Fatal(err)
	}
	passed := make([]int, len(suiteConfigs))
	total := 0
	for _, line := range strings.Split(strings.TrimSpace(string(results)), "\n") {
		fields := strings.Split(line, "\t")
		if len(fields) != len(suiteConfigs)+1 {
			t.Fatalf("malformed results line %q", line)
		}
		total++
		name := fields[len(fields)-1]
		all := true
		for i, state := range fields[:len(suiteConfigs)] {
			if state == "passed" {
				passed[i]++
			} else {
				all = false
			}
		}
		if !all && !strings.Contains(string(doc), "| "+name+" |") {
			t.Errorf("docs/crcache.md has no row for %q, which does not pass everywhere", name)
		}
	}
	want := fmt.Sprintf("of %d specs and Go tests, **%d pass with kdyn's defaults and %d with\nmanagedFields kept**", total, passed[0], passed[1])
	if !strings.Contains(string(doc), want) {
		t.Errorf("docs/crcache.md does not say %q", want)
	}
}
