package negotiate

import (
	"bytes"
	"strings"
	"testing"

	"github.com/beamagents/beamagents/internal/canonjson"
)

// genericDocument is the receipt document through the generic canonjson model: the reference
// appendDocument must equal byte for byte.
func (r *Receipt) genericDocument() []byte {
	return canonjson.Append(nil, canonjson.Object{
		{Key: "schema", Value: ReceiptFormat},
		{Key: "producer_digest", Value: r.ProducerDigest},
		{Key: "producer_case", Value: r.ProducerCase},
		{Key: "receiver_digest", Value: r.ReceiverDigest},
		{Key: "protocol", Value: r.Protocol.String()},
		{Key: "verdict", Value: r.Verdict.String()},
		{Key: "manifest_digest", Value: r.ManifestDigest},
		{Key: "delta_digest", Value: r.DeltaDigest},
		{Key: "conforming", Value: r.Conforming},
		{Key: "transformations", Value: canonjson.Strings(r.Transformations)},
		{Key: "warnings", Value: canonjson.Strings(r.Warnings)},
		{Key: "input_sha256", Value: r.InputSHA256},
		{Key: "output_sha256", Value: r.OutputSHA256},
		{Key: "reason", Value: r.Reason},
	})
}

// checkDocument compares the direct rendering, Document and Digest with the generic model's.
func checkDocument(t *testing.T, r *Receipt) {
	t.Helper()
	want := r.genericDocument()
	if got := r.Document(); !bytes.Equal(got, want) {
		t.Fatalf("Document\n got %s\nwant %s", got, want)
	}
	if got := r.appendDocument([]byte("prefix")); string(got) != "prefix"+string(want) {
		t.Fatalf("appendDocument after a prefix: %s", got)
	}
	if got, want := r.Digest(), canonjson.Digest(receiptDomain, want); got != want {
		t.Fatalf("Digest %s, want %s", got, want)
	}
}

func TestReceiptDocumentEqualsGeneric(t *testing.T) {
	digest := "sha256:" + strings.Repeat("0123456789abcdef", 4)
	full := Receipt{
		ProducerDigest: digest, ProducerCase: "assist.refund", ReceiverDigest: digest, Protocol: BestEffort,
		Verdict: BestEffortAllowed, ManifestDigest: digest, DeltaDigest: digest, Conforming: true,
		Transformations: []string{"drop:a.b", "move:a.c->a.d", "narrow:a.e"}, Warnings: []string{"nullability:prio.priority"},
		InputSHA256: digest, OutputSHA256: digest, Reason: "canonicalization_refused value.fields.missing",
	}
	long := full
	long.Transformations = make([]string, 64)
	for i := range long.Transformations {
		long.Transformations[i] = "drop:" + strings.Repeat("x", i)
	}
	for name, r := range map[string]Receipt{
		"zero":            {},
		"full":            full,
		"refused":         {ProducerDigest: digest, Protocol: FailFast, Verdict: TransformationRequired, InputSHA256: digest, Reason: "fail_fast not_canonical"},
		"empty lists":     {Transformations: []string{}, Warnings: []string{}},
		"empty elements":  {Transformations: []string{"", ""}, Warnings: []string{""}},
		"escapes":         {ProducerCase: "a\"b\\c\x00\x01\x1f\b\t\n\f\r\x7f/", Reason: "\u2028\u2029é€😀", Warnings: []string{"\"", "\\", "\x1f,"}},
		"invalid UTF-8":   {ProducerDigest: "\xff\xfe", Transformations: []string{"\xc3"}},
		"invalid enums":   {Protocol: Protocol(200), Verdict: Verdict(0)},
		"no protocol":     {Protocol: NoProtocol, Verdict: NegotiationRequired},
		"past the buffer": long,
	} {
		t.Run(name, func(t *testing.T) { checkDocument(t, &r) })
	}
}

// FuzzReceiptDocument compares the direct rendering with the generic model's over arbitrary
// receipts; each list is its string cut at '|'.
func FuzzReceiptDocument(f *testing.F) {
	f.Add("sha256:00", "assist.refund", "sha256:11", uint8(1), uint8(2), "sha256:22", "", true, "envelope|final_lf", "", "sha256:33", "sha256:33", "")
	f.Add("\x00\"\\", "é😀\u2028", "\xff", uint8(9), uint8(0), "\b\t\n\f\r", "\x7f", false, "|", "a|\x01|\"", "", "", "refused rule")
	f.Fuzz(func(t *testing.T, producer, producerCase, receiver string, protocol, verdict uint8, manifest, delta string, conforming bool,
		transformations, warnings, input, output, reason string) {
		r := &Receipt{
			ProducerDigest: producer, ProducerCase: producerCase, ReceiverDigest: receiver, Protocol: Protocol(protocol),
			Verdict: Verdict(verdict), ManifestDigest: manifest, DeltaDigest: delta, Conforming: conforming,
			Transformations: cutList(transformations), Warnings: cutList(warnings), InputSHA256: input, OutputSHA256: output, Reason: reason,
		}
		checkDocument(t, r)
	})
}

// cutList is s cut at '|', nil for "" (so the fuzzer reaches nil, empty elements and many).
func cutList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "|")
}

func TestReceiptDigestAllocations(t *testing.T) {
	digest := "sha256:" + strings.Repeat("0123456789abcdef", 4)
	r := &Receipt{ProducerDigest: digest, ReceiverDigest: digest, Protocol: TransformAll, Verdict: Compatible,
		ManifestDigest: digest, Conforming: true, InputSHA256: digest, OutputSHA256: digest}
	if n := testing.AllocsPerRun(100, func() { _ = r.Digest() }); n > 1 {
		t.Errorf("Digest allocates %v times, want only its result", n)
	}
}
