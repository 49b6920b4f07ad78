package main

import (
	"net"
	"os"
	"slices"
	"strings"

	"github.com/petstore/inventory-kit/mockserver/httpapi"
)

// adminHosts returns the host names /__admin/ answers for, besides
// localhost and IP addresses: those of --allowed-host; the host of --addr
// where it is a name; and where the mock listens on every interface (in a
// container), this machine's name, by which its peers may reach it.
func adminHosts(o *options) []string {
	hosts := slices.Clone([]string(o.AllowedHosts))
	host, _, _ := net.SplitHostPort(o.Addr)
	ip := net.ParseIP(host)
	switch {
	case host == "" || ip != nil && ip.IsUnspecified():
		if name, err := os.Hostname(); err == nil {
			if n, err := httpapi.NormalizeHost(name); err == nil {
				hosts = append(hosts, n)
			}
		}
	case ip == nil:
		if n, err := httpapi.NormalizeHost(host); err == nil {
			hosts = append(hosts, n)
		}
	}
	return hosts
}

// corsSummary says, for the start-up log, which browser pages may call
// the mock.
func corsSummary(o *options) string {
	api := "any origin, without credentials"
	if len(o.CORSOrigins) > 0 && !slices.Contains(o.CORSOrigins, "*") {
		api = strings.Join(o.CORSOrigins, " ")
	}
	admin := "its own dashboard only"
	if len(o.AdminOrigins) > 0 {
		admin = "its own dashboard and " + strings.Join(o.AdminOrigins, " ")
	}
	return "API: " + api + "; /__admin/: " + admin
}
