package kubectlsuite

import "testing"

func TestReasons(t *testing.T) {
	doc := "# Title\n\n| `run_a` | pass | FAIL |\n\n" + ReasonsHeading + "\n\n- `run_a`: not built yet.\n- `run_b`:\n- not a function\n\n## Next\n\n- `run_c`: elsewhere\n"
	got := Reasons(doc, ReasonsHeading)
	if len(got) != 1 || got["run_a"] != "not built yet." {
		t.Errorf("Reasons = %v", got)
	}
}
