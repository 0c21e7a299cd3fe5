package provider_test

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/model/provider"
)

// wirePattern is the tool-name pattern of both APIs.
var wirePattern = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

func TestWireName(t *testing.T) {
	long := strings.Repeat("a", 60) + ".lookup"
	for _, c := range []struct{ declared, want string }{
		{"devices.lookup", "devices_lookup"},
		{"devices.dispatch", "devices_dispatch"},
		{"lookup", "lookup"},
		{"a-b_C9", "a-b_C9"},
		{"weather/today", "weather_today"},
		{"café", "caf_"},  // one '_' per character, not per byte
		{"a\xffb", "a_b"}, // one per byte of invalid UTF-8
		{strings.Repeat("x", 64), strings.Repeat("x", 64)},
		{long, ""}, // checked below against the rule
	} {
		got := provider.WireName(c.declared)
		if c.declared == long {
			if len(got) != 64 || !strings.HasPrefix(got, strings.Repeat("a", 55)+"_") || got == provider.WireName(long+"x") {
				t.Errorf("WireName(long) = %q: want 55 bytes, '_' and an 8-digit hash of the declared name", got)
			}
		} else if got != c.want {
			t.Errorf("WireName(%q) = %q, want %q", c.declared, got, c.want)
		}
		if !wirePattern.MatchString(got) || !provider.ValidWireName(got) {
			t.Errorf("WireName(%q) = %q is outside the providers' pattern", c.declared, got)
		}
	}
}

func TestToolNamesRefusals(t *testing.T) {
	for _, c := range []struct {
		name     string
		declared []string
		ok       bool
	}{
		{"distinct", []string{"devices.lookup", "devices.dispatch"}, true},
		{"collision", []string{"devices.lookup", "devices_lookup"}, false},
		{"collision by characters", []string{"a.b", "a/b"}, false},
		{"declared twice", []string{"lookup", "lookup"}, false},
		{"empty", []string{""}, false},
		{"control character", []string{"look\nup"}, false},
		{"NUL", []string{"\x00lookup"}, false},
		{"invalid UTF-8", []string{"a\xffb"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := provider.NewToolNames(c.declared)
			if c.ok != (err == nil) {
				t.Fatalf("NewToolNames(%q) = %v", c.declared, err)
			}
			if err != nil && !errors.Is(err, model.ErrToolName) {
				t.Fatalf("error %v is not model_tool_name", err)
			}
		})
	}
}

// An answer's name maps back only when it is a wire name of the request; any other name stays
// a name no declared tool has, the declared name itself included.
func TestToolNamesDeclared(t *testing.T) {
	names, err := provider.NewToolNames([]string{"devices.lookup", "devices.dispatch", "plain"})
	if err != nil {
		t.Fatal(err)
	}
	declared := map[string]bool{"devices.lookup": true, "devices.dispatch": true, "plain": true}
	for _, c := range []struct {
		wire     string
		want     string
		admitted bool
	}{
		{"devices_lookup", "devices.lookup", true},
		{"devices_dispatch", "devices.dispatch", true},
		{"plain", "plain", true},
		{"devices.lookup", "\x00devices.lookup", false}, // the declared name, answered raw
		{"devices_selfdestruct", "devices_selfdestruct", false},
		{"", "", false},
	} {
		got := names.Declared(c.wire)
		if got != c.want || declared[got] != c.admitted {
			t.Errorf("Declared(%q) = %q (declared %v), want %q (declared %v)", c.wire, got, declared[got], c.want, c.admitted)
		}
	}
	if w := names.Wire("devices.lookup"); w != "devices_lookup" {
		t.Errorf("Wire = %q", w)
	}
	if w := names.Wire("other.tool"); w != "other_tool" {
		t.Errorf("Wire of an undeclared name = %q", w)
	}
}

// FuzzToolNames: a wire name always matches the providers' pattern, a valid set of declared
// names round-trips through its wire names, and a name that is no wire name of the set never
// maps back to a declared name.
func FuzzToolNames(f *testing.F) {
	for _, s := range [][3]string{
		{"devices.lookup", "devices_lookup", "devices.lookup"},
		{"devices.lookup", "devices.dispatch", "devices_lookup"},
		{"café", "a\xffb", "caf_"},
		{strings.Repeat("n.", 40), "x", strings.Repeat("n_", 40)},
		{"", "\x00a", "a"},
	} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, a, b, answered string) {
		for _, d := range []string{a, b} {
			if w := provider.WireName(d); d != "" && !wirePattern.MatchString(w) {
				t.Fatalf("WireName(%q) = %q", d, w)
			}
		}
		names, err := provider.NewToolNames([]string{a, b})
		if err != nil {
			if !errors.Is(err, model.ErrToolName) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		wires := map[string]bool{}
		for _, d := range []string{a, b} {
			w := names.Wire(d)
			wires[w] = true
			if got := names.Declared(w); got != d {
				t.Fatalf("Declared(Wire(%q)) = %q", d, got)
			}
		}
		if got := names.Declared(answered); !wires[answered] && (got == a || got == b) {
			t.Fatalf("the unknown name %q maps back to the declared %q", answered, got)
		}
	})
}
