package conformance_test

import (
	"bytes"
	"testing"

	"github.com/beamagents/beamagents/internal/testkit/conformance"
)

func TestParseConfig(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want conformance.Config
		err  bool
	}{
		{name: "empty", in: ""},
		{name: "blank", in: " \n"},
		{name: "all", in: `{"model_id":"m","max_tokens":5,"approve_over_milli_c":100000}`, want: conformance.Config{ModelID: "m", MaxTokens: 5, ApproveOverMilliC: 100000}},
		{name: "an unknown member", in: `{"model":"m"}`, err: true},
		{name: "data after", in: `{} {}`, err: true},
		{name: "not an object", in: `[]`, err: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := conformance.ParseConfig([]byte(tc.in))
			if (err != nil) != tc.err || got != tc.want {
				t.Fatalf("%+v %v", got, err)
			}
		})
	}
}

// Whatever the bytes, ParseConfig refuses them or returns a Config whose encoding parses back
// to it.
func FuzzParseConfig(f *testing.F) {
	for _, s := range []string{"", `{"model_id":"m","max_tokens":5}`, `{"approve_over_milli_c":-1}`, `{"x":1}`, `{`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := conformance.ParseConfig(b)
		if err != nil {
			return
		}
		again, err := conformance.ParseConfig(c.JSON())
		if err != nil || again != c || !bytes.Equal(again.JSON(), c.JSON()) {
			t.Fatalf("%q: %+v, again %+v %v", b, c, again, err)
		}
	})
}
