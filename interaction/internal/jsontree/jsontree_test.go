package jsontree

import (
	"strings"
	"testing"
)

func TestParseAccepts(t *testing.T) {
	for _, tc := range []struct{ name, in, check string }{
		{"duplicates kept in order", `{"a":1,"a":2}`, "2 members, last 2"},
		{"numbers keep their text", `[-0,1.5e+3,0.0]`, "-0 1.5e+3 0.0"},
		{"escapes", `"\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00"`, "\"\\/\b\f\n\r\té😀"},
		{"whitespace", " \t\r\n[ true , false , null ] ", "3 elems"},
		{"nesting at the limit", strings.Repeat("[", MaxNesting) + strings.Repeat("]", MaxNesting), "ok"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, err := Parse([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			switch tc.name {
			case "duplicates kept in order":
				if len(n.Members) != 2 || n.Last("a").Text != "2" {
					t.Fatalf("%+v", n)
				}
			case "numbers keep their text":
				if n.Elems[0].Text+" "+n.Elems[1].Text+" "+n.Elems[2].Text != tc.check {
					t.Fatalf("%+v", n.Elems)
				}
			case "escapes":
				if n.Text != tc.check {
					t.Fatalf("%q", n.Text)
				}
			case "whitespace":
				if len(n.Elems) != 3 || n.Elems[0].Kind != True || n.Elems[2].Kind != Null {
					t.Fatalf("%+v", n.Elems)
				}
			}
		})
	}
}

func TestParseRefuses(t *testing.T) {
	for _, in := range []string{
		``, `{`, `{"a"}`, `{"a":}`, `{"a":1,}`, `[1,]`, `[1 2]`, `01`, `1.`, `1e`, `-`, `+1`, `.5`,
		`"\x"`, `"\u12"`, `"\ud800"`, `"\udc00"`, `"\ud800\u0041"`, "\"a\x01\"", `"abc`, `tru`, `nul`,
		`{} {}`, `{'a':1}`, strings.Repeat("[", MaxNesting+1) + strings.Repeat("]", MaxNesting+1),
	} {
		if n, err := Parse([]byte(in)); err == nil {
			t.Errorf("%q parsed as %+v", in, n)
		}
	}
}
