package negotiate

import "testing"

// TestAppendStringIsTheDecodersRule: the renderer escapes exactly what canonical JSON
// escapes, and its output reads back as the same text.
func TestAppendStringIsTheDecodersRule(t *testing.T) {
	for c := 0; c < 0x80; c++ {
		s := string(rune(c))
		got := string(appendString(nil, s))
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
			want = `"\u00` + string(hexDigits[c>>4]) + string(hexDigits[c&0xf]) + `"`
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
	if got := string(appendString(nil, "é\u2028😀\u007f")); got != "\"é\u2028😀\u007f\"" {
		t.Errorf("non-ASCII is escaped: %s", got)
	}
}
