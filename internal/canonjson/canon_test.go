package canonjson

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
)

func TestAppendString(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"plain", "abc", `"abc"`},
		{"quote and backslash", `a"b\c`, `"a\"b\\c"`},
		{"short escapes", "\b\t\n\f\r", `"\b\t\n\f\r"`},
		{"other controls", "\x00\x01\x1f", `"\u0000\u0001\u001f"`},
		{"del and slash raw", "\x7f/", "\"\x7f/\""},
		{"non-ASCII raw", "é€😀\u2028", "\"é€😀\u2028\""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := string(AppendString(nil, tc.in))
			if got != tc.want {
				t.Fatalf("got %s, want %s", got, tc.want)
			}
			var back string
			if err := json.Unmarshal([]byte(got), &back); err != nil || back != tc.in {
				t.Fatalf("does not parse back: %v %q", err, back)
			}
		})
	}
}

func TestAppendModel(t *testing.T) {
	got := string(Append(nil, Object{{"a", Array{1, uint64(18446744073709551615), true, "x"}}, {"b", Object{}}, {"c", Raw(`[]`)}}))
	if want := `{"a":[1,18446744073709551615,true,"x"],"b":{},"c":[]}`; got != want {
		t.Fatalf("got %s", got)
	}
}

func TestQuote(t *testing.T) {
	if got := Quote("é\n", 10); got != `"é\n"` {
		t.Fatalf("got %s", got)
	}
	if got := Quote("aéé", 2); got != `"a"…` {
		t.Fatalf("cut inside a rune: %s", got)
	}
}

func TestDigest(t *testing.T) {
	for _, domain := range []string{"", "d\x00", "beam_agents.negotiate receipt.v1\x00", strings.Repeat("long domain ", 10)} {
		for _, body := range []string{"", "x", strings.Repeat("0123456789", 100)} {
			sum := sha256.Sum256([]byte(domain + body))
			if got, want := Digest(domain, []byte(body)), "sha256:"+hex.EncodeToString(sum[:]); got != want {
				t.Errorf("Digest(%q, %d bytes) = %s, want %s", domain, len(body), got, want)
			}
		}
	}
	if n := testing.AllocsPerRun(10, func() { _ = Digest("beam_agents.negotiate receipt.v1\x00", []byte("body")) }); n > 1 {
		t.Errorf("Digest allocates %v times, want only its result", n)
	}
}
