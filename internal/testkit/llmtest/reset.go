package llmtest

import (
	"net"
	"sync/atomic"
	"time"
)

// NewResetting starts a server like New whose first resets connections are reset as soon as
// they are accepted (a TCP RST, before a byte is read), like a server whose listen backlog
// overflows under a burst of new connections; later connections are served as New's.
// Connections counts only the connections served.
func NewResetting(api string, resets int, answer func(n int, body []byte) Reply) *Server {
	return start(api, answer, func(l net.Listener) net.Listener { return &resetting{Listener: l, left: int64(resets)} })
}

// resetting resets the connections it accepts while left is positive.
type resetting struct {
	net.Listener
	left int64
	n    atomic.Int64
}

func (l *resetting) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil || l.n.Add(1) > l.left {
			return c, err
		}
		if tc, ok := c.(*net.TCPConn); ok {
			tc.SetLinger(0) // close with a reset, not a FIN
		}
		c.Close()
	}
}

// Failing answers its first n requests with status (a 503, a 429) and every later one with
// then: a provider's transient error burst.
func Failing(n, status int, then func(n int, body []byte) Reply) func(int, []byte) Reply {
	return func(i int, body []byte) Reply {
		if i < n {
			return Reply{Status: status}
		}
		return then(i, body)
	}
}

// Flapping answers with status while the time since start, in periods of down then up, is
// in a down part, and with then otherwise: a provider that comes and goes.
func Flapping(start time.Time, down, up time.Duration, status int, then func(n int, body []byte) Reply) func(int, []byte) Reply {
	return func(i int, body []byte) Reply {
		if time.Since(start)%(down+up) < down {
			return Reply{Status: status}
		}
		return then(i, body)
	}
}

// Trouble is a provider in trouble first and then answering as scripted: one scenario of the
// provider-trouble tests and harnesses.
type Trouble struct {
	Name string
	// Serve starts the scenario's server for api, answering with answer once it is well, and
	// returns its base URL and what stops it (for the outage, a URL where nothing listens).
	Serve func(api string, answer func(int, []byte) Reply) (baseURL string, stop func())
}

// Troubles are the scenarios: a burst of 10 × 503, the first 10 connections reset, a
// provider down 5 s and up 5 s by turns, and an outage (nothing listens).
func Troubles() []Trouble {
	started := func(s *Server) (string, func()) { return s.BaseURL(), s.Close }
	return []Trouble{
		{"burst_10x503", func(api string, a func(int, []byte) Reply) (string, func()) {
			return started(New(api, Failing(10, 503, a)))
		}},
		{"first_10_connections_reset", func(api string, a func(int, []byte) Reply) (string, func()) {
			return started(NewResetting(api, 10, a))
		}},
		{"flapping_5s_down_5s_up", func(api string, a func(int, []byte) Reply) (string, func()) {
			return started(New(api, Flapping(time.Now(), 5*time.Second, 5*time.Second, 503, a)))
		}},
		{"outage", func(api string, _ func(int, []byte) Reply) (string, func()) { return Refused(api), func() {} }},
	}
}
