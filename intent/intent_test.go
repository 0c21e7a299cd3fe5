package intent_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
)

var (
	key1 = bytes.Repeat([]byte{0x11}, 32)
	key2 = bytes.Repeat([]byte{0x22}, 48)
)

func testRing(t testing.TB) *intent.Keyring {
	t.Helper()
	kr, err := intent.NewKeyring("k2", map[string][]byte{"k1": key1, "k2": key2})
	if err != nil {
		t.Fatal(err)
	}
	return kr
}

func sampleIntent() *pb.ToolIntent {
	return &pb.ToolIntent{
		IntentId:    intent.ID([]byte("customer-7"), 3, 1),
		EntityKey:   []byte("customer-7"),
		Seq:         3,
		StepIndex:   1,
		ToolName:    "refund",
		ArgsJson:    `{"amount":"12"}`,
		CreatedAtMs: 1767225600000,
		ExpiresAtMs: 1767225900000,
		Attempt:     0,
		Kind:        pb.ToolIntent_TOOL,
		TraceId:     bytes.Repeat([]byte{7}, 16),
	}
}

func TestSignVerifyRoundTrip(t *testing.T) {
	kr := testRing(t)
	ti := sampleIntent()
	if err := intent.Sign(ti, kr); err != nil {
		t.Fatal(err)
	}
	if ti.GetSigningKeyId() != "k2" || len(ti.GetSignature()) != sha256.Size || ti.GetSignatureScheme() != pb.ToolIntent_HMAC_SHA256 {
		t.Fatalf("signature envelope not set: %v", ti)
	}
	if o := intent.Verify(ti, kr); o != intent.OK {
		t.Fatalf("Verify = %v, want ok", o)
	}
	// Survives a wire round trip.
	b, _ := proto.Marshal(ti)
	back := &pb.ToolIntent{}
	if err := proto.Unmarshal(b, back); err != nil {
		t.Fatal(err)
	}
	if o := intent.Verify(back, kr); o != intent.OK {
		t.Fatalf("Verify after round trip = %v", o)
	}
	// An old key still verifies after rotation.
	old := sampleIntent()
	if err := intent.SignWith(old, kr, "k1"); err != nil {
		t.Fatal(err)
	}
	if o := intent.Verify(old, kr); o != intent.OK {
		t.Fatalf("k1 signature: %v", o)
	}
	if err := intent.SignWith(sampleIntent(), kr, "nope"); !errors.Is(err, intent.ErrSign) {
		t.Fatalf("SignWith unknown key: %v", err)
	}
}

// Every field of the intent, known or unknown, is covered by the signature.
func TestTamperingBreaksSignature(t *testing.T) {
	kr := testRing(t)
	signed := sampleIntent()
	signed.ProtoReflect().SetUnknown(protowire.AppendString(protowire.AppendTag(nil, 20, protowire.BytesType), "future"))
	if err := intent.Sign(signed, kr); err != nil {
		t.Fatal(err)
	}
	fields := signed.ProtoReflect().Descriptor().Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		switch fd.Name() {
		case "signature_scheme", "signing_key_id", "signature":
			continue
		}
		t.Run(string(fd.Name()), func(t *testing.T) {
			ti := proto.CloneOf(signed)
			m := ti.ProtoReflect()
			m.Set(fd, tampered(fd, m.Get(fd)))
			if o := intent.Verify(ti, kr); o != intent.BadSignature {
				t.Fatalf("tampered %s: Verify = %v, want bad_signature", fd.Name(), o)
			}
		})
	}
	t.Run("unknown field", func(t *testing.T) {
		ti := proto.CloneOf(signed)
		ti.ProtoReflect().SetUnknown(protowire.AppendString(protowire.AppendTag(nil, 20, protowire.BytesType), "fuTure"))
		if o := intent.Verify(ti, kr); o != intent.BadSignature {
			t.Fatalf("Verify = %v, want bad_signature", o)
		}
	})
	t.Run("dropped unknown field", func(t *testing.T) {
		ti := proto.CloneOf(signed)
		ti.ProtoReflect().SetUnknown(nil)
		if o := intent.Verify(ti, kr); o != intent.BadSignature {
			t.Fatalf("Verify = %v, want bad_signature", o)
		}
	})
	t.Run("signature byte", func(t *testing.T) {
		ti := proto.CloneOf(signed)
		ti.Signature[5] ^= 1
		if o := intent.Verify(ti, kr); o != intent.BadSignature {
			t.Fatalf("Verify = %v, want bad_signature", o)
		}
	})
	t.Run("key id swapped", func(t *testing.T) {
		ti := proto.CloneOf(signed)
		ti.SigningKeyId = "k1"
		if o := intent.Verify(ti, kr); o != intent.BadSignature {
			t.Fatalf("Verify = %v, want bad_signature", o)
		}
	})
}

func tampered(fd protoreflect.FieldDescriptor, v protoreflect.Value) protoreflect.Value {
	switch fd.Kind() {
	case protoreflect.StringKind:
		return protoreflect.ValueOfString(v.String() + "x")
	case protoreflect.BytesKind:
		return protoreflect.ValueOfBytes(append(bytes.Clone(v.Bytes()), 'x'))
	case protoreflect.Int64Kind:
		return protoreflect.ValueOfInt64(v.Int() + 1)
	case protoreflect.Uint32Kind:
		return protoreflect.ValueOfUint32(uint32(v.Uint()) + 1)
	case protoreflect.EnumKind:
		return protoreflect.ValueOfEnum(v.Enum() + 1)
	}
	panic(fmt.Sprintf("no tamper rule for %v", fd.Kind()))
}

func TestOutcomes(t *testing.T) {
	kr := testRing(t)
	signed := sampleIntent()
	if err := intent.Sign(signed, kr); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		mutate func(*pb.ToolIntent)
		want   intent.Outcome
	}{
		{"ok", func(*pb.ToolIntent) {}, intent.OK},
		{"unsigned", func(ti *pb.ToolIntent) {
			ti.SignatureScheme, ti.SigningKeyId, ti.Signature = 0, "", nil
		}, intent.Unsigned},
		{"bad signature", func(ti *pb.ToolIntent) { ti.ToolName = "delete_everything" }, intent.BadSignature},
		{"empty signature", func(ti *pb.ToolIntent) { ti.Signature = nil }, intent.BadSignature},
		{"unknown key", func(ti *pb.ToolIntent) { ti.SigningKeyId = "k9" }, intent.UnknownKey},
		{"unsupported scheme", func(ti *pb.ToolIntent) { ti.SignatureScheme = 7 }, intent.UnsupportedScheme},
		{"signature without scheme", func(ti *pb.ToolIntent) { ti.SignatureScheme = 0 }, intent.UnsupportedScheme},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ti := proto.CloneOf(signed)
			tc.mutate(ti)
			if got := intent.Verify(ti, kr); got != tc.want {
				t.Fatalf("Verify = %v, want %v", got, tc.want)
			}
		})
	}
	if intent.Verify(signed, nil) != intent.UnknownKey {
		t.Fatal("nil keyring must give unknown_key")
	}
	words := map[string]bool{}
	for _, o := range []intent.Outcome{intent.OK, intent.Unsigned, intent.BadSignature, intent.UnknownKey, intent.UnsupportedScheme} {
		if words[o.Reason()] {
			t.Fatalf("reason %s is not distinct", o.Reason())
		}
		words[o.Reason()] = true
	}
}

func TestModes(t *testing.T) {
	kr := testRing(t)
	signed := sampleIntent()
	if err := intent.Sign(signed, kr); err != nil {
		t.Fatal(err)
	}
	unsigned := sampleIntent()
	forged := proto.CloneOf(signed)
	forged.ArgsJson = `{"amount":"1200"}`
	for _, tc := range []struct {
		mode  string
		ti    *pb.ToolIntent
		admit bool
	}{
		{"require", signed, true}, {"require", unsigned, false}, {"require", forged, false},
		{"permissive", signed, true}, {"permissive", unsigned, true}, {"permissive", forged, false},
		{"off", signed, true}, {"off", unsigned, true}, {"off", forged, true},
	} {
		m, err := intent.ParseMode(tc.mode)
		if err != nil || m.String() != tc.mode {
			t.Fatalf("ParseMode(%q) = %v, %v", tc.mode, m, err)
		}
		err = m.Check(tc.ti, kr)
		if (err == nil) != tc.admit {
			t.Errorf("%s/%s: Check = %v, want admit=%v", tc.mode, tc.ti.GetToolName(), err, tc.admit)
		}
		if err != nil && !errors.Is(err, intent.ErrVerify) {
			t.Errorf("error %v is not ErrVerify", err)
		}
	}
	err := intent.ModeRequire.Check(forged, kr)
	if !errors.Is(err, &intent.Error{Code: intent.CodeVerify, Outcome: intent.BadSignature}) {
		t.Fatalf("forged intent: %v", err)
	}
	var ie *intent.Error
	if !errors.As(err, &ie) || ie.Outcome != intent.BadSignature {
		t.Fatalf("errors.As: %v", err)
	}
	if _, err := intent.ParseMode("lenient"); err == nil {
		t.Fatal("ParseMode accepted an unknown mode")
	}
}

// A Mode is a setting in text form: JSON (a serialized pipeline's options) carries its name.
func TestModeText(t *testing.T) {
	for _, m := range []intent.Mode{intent.ModeRequire, intent.ModePermissive, intent.ModeOff} {
		b, err := json.Marshal(struct{ M *intent.Mode }{&m})
		if want := `{"M":"` + m.String() + `"}`; err != nil || string(b) != want {
			t.Fatalf("%v: %s, %v; want %s", m, b, err, want)
		}
		var back struct{ M *intent.Mode }
		if err := json.Unmarshal(b, &back); err != nil || back.M == nil || *back.M != m {
			t.Fatalf("%s: read back %v, %v", b, back.M, err)
		}
	}
	if _, err := json.Marshal(intent.Mode(7)); !errors.Is(err, intent.ErrVerify) {
		t.Errorf("an unknown mode marshals: %v", err)
	}
	var m intent.Mode
	if err := json.Unmarshal([]byte(`"lenient"`), &m); !errors.Is(err, intent.ErrVerify) {
		t.Errorf("an unknown name unmarshals: %v", err)
	}
}

func TestKeyringParse(t *testing.T) {
	b64 := base64.StdEncoding.EncodeToString
	for _, tc := range []struct {
		name string
		doc  string
		ok   bool
	}{
		{"valid", `{"active":"a","keys":[{"id":"a","secret":"` + b64(key1) + `"}]}`, true},
		{"short key", `{"active":"a","keys":[{"id":"a","secret":"` + b64(key1[:31]) + `"}]}`, false},
		{"bad base64", `{"active":"a","keys":[{"id":"a","secret":"!!!"}]}`, false},
		{"duplicate id", `{"active":"a","keys":[{"id":"a","secret":"` + b64(key1) + `"},{"id":"a","secret":"` + b64(key2) + `"}]}`, false},
		{"missing active", `{"active":"b","keys":[{"id":"a","secret":"` + b64(key1) + `"}]}`, false},
		{"empty id", `{"active":"","keys":[{"id":"","secret":"` + b64(key1) + `"}]}`, false},
		{"unknown member", `{"active":"a","keys":[],"extra":1}`, false},
		{"not json", `active=a`, false},
		{"data after the document", `{"active":"a","keys":[{"id":"a","secret":"` + b64(key1) + `"}]} {}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := intent.ParseKeyring([]byte(tc.doc))
			if (err == nil) != tc.ok {
				t.Fatalf("ParseKeyring: %v, want ok=%v", err, tc.ok)
			}
			if err != nil {
				if !errors.Is(err, intent.ErrKeyring) {
					t.Fatalf("error %v is not ErrKeyring", err)
				}
				if strings.Contains(err.Error(), b64(key1)) || strings.Contains(err.Error(), b64(key2)) {
					t.Fatalf("error quotes key material: %v", err)
				}
			}
		})
	}
}

func TestLoadKeyring(t *testing.T) {
	doc := `{"active":"a","keys":[{"id":"a","secret":"` + base64.StdEncoding.EncodeToString(key1) + `"}]}`
	path := filepath.Join(t.TempDir(), "ring.json")
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("BEAMAGENTS_TEST_RING", doc)
	for _, ref := range []string{"file:" + path, "env:BEAMAGENTS_TEST_RING"} {
		kr, err := intent.LoadKeyring(ref)
		if err != nil || kr.Active() != "a" {
			t.Fatalf("LoadKeyring(%q) = %v, %v", ref, kr, err)
		}
	}
	for _, ref := range []string{"", "env:", "env:BEAMAGENTS_UNSET_VAR", "file:/nonexistent/ring.json", "vault:x", "a.json"} {
		if _, err := intent.LoadKeyring(ref); !errors.Is(err, intent.ErrKeyring) {
			t.Errorf("LoadKeyring(%q) = %v, want ErrKeyring", ref, err)
		}
	}
}

// CheckKeyringRef admits the forms LoadKeyring reads and refuses the others without reading
// anything or repeating the reference.
func TestCheckKeyringRef(t *testing.T) {
	for _, tc := range []struct {
		ref string
		ok  bool
	}{
		{"env:BEAMAGENTS_UNSET_VAR", true},
		{"file:/nonexistent/ring.json", true},
		{"gcpsm:projects/p/secrets/s/versions/latest", true},
		{"", false}, {"env:", false}, {"file:", false}, {"vault:x", false}, {"a.json", false},
		{"gcpsm:projects/p/secrets/s", false},
		{`{"active":"a","keys":[]}`, false},
	} {
		err := intent.CheckKeyringRef(tc.ref)
		if (err == nil) != tc.ok {
			t.Errorf("CheckKeyringRef(%q) = %v, want ok=%v", tc.ref, err, tc.ok)
		}
		if err != nil && (!errors.Is(err, intent.ErrKeyring) || len(tc.ref) > len("file:") && strings.Contains(err.Error(), tc.ref)) {
			t.Errorf("CheckKeyringRef(%q) = %v, want an ErrKeyring that does not repeat it", tc.ref, err)
		}
	}
}

func TestKeyringNeverPrintsKeys(t *testing.T) {
	kr := testRing(t)
	forms := []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d"}
	needles := [][]byte{key1, key2, []byte(base64.StdEncoding.EncodeToString(key1)), []byte(fmt.Sprintf("%x", key1)), []byte(fmt.Sprint(key1))}
	for _, f := range forms {
		for _, v := range []any{kr, *kr, []any{kr}, struct{ R *intent.Keyring }{kr}} {
			out := []byte(fmt.Sprintf(f, v))
			for _, n := range needles {
				if bytes.Contains(out, n) {
					t.Fatalf("fmt %s of %T printed key material: %s", f, v, out)
				}
			}
		}
	}
	if got := kr.String(); got != "intent.Keyring{active: k2, keys: [k1 k2]}" {
		t.Fatalf("String = %q", got)
	}
}

func FuzzParseKeyring(f *testing.F) {
	f.Add([]byte(`{"active":"a","keys":[{"id":"a","secret":"` + base64.StdEncoding.EncodeToString(key1) + `"}]}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		kr, err := intent.ParseKeyring(data)
		if err == nil && kr.Active() == "" {
			t.Fatal("accepted keyring without active key")
		}
	})
}

// Verify never panics and never reports ok for bytes it did not sign.
func FuzzVerify(f *testing.F) {
	kr := testRing(f)
	ti := sampleIntent()
	if err := intent.Sign(ti, kr); err != nil {
		f.Fatal(err)
	}
	good, _ := proto.Marshal(ti)
	f.Add(good)
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		var m pb.ToolIntent
		if proto.Unmarshal(data, &m) != nil {
			return
		}
		o := intent.Verify(&m, kr)
		if o != intent.OK {
			return
		}
		// ok only if the signing input equals that of a message we would sign identically.
		c := proto.CloneOf(&m)
		if err := intent.SignWith(c, kr, m.GetSigningKeyId()); err != nil || !bytes.Equal(c.Signature, m.Signature) {
			t.Fatalf("ok for an intent whose signature does not recompute")
		}
	})
}
