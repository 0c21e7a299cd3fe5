package negotiate

import (
	"fmt"
	"testing"

	"github.com/beamagents/beamagents/internal/canonjson"
)

// TestAppendStringIsTheDecodersRule: the shared canonical writer escapes exactly what this
// package's parser reads as canonical, and its output reads back as the same text.
func TestAppendStringIsTheDecodersRule(t *testing.T) {
	for c := 0; c < 0x80; c++ {
		s := string(rune(c))
		got := string(canonjson.AppendString(nil, s))
		var want string
		switch {
		case c == '"' || c == '\\':
			want = `"\` + s + `"`
		case c == '\b':
			want = `"\b"`
		case c == '\t':
			want = `"\t"`
		case c == '\n':
			want = `"\n"`
		case c == '\f':
			want = `"\f"`
		case c == '\r':
			want = `"\r"`
		case c < 0x20:
			want = fmt.Sprintf(`"\u%04x"`, c)
		default:
			want = `"` + s + `"`
		}
		if got != want {
			t.Errorf("%#x: %s, want %s", c, got, want)
		}
		if n, p, err := parseJSON(got); err != nil || n.text != s || p.escaped {
			t.Errorf("%#x does not read back canonically", c)
		}
	}
	if got := string(canonjson.AppendString(nil, "é\u2028😀\u007f")); got != "\"é\u2028😀\u007f\"" {
		t.Errorf("non-ASCII is escaped: %s", got)
	}
}
