//go:build race

package main

// raceEnabled says whether the tests run under -race, whose child
// processes hold several times the memory.
const raceEnabled = true
