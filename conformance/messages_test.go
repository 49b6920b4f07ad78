package conformance

import (
	"bytes"
	"strings"
	"testing"
)

// TestGinkgoAdviceNamesTheBinary: Ginkgo's advice to run ginkgo -vv, which
// the binary has not, reads as the binary's own flag.
func TestGinkgoAdviceNamesTheBinary(t *testing.T) {
	var b bytes.Buffer
	line := "There were additional failures detected.  To view them in detail run \x1b[1mginkgo -vv\x1b[0m\n"
	if _, err := hideCwd(&b).Write([]byte(line)); err != nil {
		t.Fatal(err)
	}
	if got := b.String(); strings.Contains(got, "ginkgo -vv") || !strings.Contains(got, "inventory-conformance with --verbose") {
		t.Errorf("written %q; want ginkgo -vv replaced by inventory-conformance with --verbose", got)
	}
}

// TestExploreSummaryWording: the rule an exploration found broken is said
// as what did not hold, not as if it were the defect.
func TestExploreSummaryWording(t *testing.T) {
	r := &exploreResult{Failure: &exploreFailure{Rule: "a valid update answers 200"}}
	if got, want := r.Summary(), `found: "a valid update answers 200" did not hold`; !strings.HasSuffix(got, want) {
		t.Errorf("Summary() = %q; want it to end %q", got, want)
	}
}
