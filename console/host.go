package console

import (
	"net"
	"net/http"
	"net/url"
	"strings"
)

// hostGuard refuses, before any handler, a request whose Host is none the console serves:
// an IP address (the address it listens on, or any other: a page can only reach an address
// by its name if a name resolves to it), localhost and its subdomains, and the names the
// console is reached by through a proxy (Options.Hosts). A page on another site whose name
// was rebound to the console's address sends its own name as Host, and is refused with 421
// Misdirected Request: it can neither read the pages nor act.
func hostGuard(h http.Handler, names []string) http.Handler {
	allowed := map[string]bool{}
	for _, n := range names {
		allowed[canonicalHost(n)] = true
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !servedHost(r.Host, allowed) {
			http.Error(w, "misdirected request: this server does not answer to that host name (see --allowed_hosts)", http.StatusMisdirectedRequest)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// servedHost reports whether host (a Host header: a name or address, with or without a
// port) is one the console serves.
func servedHost(host string, allowed map[string]bool) bool {
	if host == "" {
		return false
	}
	if allowed[canonicalHost(host)] {
		return true
	}
	name := host
	if h, _, err := net.SplitHostPort(host); err == nil {
		name = h
	}
	name = canonicalHost(strings.TrimSuffix(strings.TrimPrefix(name, "["), "]"))
	switch {
	case name == "":
		return false
	case net.ParseIP(name) != nil:
		return true
	case name == "localhost" || strings.HasSuffix(name, ".localhost"):
		return true
	}
	return allowed[name]
}

func canonicalHost(h string) string { return strings.TrimSuffix(strings.ToLower(h), ".") }

// localPath returns next when it is a path of this site, else "/": a redirect target must
// start with one "/" and hold no scheme, no host, no backslash and no control character, in
// its text or once its percent-escapes are decoded (browsers read "/\evil.example" as
// "//evil.example").
func localPath(next string) string {
	decoded, err := url.PathUnescape(next)
	if err != nil {
		return "/"
	}
	for _, s := range []string{next, decoded} {
		if !strings.HasPrefix(s, "/") || strings.HasPrefix(s, "//") || strings.ContainsAny(s, "\\") || strings.ContainsFunc(s, isControl) {
			return "/"
		}
	}
	u, err := url.Parse(next)
	if err != nil || u.IsAbs() || u.Host != "" || u.User != nil {
		return "/"
	}
	return next
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }
