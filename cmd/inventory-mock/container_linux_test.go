package main

import (
	"os/exec"
	"syscall"
)

// dieWithTest makes c get SIGTERM when the test process dies: a podman
// build or run the test started does not outlive a test binary that go
// test killed.
func dieWithTest(c *exec.Cmd) {
	c.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
