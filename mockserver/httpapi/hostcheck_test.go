package httpapi

import (
	"strings"
	"testing"
)

func TestHosts(t *testing.T) {
	h, err := NewHosts([]string{"inventory-mock", "Mock.Internal.", "10.0.0.9"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		host string
		want bool
	}{
		{"", true},
		{"localhost", true},
		{"localhost:8080", true},
		{"LocalHost.:80", true},
		{"app.localhost:3000", true},
		{"127.0.0.1:8080", true},
		{"127.1.2.3", true},
		{"[::1]:8080", true},
		{"[fe80::1]", true},
		{"192.168.1.20:8080", true},
		{"inventory-mock:8080", true},
		{"INVENTORY-MOCK", true},
		{"mock.internal:443", true},
		{"evil.example", false},
		{"evil.example:8080", false},
		{"localhost.evil.example", false},
		{"evillocalhost", false},
		{"inventory-mock.evil.example", false},
		{"127.0.0.1.nip.io", false},
		{"[evil.example]:80", false},
		{"0x7f.1", false},
	} {
		if got := h.Allows(tt.host); got != tt.want {
			t.Errorf("Allows(%q) = %v; want %v", tt.host, got, tt.want)
		}
	}
	if !(Hosts{}).Allows("localhost:1") || (Hosts{}).Allows("inventory-mock") {
		t.Error("the zero Hosts: want loopback names and IP addresses only")
	}
	if any, _ := NewHosts([]string{"*"}); !any.Allows("evil.example") {
		t.Error(`NewHosts("*") refuses a name; want any`)
	}
}

func TestNormalizeHost(t *testing.T) {
	for _, tt := range []struct {
		in, want, err string
	}{
		{"inventory-mock", "inventory-mock", ""},
		{" Mock.Internal. ", "mock.internal", ""},
		{"*", "*", ""},
		{"[::1]", "::1", ""},
		{"", "", "an empty host name"},
		{"http://mock", "", "not a host name"},
		{"mock/v1", "", "not a host name"},
		{"user@mock", "", "not a host name"},
		{"mock:8080", "", "without a port"},
	} {
		got, err := NormalizeHost(tt.in)
		if got != tt.want || (err == nil) != (tt.err == "") || (err != nil && !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("NormalizeHost(%q) = %q, %v; want %q, %q", tt.in, got, err, tt.want, tt.err)
		}
	}
}

// FuzzHosts feeds Host headers to Allows: it never panics, an allowed
// name is allowed with any port, and a name no list holds is refused
// unless it is localhost's or an IP address.
func FuzzHosts(f *testing.F) {
	for _, s := range []string{"", "localhost:8080", "[::1]:1", "evil.example", "a.localhost", "[", "]:", ":::", "1.2.3.4:", "x:y:z", "%00", "\xff.localhost"} {
		f.Add(s)
	}
	allowed, _ := NewHosts([]string{"inventory-mock"})
	f.Fuzz(func(t *testing.T, host string) {
		ok := allowed.Allows(host)
		if ok && !allowed.Allows(host) {
			t.Fatal("Allows is not stable")
		}
		if (Hosts{}).Allows(host) && !ok {
			t.Fatalf("%q: allowed with no names, refused with one more", host)
		}
		if n, err := NormalizeHost(host); err == nil && n != "*" {
			h, err := NewHosts([]string{host})
			if err != nil {
				t.Fatalf("NewHosts(%q) refuses what NormalizeHost takes: %v", host, err)
			}
			if !h.Allows(n+":8080") && !strings.Contains(n, ":") {
				t.Fatalf("NewHosts(%q) does not allow %q with a port", host, n)
			}
		}
	})
}
