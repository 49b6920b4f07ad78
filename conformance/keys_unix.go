//go:build unix

package conformance

import (
	"context"
	"os/exec"
	"syscall"
)

// shellCommand runs command with /bin/sh in a process group of its own,
// killed whole on cancel: a child the command leaves running
// (sleep 150 &) holds neither the run nor its pipes.
func shellCommand(ctx context.Context, command string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", command)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	return cmd
}

// killLeftovers kills what the command left behind in its group.
func killLeftovers(cmd *exec.Cmd) {
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
