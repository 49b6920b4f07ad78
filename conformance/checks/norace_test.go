//go:build !race

package checks

// raceDetector says whether the tests run under -race (race_test.go).
const raceDetector = false
