//go:build !race

package main

// raceEnabled says whether the tests run under -race (race_test.go).
const raceEnabled = false
