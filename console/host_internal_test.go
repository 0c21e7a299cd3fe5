package console

import (
	"net/url"
	"strings"
	"testing"
)

func TestServedHost(t *testing.T) {
	allowed := map[string]bool{"console.example.com": true, "proxy.example:8443": true}
	for _, tc := range []struct {
		host string
		want bool
	}{
		{"127.0.0.1:8090", true},
		{"127.0.0.1", true},
		{"[::1]:8090", true},
		{"10.1.2.3:8090", true}, // an address is reached by no rebound name
		{"localhost:8090", true},
		{"LOCALHOST.:8090", true},
		{"app.localhost:8090", true},
		{"console.example.com", true},
		{"Console.Example.COM:443", true},
		{"proxy.example:8443", true},
		{"rebind.example:8090", false},
		{"rebind.example", false},
		{"localhost.rebind.example:8090", false},
		{"127.0.0.1.rebind.example", false},
		{"proxy.example:9999", false},
		{"", false},
		{":8090", false},
		{"[]:8090", false},
	} {
		if got := servedHost(tc.host, allowed); got != tc.want {
			t.Errorf("servedHost(%q) = %t, want %t", tc.host, got, tc.want)
		}
	}
}

func TestLocalPath(t *testing.T) {
	for _, tc := range []struct{ next, want string }{
		{"/approvals", "/approvals"},
		{"/dead_letters", "/dead_letters"},
		{"/entities/customer-3?x=1", "/entities/customer-3?x=1"},
		{"/entities/a%2Fb", "/entities/a%2Fb"},
		{"", "/"},
		{"approvals", "/"},
		{"//evil.example/x", "/"},
		{"/\\evil.example/x", "/"},
		{"/%5Cevil.example/x", "/"},
		{"/%5cevil.example/x", "/"},
		{"/%2Fevil.example/x", "/"},
		{"/%2fevil.example/x", "/"},
		{"\\\\evil.example", "/"},
		{"https://evil.example/", "/"},
		{"javascript:alert(1)", "/"},
		{"/\t/evil.example", "/"},
		{"/%09/evil.example", "/"},
		{"/%0d%0aSet-Cookie:x", "/"},
		{"/%zz", "/"},
	} {
		if got := localPath(tc.next); got != tc.want {
			t.Errorf("localPath(%q) = %q, want %q", tc.next, got, tc.want)
		}
	}
}

// Whatever next is, the redirect target is a path of this site: one leading slash, no
// backslash or control character, in its text or decoded, and no host once parsed.
func FuzzLocalPath(f *testing.F) {
	for _, s := range []string{"/approvals", "//x", "/\\x", "/%5Cx", "/%2F%2Fx", "https://x/", "/a?b=//c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, next string) {
		got := localPath(next)
		if got == "/" {
			return
		}
		dec, err := url.PathUnescape(got)
		u, perr := url.Parse(got)
		if got != next || err != nil || perr != nil || u.Host != "" || u.IsAbs() ||
			!strings.HasPrefix(dec, "/") || strings.HasPrefix(dec, "//") || strings.Contains(dec, "\\") {
			t.Fatalf("localPath(%q) = %q", next, got)
		}
	})
}
