//go:build !nocontrols

package mockserver

// controls is true: each request reads its session (X-Mock-Session) and
// its Prefer header, and gets the chaos rules' latency and faults. A build
// with the tag nocontrols leaves all of that out of the request path, for
// inventory-bench to measure what the controls cost when nobody uses them
// (scenarios list-controls and update-controls); it is not for users.
const controls = true
