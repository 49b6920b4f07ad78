//go:build race

package main

// raceDetector says whether the tests run under -race, whose instrumented
// child processes run several times slower: the longest tests do less then.
const raceDetector = true
