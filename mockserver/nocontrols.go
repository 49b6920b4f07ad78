//go:build nocontrols

package mockserver

// controls is false in a build with the tag nocontrols: see controls.go.
const controls = false
