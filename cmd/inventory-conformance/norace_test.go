//go:build !race

package main

// raceDetector says whether the tests run under -race (race_test.go).
const raceDetector = false
