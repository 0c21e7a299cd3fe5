package negotiate_test

import (
	"errors"
	"fmt"
	"log"
	"path/filepath"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/internal/testkit/prototest"
	"github.com/beamagents/beamagents/negotiate"
)

// exampleSchema compiles the schema rooted at a message of testdata/proto.
func exampleSchema(name string) *interaction.Schema {
	files, err := prototest.Compile(filepath.Join("testdata", "proto"), "pairs.proto", "proposal.proto")
	if err != nil {
		log.Fatal(err)
	}
	md, err := prototest.Find(files, name)
	if err != nil {
		log.Fatal(err)
	}
	s, err := interaction.Compile(md)
	if err != nil {
		log.Fatal(err)
	}
	return s
}

func exampleValue(s *interaction.Schema, pjson string) *interaction.Value {
	m := dynamicpb.NewMessage(s.Root().Descriptor())
	if err := protojson.Unmarshal([]byte(pjson), m); err != nil {
		log.Fatal(err)
	}
	v, err := s.ValueOf(m)
	if err != nil {
		log.Fatal(err)
	}
	return v
}

func ExampleDelta() {
	d, err := negotiate.Delta(exampleSchema("pairs.v1.NarrowProducer"), exampleSchema("pairs.v1.NarrowReceiver"))
	if err != nil {
		log.Fatal(err)
	}
	for _, e := range d.Entries() {
		fmt.Println(e.Kind, e.Mismatch, e.Producer.Member, e.Producer.Decl, "->", e.Receiver.Decl)
	}
	// Output:
	// type_mismatch max_bytes item.blob bytes max_bytes 4096 -> bytes max_bytes 4
	// type_mismatch max_bytes item.note string max_bytes 4096 -> string max_bytes 64
	// type_mismatch range item.quantity i64 [-9223372036854775808, 9223372036854775807] -> u32 [0, 255]
}

func ExampleEvaluate() {
	d, err := negotiate.Delta(exampleSchema("pairs.v1.NarrowProducer"), exampleSchema("pairs.v1.NarrowReceiver"))
	if err != nil {
		log.Fatal(err)
	}
	for _, a := range []negotiate.Agreement{
		{},
		{Protocol: negotiate.TransformAll},
		{Protocol: negotiate.BestEffort, ReceiverAcceptsBestEffort: true},
		{Protocol: negotiate.FailFast},
	} {
		m := negotiate.Evaluate(d, a)
		fmt.Printf("%-13s gate %d %s\n", a.Protocol, m.Gate, m.Verdict)
	}
	// Output:
	//               gate 3 NEGOTIATION_REQUIRED
	// TRANSFORM_ALL gate 5 TRANSFORMATION_REQUIRED
	// BEST_EFFORT   gate 4 BEST_EFFORT_ALLOWED
	// FAIL_FAST     gate 5 TRANSFORMATION_REQUIRED
}

func ExampleNegotiate() {
	producer, receiver := exampleSchema("pairs.v1.ChattyProducer"), exampleSchema("pairs.v1.StrictReceiver")

	// The receiver is closed: without declared drops the boundary is not built, and the
	// refusal names the fields to remove.
	_, err := negotiate.Negotiate(producer, receiver, negotiate.Agreement{Protocol: negotiate.TransformAll})
	var e *negotiate.Error
	if errors.As(err, &e) {
		for _, entry := range e.Entries {
			fmt.Println(e.Code, entry.Kind, entry.Producer.Member)
		}
	}

	b, err := negotiate.Negotiate(producer, receiver, negotiate.Agreement{
		Protocol: negotiate.TransformAll,
		Drop:     []string{"reply.reasoning", "reply.confidence"},
	})
	if err != nil {
		log.Fatal(err)
	}
	out, err := b.Convey(exampleValue(producer, `{"answer":"42","reasoning":"because","confidence":90}`))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s %v %s\n", out.Value.FieldsJSON(), out.Receipt.Transformations, out.Receipt.Disposition())
	// Output:
	// negotiate_untransformable extra_field reply.confidence
	// negotiate_untransformable extra_field reply.reasoning
	// {"reply.answer":"42"} [drop:reply.confidence drop:reply.reasoning] accept
}

func ExampleCheckBinding() {
	proposal, args := exampleSchema("proposal.v1.Proposal"), exampleSchema("proposal.v1.LookupArgs")

	// At build time, FAIL_FAST refuses a binding whose delta is not empty and lists it.
	_, err := negotiate.CheckBinding(proposal, "assist.lookup", args, negotiate.Agreement{Protocol: negotiate.FailFast})
	fmt.Println(errors.Is(err, negotiate.ErrFailFast), len(err.(*negotiate.Error).Entries))

	// TRANSFORM_ALL with the debug field declared droppable: each admitted proposal of the case
	// becomes the tool's arguments, its limit checked against the tool's narrower bound.
	b, err := negotiate.CheckBinding(proposal, "assist.lookup", args, negotiate.Agreement{
		Protocol: negotiate.TransformAll, Drop: []string{"assist.lookup.debug"},
	})
	if err != nil {
		log.Fatal(err)
	}
	out, err := b.Convey(exampleValue(proposal, `{"lookup":{"orderId":"A1","limit":"10","debug":"trace"}}`))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s\n", out.Value.FieldsJSON())
	_, err = b.Convey(exampleValue(proposal, `{"lookup":{"orderId":"A1","limit":"500"}}`))
	fmt.Println(err.(*negotiate.Error).Rule)
	// Output:
	// true 2
	// {"assist.lookup.order_id":"A1","assist.lookup.limit":"10"}
	// narrow.integer_range
}

func ExampleCanonicalize() {
	s := exampleSchema("proposal.v1.Proposal")
	text := `{
  "fields": {"assist.lookup.limit": 25, "assist.lookup.order_id": "A1", "assist.lookup.debug": ""},
  "case": "assist.lookup"
}`
	c, err := negotiate.Canonicalize(s, []byte(text))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s\n%v\n", c.Value.JSON(), c.Applied)

	_, err = negotiate.Canonicalize(s, []byte(`{"case":"assist.lookup","fields":{"assist.lookup.limit":2.5,"assist.lookup.order_id":"A1","assist.lookup.debug":""}}`))
	fmt.Println(err)
	// Output:
	// {"case":"assist.lookup","fields":{"assist.lookup.order_id":"A1","assist.lookup.limit":"25","assist.lookup.debug":""}}
	// [envelope final_lf integer_number key_order whitespace]
	// canonicalization_refused value.integer_fraction: $.value.fields["assist.lookup.limit"]: "2.5" has a fraction; an integer is never rounded
}

func ExampleAdmitter_Admit() {
	s := exampleSchema("proposal.v1.Proposal")
	m, err := negotiate.NewAdmitter(s, negotiate.Agreement{Protocol: negotiate.TransformAll})
	if err != nil {
		log.Fatal(err)
	}
	out, err := m.Admit([]byte(`{"case": "assist.reply", "fields": {"assist.reply.text": "Shipped.", "assist.reply.final": true}}`))
	if err != nil {
		log.Fatal(err)
	}
	attrs := out.Receipt.Attributes()
	for _, k := range []string{negotiate.AttrProtocol, negotiate.AttrVerdict, negotiate.AttrConforming, negotiate.AttrTransformations} {
		fmt.Printf("%s=%s\n", k, attrs[k])
	}
	// Output:
	// beam_agents.conformance.protocol=TRANSFORM_ALL
	// beam_agents.conformance.verdict=TRANSFORMATION_REQUIRED
	// beam_agents.conformance.conforming=true
	// beam_agents.conformance.transformations=envelope,final_lf,whitespace
}

func ExampleReceiptFromAttributes() {
	s := exampleSchema("proposal.v1.Proposal")
	m, err := negotiate.NewAdmitter(s, negotiate.Agreement{Protocol: negotiate.TransformAll})
	if err != nil {
		log.Fatal(err)
	}
	out, _ := m.Admit([]byte(`{"case":"assist.reply","fields":{"assist.reply.text":null,"assist.reply.final":true}}`))
	// Downstream, from the trace alone:
	rc, err := negotiate.ReceiptFromAttributes(out.Receipt.Attributes())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(rc.Disposition(), rc.Reason)
	// Output:
	// reject canonicalization_refused value.null
}
