package canonjson

import (
	"bytes"
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

// appendStringBytewise is AppendString's rule one byte at a time: the reference for the
// word-at-a-time scan.
func appendStringBytewise(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' {
			dst = appendEscape(dst, c)
		} else {
			dst = append(dst, c)
		}
	}
	return append(dst, '"')
}

// TestPlainWords puts every byte value in every lane of words of plain ASCII, of bytes next to
// each special byte and of UTF-8 bytes, and every pair of byte values in a few pairs of lanes
// (a borrow from a lower lane must not hide or fake a match in a higher one).
func TestPlainWords(t *testing.T) {
	check := func(w []byte) {
		want := true
		for _, c := range w {
			want = want && c >= 0x20 && c != '"' && c != '\\'
		}
		got := plainWords(string(w)+"\x00") == 8
		if got != want {
			t.Fatalf("plainWords(% x) = %v, want %v", w, got, want)
		}
		if got != (plainWords(string(w)+"abcdefgh") == 16) || got != (plainWords("abcdefgh"+string(w)) == 16) {
			t.Fatalf("plainWords(% x) depends on the words around it", w)
		}
	}
	for _, fill := range []byte{'a', 0x20, '"' + 1, '"' - 1, '\\' + 1, '\\' - 1, 0x7f, 0x80, 0xa2, 0xdc, 0xff} {
		for lane := range 8 {
			for b := range 256 {
				w := bytes.Repeat([]byte{fill}, 8)
				w[lane] = byte(b)
				check(w)
			}
		}
	}
	for _, lanes := range [][2]int{{0, 1}, {0, 7}, {3, 4}, {6, 7}} {
		for b0 := range 256 {
			for b1 := range 256 {
				w := []byte("abcdefgh")
				w[lanes[0]], w[lanes[1]] = byte(b0), byte(b1)
				check(w)
			}
		}
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "abc", `a"b\c`, "\b\t\n\f\r\x00\x1f\x7f", "sha256:0123456789abcdef0123456789abcdef", "é€😀\u2028 \"quoted\"\n", "\xff\xfe\x80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := AppendString([]byte("x"), s), appendStringBytewise([]byte("x"), s); !bytes.Equal(got, want) {
			t.Fatalf("AppendString(%q) = %s, want %s", s, got, want)
		}
	})
}
