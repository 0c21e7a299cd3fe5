package diag

import "testing"

func TestOneLine(t *testing.T) {
	for in, want := range map[string]string{"a": "a", "a\nb\r": `a\nb\r`, "": ""} {
		if got := OneLine(in); got != want {
			t.Errorf("OneLine(%q) = %q", in, got)
		}
	}
}

func TestMatch(t *testing.T) {
	for _, tc := range []struct {
		name               string
		code, rule, tc, tr string
		want               bool
	}{
		{"code only", "C", "r", "C", "", true},
		{"code and rule", "C", "r", "C", "r", true},
		{"another rule", "C", "r", "C", "s", false},
		{"another code", "C", "r", "D", "", false},
	} {
		if got := Match(tc.code, tc.rule, tc.tc, tc.tr); got != tc.want {
			t.Errorf("%s: %v", tc.name, got)
		}
	}
}

func TestLine(t *testing.T) {
	if got := Line("C", "r", "$.a", "bad\nthing"); got != `C r: $.a: bad\nthing` {
		t.Errorf("got %q", got)
	}
	if got := Line("C", "r", "", "m"); got != "C r: m" {
		t.Errorf("got %q", got)
	}
}
