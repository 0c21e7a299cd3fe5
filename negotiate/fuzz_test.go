package negotiate_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/negotiate"
)

// FuzzCanonicalize: whatever the text, Canonicalize never panics and refuses only with its own
// code; whatever it admits, the strict decoder admits byte for byte, and the value is the one
// an independent reading of the text (encoding/json, numbers kept as text) finds; a text the
// strict decoder admits as it is comes back unchanged.
func FuzzCanonicalize(f *testing.F) {
	s := proposalSchema(f)
	for _, seed := range []string{
		providerRefund, canonicalDoc(s, canonicalRefund), strings.TrimSuffix(canonicalDoc(s, canonicalRefund), "\n"),
		`{"case":"assist.reply","fields":{"assist.reply.final":false,"assist.reply.text":"h\u00e9\/\ud83d\ude00"}}`,
		`{"case":"assist.lookup","fields":{"assist.lookup.order_id":"A1","assist.lookup.limit":-0,"assist.lookup.debug":""}}`,
		`{"case":"assist.ship","fields":{"assist.ship.order_id":"A1","assist.ship.coupon":null}}`,
		`{"case":"assist.lookup","fields":{"assist.lookup.order_id":"A1","assist.lookup.limit":1e3,"assist.lookup.debug":""}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Add([]byte(manyMembers(20, "k3")))
	f.Add([]byte(`{"schema":"beam_agents.interaction-value.v1","root_type_id":"assist.proposal","schema_digest":"` + s.Digest() +
		`","value":{"case":"assist.reply","fields":{"assist.reply.text":"","assist.reply.final":true}}}`))
	f.Fuzz(func(t *testing.T, text []byte) {
		c, err := negotiate.Canonicalize(s, text)
		_, decodeErr := s.Decode(text)
		if err != nil {
			var e *negotiate.Error
			if !errors.As(err, &e) || e.Code != negotiate.CodeCanonicalize || e.Rule == negotiate.RuleCanonicalDecoder {
				t.Fatalf("refusal %v", err)
			}
			if decodeErr == nil {
				t.Fatalf("refused a document the strict decoder admits: %v", err)
			}
			return
		}
		again, err := s.Decode(c.Document)
		if err != nil || !bytes.Equal(again.Canonical(), c.Document) || !bytes.Equal(c.Value.Canonical(), c.Document) {
			t.Fatalf("the strict decoder does not admit the result: %v", err)
		}
		if (len(c.Applied) == 0) != bytes.Equal(c.Document, text) {
			t.Fatalf("applied %v, but the text is canonical: %v", c.Applied, bytes.Equal(c.Document, text))
		}
		if decodeErr == nil && len(c.Applied) != 0 {
			t.Fatalf("changed a canonical document: %v", c.Applied)
		}
		if err := sameAsIndependentReading(c.Value, text); err != nil {
			t.Fatalf("the value changed: %v\ntext %q\n doc %s", err, text, c.Document)
		}
	})
}

// sameAsIndependentReading compares v with text read by encoding/json with numbers as text.
func sameAsIndependentReading(v *interaction.Value, text []byte) error {
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil {
		return err
	}
	top, ok := x.(map[string]any)
	if !ok {
		return fmt.Errorf("top level %T", x)
	}
	if inner, ok := top["value"]; ok {
		x = inner
	}
	return sameValue(v, x)
}

func sameValue(v *interaction.Value, x any) error {
	obj, ok := x.(map[string]any)
	if !ok {
		return fmt.Errorf("%s: %T", v.TypeID(), x)
	}
	if v.Case() != nil && obj["case"] != v.CaseID() {
		return fmt.Errorf("case %v, want %s", obj["case"], v.CaseID())
	}
	fields, ok := obj["fields"].(map[string]any)
	if !ok || len(fields) != v.NumFields() {
		return fmt.Errorf("%s: fields %v", v.TypeID(), obj["fields"])
	}
	for i := range v.NumFields() {
		fv := v.Field(i)
		if err := sameLeaf(fv, fields[fv.StableID()]); err != nil {
			return fmt.Errorf("%s: %w", fv.StableID(), err)
		}
	}
	return nil
}

func sameLeaf(fv interaction.FieldValue, x any) error {
	switch r := fv.Representation(); {
	case r == interaction.Bool:
		if x != fv.Bool() {
			return fmt.Errorf("%v, want %v", x, fv.Bool())
		}
	case r.IsInteger():
		return sameInteger(fv.Integer().String(), x)
	case r == interaction.String:
		if x != fv.Text() {
			return fmt.Errorf("%q, want %q", x, fv.Text())
		}
	case r == interaction.Bytes:
		elems, ok := x.([]any)
		if !ok || len(elems) != len(fv.Bytes()) {
			return fmt.Errorf("bytes %v", x)
		}
		for i, b := range fv.Bytes() {
			if err := sameInteger(fmt.Sprint(b), elems[i]); err != nil {
				return err
			}
		}
	default:
		return sameValue(fv.Nested(), x)
	}
	return nil
}

func sameInteger(want string, x any) error {
	var text string
	switch x := x.(type) {
	case json.Number:
		text = string(x)
	case string:
		text = x
	default:
		return fmt.Errorf("integer as %T", x)
	}
	got, ok := new(big.Int).SetString(text, 10)
	w, _ := new(big.Int).SetString(want, 10)
	if !ok || got.Cmp(w) != 0 {
		return fmt.Errorf("%s, want %s", text, want)
	}
	return nil
}

// FuzzCanonicalizeRoundTrip: a value written in any provider style — with or without the
// envelope, whitespace, member order, integers as numbers or strings, escapes, final LF —
// canonicalizes to exactly its canonical document.
func FuzzCanonicalizeRoundTrip(f *testing.F) {
	f.Add(uint8(2), "A1", uint64(100), int64(-5), int32(3), []byte{0, 255}, "EUR", int64(-1<<63), uint8(1), "a@b", "note/é😀\x01", uint32(7), uint64(1<<64-1), []byte{0xff, 0x00, 0x5a})
	f.Add(uint8(0), "", uint64(0), int64(0), int32(0), []byte(nil), "", int64(0), uint8(0), "", "", uint32(0), uint64(0), []byte(nil))
	f.Fuzz(func(t *testing.T, which uint8, order string, amount uint64, ledger int64, prio int32, receipt []byte, currency string, minor int64,
		notify uint8, address, note string, reason uint32, bigU uint64, style []byte) {
		s := proposalSchema(t)
		m := dynamicpb.NewMessage(s.Root().Descriptor())
		set := func(msg protoreflect.Message, name string, v any) {
			msg.Set(msg.Descriptor().Fields().ByName(protoreflect.Name(name)), protoreflect.ValueOf(v))
		}
		switch which % 3 {
		case 0:
			r := m.Mutable(m.Descriptor().Fields().ByName("reply")).Message()
			set(r, "text", fit(note, 4096))
			set(r, "final", notify%2 == 1)
		case 1:
			l := m.Mutable(m.Descriptor().Fields().ByName("lookup")).Message()
			set(l, "order_id", fit(order, 32))
			set(l, "limit", ledger)
			set(l, "debug", fit(address, 4096))
		default:
			r := m.Mutable(m.Descriptor().Fields().ByName("refund")).Message()
			set(r, "order_id", fit(order, 32))
			set(r, "amount_minor", 1+amount%1000000)
			set(r, "ledger_delta", ledger)
			set(r, "priority", prio%6)
			set(r, "receipt", receipt[:min(len(receipt), 64)])
			total := r.Mutable(r.Descriptor().Fields().ByName("total")).Message()
			set(total, "currency", fit(currency, 3))
			set(total, "minor_units", minor)
			ch := r.Mutable(r.Descriptor().Fields().ByName("notify")).Message()
			switch notify % 3 {
			case 0:
				set(ch.Mutable(ch.Descriptor().Fields().ByName("email")).Message(), "address", fit(address, 254))
			case 1:
				set(ch.Mutable(ch.Descriptor().Fields().ByName("sms")).Message(), "number", fit(address, 16))
			default:
				ch.Mutable(ch.Descriptor().Fields().ByName("none"))
			}
			set(r, "note", fit(note, 2048))
			set(r, "reason", reason%256)
			set(r, "big", bigU)
		}
		v, err := s.ValueOf(proto.Message(m))
		if err != nil {
			t.Fatal(err)
		}
		text := providerStyle(s, v, &styler{bits: style})
		c, err := negotiate.Canonicalize(s, text)
		if err != nil {
			t.Fatalf("%v\ntext %s", err, text)
		}
		if !bytes.Equal(c.Document, v.Canonical()) {
			t.Fatalf("got\n%s\nwant\n%s\nfrom %s", c.Document, v.Canonical(), text)
		}
	})
}

func fit(s string, n int) string {
	s = strings.ToValidUTF8(s, "?")
	for len(s) > n {
		_, size := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-size]
	}
	return s
}

// styler draws the style decisions of a provider rendering from fuzzed bits.
type styler struct {
	bits []byte
	i    int
}

func (s *styler) bit() bool {
	if len(s.bits) == 0 {
		return false
	}
	b := s.bits[(s.i/8)%len(s.bits)] >> (s.i % 8) & 1
	s.i++
	return b == 1
}

func (s *styler) space(b *bytes.Buffer) {
	if s.bit() {
		b.WriteString("\n  ")
	} else if s.bit() {
		b.WriteByte(' ')
	}
}

func providerStyle(schema *interaction.Schema, v *interaction.Value, st *styler) []byte {
	var b bytes.Buffer
	if st.bit() {
		b.WriteString(`{"schema":"` + interaction.ValueFormat + `",`)
		st.space(&b)
		b.WriteString(`"schema_digest":"` + schema.Digest() + `","root_type_id":"` + schema.RootTypeID() + `","value":`)
		st.space(&b)
		styleValue(&b, v, st)
		b.WriteByte('}')
	} else {
		styleValue(&b, v, st)
	}
	if st.bit() {
		b.WriteByte('\n')
	}
	return b.Bytes()
}

func styleValue(b *bytes.Buffer, v *interaction.Value, st *styler) {
	b.WriteByte('{')
	st.space(b)
	members := []func(){func() { b.WriteString(`"fields":`); st.space(b); styleFields(b, v, st) }}
	if v.Case() != nil {
		members = append(members, func() { b.WriteString(`"case":`); styleString(b, v.CaseID(), st) })
	}
	if st.bit() {
		members[0], members[len(members)-1] = members[len(members)-1], members[0]
	}
	for i, m := range members {
		if i > 0 {
			b.WriteByte(',')
			st.space(b)
		}
		m()
	}
	b.WriteByte('}')
}

func styleFields(b *bytes.Buffer, v *interaction.Value, st *styler) {
	order := make([]int, v.NumFields())
	for i := range order {
		order[i] = i
	}
	if st.bit() {
		for i, j := 0, len(order)-1; i < j; i, j = i+1, j-1 {
			order[i], order[j] = order[j], order[i]
		}
	}
	b.WriteByte('{')
	for n, i := range order {
		if n > 0 {
			b.WriteByte(',')
		}
		st.space(b)
		fv := v.Field(i)
		styleString(b, fv.StableID(), st)
		b.WriteByte(':')
		st.space(b)
		styleLeaf(b, fv, st)
	}
	b.WriteByte('}')
}

func styleLeaf(b *bytes.Buffer, fv interaction.FieldValue, st *styler) {
	switch r := fv.Representation(); {
	case r == interaction.Bool:
		fmt.Fprint(b, fv.Bool())
	case r.IsInteger():
		if st.bit() {
			b.WriteString(fv.Integer().String())
		} else {
			b.WriteString(`"` + fv.Integer().String() + `"`)
		}
	case r == interaction.String:
		styleString(b, fv.Text(), st)
	case r == interaction.Bytes:
		b.WriteByte('[')
		for i, x := range fv.Bytes() {
			if i > 0 {
				b.WriteByte(',')
				st.space(b)
			}
			fmt.Fprint(b, x)
		}
		b.WriteByte(']')
	default:
		styleValue(b, fv.Nested(), st)
	}
}

// styleString writes a valid JSON string literal of s, escaping more than canonical JSON
// does whenever the styler says so.
func styleString(b *bytes.Buffer, s string, st *styler) {
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 && st.bit():
			fmt.Fprintf(b, `\u%04X`, r)
		case r < 0x20:
			fmt.Fprintf(b, `\u%04x`, r)
		case r == '/' && st.bit():
			b.WriteString(`\/`)
		case r > 0xFFFF && st.bit():
			hi, lo := (r-0x10000)>>10+0xD800, (r-0x10000)&0x3FF+0xDC00
			fmt.Fprintf(b, `\u%04x\u%04X`, hi, lo)
		case r < 0x80 && st.bit():
			fmt.Fprintf(b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
}

// FuzzConvey: across a narrowing boundary a value is admitted exactly when it fits every
// narrowed bound, unchanged; otherwise it is refused by the first bound it exceeds, in the
// receiver's declaration order.
func FuzzConvey(f *testing.F) {
	f.Add(int64(255), "short", []byte{1, 2, 3, 4})
	f.Add(int64(256), strings.Repeat("é", 40), []byte{1, 2, 3, 4, 5})
	f.Add(int64(-1), "", []byte(nil))
	f.Fuzz(func(t *testing.T, quantity int64, note string, blob []byte) {
		p := schemaOf(t, "NarrowProducer")
		b := mustNegotiate(t, "NarrowProducer", "NarrowReceiver", negotiate.Agreement{Protocol: negotiate.TransformAll})
		m := dynamicpb.NewMessage(p.Root().Descriptor())
		note, blob = fit(note, 4096), blob[:min(len(blob), 4096)]
		fields := m.Descriptor().Fields()
		m.Set(fields.ByName("quantity"), protoreflect.ValueOfInt64(quantity))
		m.Set(fields.ByName("note"), protoreflect.ValueOfString(note))
		m.Set(fields.ByName("blob"), protoreflect.ValueOfBytes(blob))
		v, err := p.ValueOf(m)
		if err != nil {
			t.Fatal(err)
		}
		out, err := b.Convey(v)
		var want negotiate.Rule
		switch {
		case quantity < 0 || quantity > 255:
			want = negotiate.RuleNarrowInteger
		case len(note) > 64:
			want = negotiate.RuleNarrowString
		case len(blob) > 4:
			want = negotiate.RuleNarrowBytes
		}
		if want != "" {
			if !errors.Is(err, &negotiate.Error{Code: negotiate.CodeRefused, Rule: want}) || out.Value != nil {
				t.Fatalf("got %v, want %s", err, want)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		got := out.Value
		q, _ := got.Lookup("item.quantity")
		n, _ := got.Lookup("item.note")
		bl, _ := got.Lookup("item.blob")
		if q.Uint() != uint64(quantity) || n.Text() != note || !bytes.Equal(bl.Bytes(), blob) {
			t.Fatalf("changed: %s", got.FieldsJSON())
		}
	})
}
