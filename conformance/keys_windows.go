//go:build windows

package conformance

import (
	"context"
	"os/exec"
)

// shellCommand runs command with cmd.exe. Windows has no process
// groups to kill whole; cmd.WaitDelay still bounds a child that keeps
// the pipes open.
func shellCommand(ctx context.Context, command string) *exec.Cmd {
	return exec.CommandContext(ctx, "cmd.exe", "/C", command)
}

// killLeftovers has nothing to do on Windows: see shellCommand.
func killLeftovers(*exec.Cmd) {}
