package conformance

import "net/http"

// A brokenServer breaks one rule of the contract.
type brokenServer struct {
	name string
	wrap func(http.Handler) http.Handler
}

var brokenServers = []brokenServer{}

func brokenServerNamed(name string) (brokenServer, bool) {
	for _, b := range brokenServers {
		if b.name == name {
			return b, true
		}
	}
	return brokenServer{}, false
}
