package provider

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// ErrBaseURL is the error of a base URL no API can be reached at (errors.Is).
var ErrBaseURL = errors.New("base URL refused")

// BaseURLError says why CheckBaseURL refused a base URL; it is ErrBaseURL (errors.Is).
type BaseURLError struct {
	// Problem is the rule the URL breaks, without the URL.
	Problem string
}

func (e *BaseURLError) Error() string { return ErrBaseURL.Error() + ": " + e.Problem }

// Is makes a BaseURLError ErrBaseURL.
func (e *BaseURLError) Is(target error) bool { return target == ErrBaseURL }

// endpointPaths are the paths the SDKs append to a base URL: a base URL that already ends in
// one was copied from an endpoint's address, and every call would go to PATH/PATH.
var endpointPaths = []string{"/chat/completions", "/completions", "/responses", "/embeddings", "/messages"}

// CheckBaseURL refuses a base URL that no call could reach for api (OpenAI or Anthropic, the
// API kinds of model/hosted; "" checks what both share): a scheme other than http or https,
// no host, an empty, zero, non-numeric or out-of-range port, a query or a fragment (the SDKs
// append the endpoint's path, so either would end up inside the request's path or be
// dropped), a path that already ends in an endpoint, and for Anthropic a path ending in /v1
// (its SDK adds /v1/messages itself). An empty URL selects the vendor's and is accepted. The
// error never repeats the URL: it may carry credentials.
func CheckBaseURL(api, raw string) error {
	if raw == "" {
		return nil
	}
	refuse := func(format string, args ...any) error {
		return &BaseURLError{Problem: fmt.Sprintf(format, args...)}
	}
	u, err := url.Parse(raw)
	if err != nil {
		// Not even the parser's reason: it quotes the part it could not read.
		return refuse("not a URL (an absolute http:// or https:// URL is needed, for example http://127.0.0.1:8080/v1)")
	}
	switch {
	case !u.IsAbs():
		return refuse("not an absolute http:// or https:// URL (for example http://127.0.0.1:8080/v1)")
	case u.Scheme != "http" && u.Scheme != "https":
		return refuse("the scheme must be http or https (for example http://127.0.0.1:8080/v1)")
	case u.Opaque != "" || u.Host == "":
		return refuse("no host: an absolute http:// or https:// URL is needed (for example http://127.0.0.1:8080/v1)")
	case u.Hostname() == "":
		return refuse("the host name is empty")
	case strings.HasSuffix(u.Host, ":"):
		return refuse("the port is empty (write the host without a colon for the scheme's default port)")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return refuse("the port must be a number from 1 to 65535")
		}
	}
	path := strings.TrimRight(u.Path, "/")
	switch {
	case u.RawQuery != "" || u.ForceQuery:
		return refuse("a base URL has no query: the API's paths are appended to it")
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return refuse("a base URL has no fragment: the API's paths are appended to it")
	}
	for _, p := range endpointPaths {
		if strings.HasSuffix(path, p) {
			return refuse("the path ends in the endpoint %s, which the client appends itself: give the API's root", p)
		}
	}
	if api == "anthropic" && strings.HasSuffix(path, "/v1") {
		return refuse("the Anthropic client appends /v1/messages itself: give the API's root, without /v1")
	}
	return nil
}
