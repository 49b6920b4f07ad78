package spec

import "testing"

func TestIsIntegerText(t *testing.T) {
	for s, want := range map[string]bool{
		"0": true, "7": true, "-7": true, "1234567890": true, "-9223372036854775809": true,
		"": false, "-": false, "-0": false, "007": false, "+7": false, "--7": false, "1.0": false,
		"3e0": false, "1E2": false, "3.": false, " 7": false, "7 ": false, "٣": false, "0x10": false,
	} {
		if got := isIntegerText(s); got != want {
			t.Errorf("isIntegerText(%q) = %v; want %v", s, got, want)
		}
	}
}
