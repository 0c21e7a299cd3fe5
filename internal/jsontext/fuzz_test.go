package jsontext

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/beamagents/beamagents/internal/canonjson"
)

// FuzzParse holds the reader to encoding/json on valid UTF-8 (the same texts are JSON, except
// that this reader refuses lone surrogates that encoding/json replaces), and to canonjson:
// re-rendering what it read canonically reads back as the same tree with no deviation, and a
// text that reads with no deviation and equals its rendering is exactly that rendering.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"a":[1,-0,2.5e+3,true,false,null,"x\u00e9\ud83d\ude00\/"]}`, ` [ 1 , 2 ] `, `"\ud800"`, `{"a":1,"a":2}`,
		`01`, `[`, `"\u001F"`, `{"":{"":[[]]}}`, "\"\x7f\"",
	} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, text string, dups bool) {
		n, dev, err := Parse(text, Options{RejectDuplicates: dups, MaxNesting: 64})
		if !utf8.ValidString(text) {
			return
		}
		if err != nil {
			if se := err.(*SyntaxError); se.Offset < 0 || se.Offset > len(text) {
				t.Fatalf("offset %d outside the text", se.Offset)
			}
			return
		}
		var generic any
		if json.Unmarshal([]byte(text), &generic) != nil {
			t.Fatalf("encoding/json refuses %q, which parsed", text)
		}
		canon := render(nil, n)
		again, dev2, err := Parse(string(canon), Options{RejectDuplicates: dups, MaxNesting: 64})
		if err != nil || dev2 != (Deviations{}) || !bytes.Equal(render(nil, again), canon) {
			t.Fatalf("the rendering %s does not read back canonically: %v %+v", canon, err, dev2)
		}
		if dev == (Deviations{}) && string(canon) != text {
			t.Fatalf("%q reads without deviation but renders as %s", text, canon)
		}
	})
}

// render writes a tree back with canonjson, numbers as their token text.
func render(dst []byte, n *Node) []byte {
	switch n.Kind {
	case Null, False, True:
		return append(dst, n.Kind.String()...)
	case Number:
		return append(dst, n.Text...)
	case String:
		return canonjson.AppendString(dst, n.Text)
	case Array:
		dst = append(dst, '[')
		for i, e := range n.Elems {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = render(dst, e)
		}
		return append(dst, ']')
	}
	dst = append(dst, '{')
	for i, m := range n.Members {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = canonjson.AppendString(dst, m.Key)
		dst = append(dst, ':')
		dst = render(dst, m.Value)
	}
	return append(dst, '}')
}
