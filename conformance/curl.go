package conformance

import (
	"fmt"
	"sort"
	"strings"
)

// maxCurlBody is the largest body a curl line carries inline.
const maxCurlBody = 2048

// Curl renders the request as a curl command that sends the same request:
// the same method, URL, headers (an empty header as curl's "Name;" form,
// since "Name: " would remove it) and body, with the key replaced by
// $INVENTORY_API_KEY so the line replays in a shell that has it set.
// A body longer than 2 KiB is described, not included.
func (x *Exchange) Curl() string {
	args := []string{"curl", "-sS", "-i", "-X", x.Method, x.shellQuote(x.URL)}
	names := make([]string, 0, len(x.Header))
	for n := range x.Header {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		for _, v := range x.Header[n] {
			if v == "" {
				args = append(args, "-H", x.shellQuote(n+";"))
			} else {
				args = append(args, "-H", x.shellQuote(n+": "+v))
			}
		}
	}
	switch {
	case x.Body == nil:
	case len(x.Body) > maxCurlBody:
		args = append(args, "--data-binary", "@body.json", fmt.Sprintf("# body.json: %d bytes, starting %s", len(x.Body), Printable(x.Body[:80])))
	default:
		args = append(args, "--data-binary", x.shellQuote(string(x.Body)))
	}
	return strings.Join(args, " ")
}

// shellQuote quotes s for a POSIX shell. Where the key occurs, the quoting
// is double so that $INVENTORY_API_KEY expands.
func (x *Exchange) shellQuote(s string) string {
	if x.key == "" || !strings.Contains(s, x.key) {
		return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	parts := strings.Split(s, x.key)
	esc := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "$", `\$`, "`", "\\`", "!", `"'!'"`)
	for i, p := range parts {
		parts[i] = esc.Replace(p)
	}
	return `"` + strings.Join(parts, KeyPlaceholder) + `"`
}
