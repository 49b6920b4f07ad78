package cli

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// PeakRSS returns the most resident memory the process pid ("self": this
// one) has held so far, in bytes: the VmHWM line of /proc/PID/status. A
// child's rusage is no substitute: Linux counts in it the parent's peak
// at the time the child was started. Where there is no /proc (not
// Linux), it returns an error.
func PeakRSS(pid string) (int64, error) { return procStatus(pid, "VmHWM") }

// RSS returns the resident memory the process pid holds now: VmRSS.
func RSS(pid string) (int64, error) { return procStatus(pid, "VmRSS") }

// procStatus reads a field in kB of /proc/PID/status, in bytes.
func procStatus(pid, field string) (int64, error) {
	status, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%s/status", field, pid)
}
