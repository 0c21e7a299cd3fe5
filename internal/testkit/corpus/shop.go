package corpus

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/bufbuild/protocompile/linker"
	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/internal/testkit/prototest"
)

// Builders of shop.proposal documents (interaction/testdata/proto/shop.proto) for tests and
// benchmarks that need sizes the template files cannot reach.

func render(tb testing.TB, s *interaction.Schema, m proto.Message) []byte {
	tb.Helper()
	v, err := s.ValueOf(m)
	if err != nil {
		tb.Fatal(err)
	}
	return v.Canonical()
}

// Proposal2K is a representative proposal of about 2 KiB: a refund with nested records, a
// nested variant, bytes, every integer representation and a prose note with escapes and
// non-ASCII text.
func Proposal2K(tb testing.TB, s *interaction.Schema, files linker.Files) []byte {
	tb.Helper()
	note := strings.Repeat("The courier confirmed the parcel was lost in transit; refund the full amount incl. shipping (€4.99). "+
		"Customer asked: \"Can you also send a new one?\"\n", 9)
	return render(tb, s, prototest.NewMessage(tb, files, "shop.v1.Proposal", map[string]any{
		"refund.order_id": "ORD-2024-000117-B", "refund.amount_minor": uint64(25990), "refund.reason": uint32(17),
		"refund.priority": int32(2), "refund.ledger_delta": int64(-25990), "refund.receipt": []byte("receipt:7f3a9c"),
		"refund.total.currency": "EUR", "refund.total.minor_units": int64(25990),
		"refund.fee.currency": "EUR", "refund.fee.minor_units": int64(499),
		"refund.notify.email.address": "customer.name@example.com", "refund.note": note,
	}))
}

// Proposal60K is a long-form letter of about 60 KiB: ten sections of prose (with escapes and
// non-ASCII text) and a 4,096-byte attachment.
func Proposal60K(tb testing.TB, s *interaction.Schema, files linker.Files) []byte {
	tb.Helper()
	para := "Dear customer, thank you for your patience while we investigated the delivery of order ORD-2024-000117-B. " +
		"Our courier reports the parcel as \"lost\" — we are sorry.\n"
	set := map[string]any{"letter.subject": "About your order", "letter.attachment.name": "statement.pdf",
		"letter.attachment.crc32": uint32(3735928559), "letter.via.email.address": "customer.name@example.com"}
	for i := 1; i <= 10; i++ {
		text := strings.Repeat(para, 4096/len(para))
		set["letter.s"+strconv.Itoa(i)+".heading"] = "Section " + strconv.Itoa(i)
		set["letter.s"+strconv.Itoa(i)+".text"] = text[:len(text)-len(text)%16]
	}
	content := make([]byte, 4096)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range content {
		content[i] = byte(r.UintN(256))
	}
	set["letter.attachment.content"] = content
	return render(tb, s, prototest.NewMessage(tb, files, "shop.v1.Proposal", set))
}

// LetterOfSize renders a letter document of exactly n bytes, valid when n is at most
// MaxDocumentBytes. Section texts mix letters (one byte each) and control characters (six
// bytes each once escaped). Past the bound, each further byte comes from turning five
// letters into one escaped control character, so the document stays valid in every respect
// but its size, and every prefix up to the bound is a prefix of an admitted document.
func LetterOfSize(tb testing.TB, s *interaction.Schema, files linker.Files, n int) []byte {
	tb.Helper()
	size := min(n, interaction.MaxDocumentBytes)
	m := prototest.NewMessage(tb, files, "shop.v1.Proposal", map[string]any{"letter.via.none": nil})
	room := size - len(render(tb, s, m))
	for i := 1; i <= 10 && room > 0; i++ {
		take := min(room, 14336)
		ctl := min(take/6, 2048)
		plain := take - 6*ctl
		prototest.SetPath(tb, m, "letter.s"+strconv.Itoa(i)+".text", strings.Repeat("a", plain)+strings.Repeat("\x01", ctl))
		room -= take
	}
	doc := render(tb, s, m)
	if len(doc) != size {
		tb.Fatalf("built %d bytes, want %d", len(doc), size)
	}
	for extra := n - size; extra > 0; extra-- {
		at := strings.LastIndex(string(doc), "aaaaa")
		if at < 0 {
			tb.Fatalf("cannot grow the document to %d bytes", n)
		}
		doc = append(doc[:at:at], append([]byte(`\u0001`), doc[at+5:]...)...)
	}
	return doc
}
