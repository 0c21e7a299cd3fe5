package wire_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/beamagents/beamagents/pubsub/wire"
)

func TestIsJSON(t *testing.T) {
	for _, tc := range []struct {
		name, ct string
		want     bool
	}{
		{"absent", "", false},
		{"json", "application/json", true},
		{"json with charset", "application/json; charset=utf-8", true},
		{"json in capitals", "Application/JSON", true},
		{"protobuf", wire.ContentTypeProto, false},
		{"a longer media type", "application/jsonl", false},
		{"unparseable", "application/json; =", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			attrs := map[string]string{}
			if tc.ct != "" {
				attrs[wire.AttrContentType] = tc.ct
			}
			if got := wire.IsJSON(attrs); got != tc.want {
				t.Errorf("IsJSON(%q) = %v", tc.ct, got)
			}
		})
	}
}

func TestOrderingKey(t *testing.T) {
	for _, tc := range []struct {
		name   string
		entity []byte
		want   string
	}{
		{"utf-8", []byte("customer-1"), "customer-1"},
		{"not utf-8", []byte{0xff, 'k'}, "b64:/2s="},
		{"at the limit", bytes.Repeat([]byte("a"), 1024), strings.Repeat("a", 1024)},
		{"over the limit", bytes.Repeat([]byte("a"), 1025), ("b64:" + strings.Repeat("YWFh", 342))[:1024]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := wire.OrderingKey(tc.entity); got != tc.want {
				t.Errorf("OrderingKey = %q, want %q", got, tc.want)
			}
		})
	}
}

// FuzzOrderingKey: every entity key has a valid UTF-8 ordering key within Pub/Sub's limit,
// the key itself when it can be.
func FuzzOrderingKey(f *testing.F) {
	f.Add([]byte("customer-1"))
	f.Add([]byte{0xff, 0x00})
	f.Fuzz(func(t *testing.T, entity []byte) {
		k := wire.OrderingKey(entity)
		if !utf8.ValidString(k) || len(k) > 1024 {
			t.Fatalf("ordering key %q", k)
		}
		if utf8.Valid(entity) && len(entity) <= 1024 && k != string(entity) {
			t.Fatalf("a usable key %q became %q", entity, k)
		}
	})
}

func TestParseNames(t *testing.T) {
	for _, tc := range []struct {
		in   string
		sub  bool
		want wire.Name
		bad  bool
	}{
		{"projects/p/subscriptions/s", true, wire.Name{Project: "p", Kind: "subscriptions", ID: "s"}, false},
		{"projects/p/topics/t", false, wire.Name{Project: "p", Kind: "topics", ID: "t"}, false},
		{"projects/p/topics/t", true, wire.Name{}, true},
		{"s", true, wire.Name{}, true},
		{"projects//subscriptions/s", true, wire.Name{}, true},
		{"projects/p/subscriptions/s/x", true, wire.Name{}, true},
	} {
		parse := wire.ParseTopic
		if tc.sub {
			parse = wire.ParseSubscription
		}
		n, err := parse(tc.in)
		var ne *wire.NameError
		switch {
		case tc.bad && (!errors.As(err, &ne) || ne.Name != tc.in):
			t.Errorf("%q: %v, want a *NameError", tc.in, err)
		case !tc.bad && (err != nil || n != tc.want || n.String() != tc.in):
			t.Errorf("%q: %+v %v", tc.in, n, err)
		}
	}
}
