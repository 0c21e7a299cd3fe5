package tool_test

import (
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/beamagents/beamagents/effector/tool"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/ from the current behaviour")

type refundAddress struct {
	Line    string `json:"line" tool:"maxlen=64"`
	Country string `json:"country" tool:"maxlen=2" desc:"ISO 3166 alpha-2"`
}

type refundArgs struct {
	OrderID     string         `json:"order_id" tool:"maxlen=32" desc:"The order to refund."`
	AmountCents int64          `json:"amount_cents" tool:"min=1,max=100000"`
	Ledger      uint64         `json:"ledger"`
	Attempt     uint32         `json:"attempt" tool:"max=3"`
	Delta       int32          `json:"delta"`
	Express     bool           `json:"express"`
	Proof       []byte         `json:"proof" tool:"maxlen=16"`
	Ship        refundAddress  `json:"ship"`
	Bill        *refundAddress `json:"bill"`
	Internal    string         `json:"-"`
	note        string         //lint:ignore U1000 an unexported field is not a property
}

type refundResult struct {
	Refunded int64  `json:"refunded"`
	Ref      string `json:"ref"`
}

// A Go struct derives the same kind of closed schema a .proto compiles to: ids dotted from
// the type id in field order, the Go kinds' ranges or the tags' bounds, nested records; its
// presented projection shows property names, exact integer bounds and the descriptions.
func TestStruct(t *testing.T) {
	s, err := tool.Struct[refundArgs]("payments.refund.args")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ty := range s.Types() {
		for i := range ty.NumFields() {
			f := ty.Field(i)
			lo, hi := f.Range()
			got = append(got, f.StableID()+" "+f.Representation().String()+" "+lo.String()+" "+hi.String()+" "+strconv.Itoa(f.MaxBytes()))
		}
	}
	want := []string{
		"payments.refund.args.ship.line string 0 0 64",
		"payments.refund.args.ship.country string 0 0 2",
		"payments.refund.args.bill.line string 0 0 64",
		"payments.refund.args.bill.country string 0 0 2",
		"payments.refund.args.order_id string 0 0 32",
		"payments.refund.args.amount_cents i64 1 100000 0",
		"payments.refund.args.ledger u64 0 18446744073709551615 0",
		"payments.refund.args.attempt u32 0 3 0",
		"payments.refund.args.delta i32 -2147483648 2147483647 0",
		"payments.refund.args.express bool 0 0 0",
		"payments.refund.args.proof bytes 0 0 16",
		"payments.refund.args.ship nested 0 0 0",
		"payments.refund.args.bill nested 0 0 0",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("fields:\n%s", strings.Join(got, "\n"))
	}
	if !s.Presented() {
		t.Fatal("a struct schema is not presented")
	}
	golden(t, "struct_presented.json", s.PresentedJSONSchema())
	// The same struct derives the same schema: its digest is its identity.
	again, _ := tool.Struct[refundArgs]("payments.refund.args")
	if again.Digest() != s.Digest() || again.PresentedDigest() != s.PresentedDigest() {
		t.Fatal("two derivations differ")
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if string(got) != string(want) {
		t.Fatalf("%s differs:\n got %s\nwant %s", name, got, want)
	}
}

// Go types outside the admitted leaves are refused, naming the field.
func TestStructRefusals(t *testing.T) {
	type cyclic struct {
		Next *cyclic `json:"next"`
	}
	type embedded struct{ refundAddress }
	for _, tc := range []struct {
		name  string
		build func() error
		field string
	}{
		{"float", derive[struct {
			Rate float64 `json:"rate"`
		}], ".Rate"},
		{"map", derive[struct {
			Tags map[string]string `json:"tags"`
		}], ".Tags"},
		{"slice", derive[struct {
			IDs []int64 `json:"ids"`
		}], ".IDs"},
		{"interface", derive[struct {
			Any any `json:"any"`
		}], ".Any"},
		{"int", derive[struct {
			N int `json:"n"`
		}], ".N"},
		{"pointer to scalar", derive[struct {
			N *int64 `json:"n"`
		}], ".N"},
		{"cycle", derive[cyclic], "cyclic.Next"},
		{"embedded", derive[embedded], "embedded.refundAddress"},
		{"string option", derive[struct {
			N int64 `json:"n,string"`
		}], ".N"},
		{"bad property", derive[struct {
			N int64 `json:"n-1"`
		}], ".N"},
		{"maxlen on an integer", derive[struct {
			N int64 `json:"n" tool:"maxlen=3"`
		}], ".N"},
		{"min out of range", derive[struct {
			N uint32 `json:"n" tool:"min=-1"`
		}], ".N"},
		{"maxlen over the ceiling", derive[struct {
			S string `json:"s" tool:"maxlen=5000"`
		}], ".S"},
		{"unknown bound", derive[struct {
			S string `json:"s" tool:"pattern=x"`
		}], ".S"},
		{"no fields", derive[struct{ x int }], ""},
		{"not a struct", derive[int64], "int64"},
		{"empty range", derive[struct {
			N int64 `json:"n" tool:"min=5,max=4"`
		}], ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.build()
			var te *tool.Error
			if !errors.Is(err, tool.ErrDeclaration) || !errors.As(err, &te) {
				t.Fatalf("%v", err)
			}
			if tc.field != "" && !strings.HasSuffix(te.Field, tc.field) {
				t.Fatalf("field %q, want …%s (%v)", te.Field, tc.field, err)
			}
		})
	}
}

func derive[T any]() error {
	_, err := tool.Struct[T]("t.args")
	return err
}

// A declared tool's calls round-trip typed: a handler's call is its canonical fields, the
// effector's tool reads the presented object back as T, and its R is the payload a handler
// reads.
func TestDeclare(t *testing.T) {
	refund, err := tool.Declare[refundArgs, refundResult]("payments.refund", "Refunds an order.")
	if err != nil {
		t.Fatal(err)
	}
	d := refund.Decl()
	if d.Name != "payments.refund" || d.Description != "Refunds an order." || d.Args.RootTypeID() != "payments.refund.args" {
		t.Fatalf("decl %+v", d)
	}
	in := refundArgs{OrderID: "A-1", AmountCents: 4599, Ledger: 1<<53 + 1, Attempt: 1, Delta: -7, Proof: []byte{0, 255},
		Ship: refundAddress{Line: "1 Main St", Country: "FR"}, Internal: "not sent"}
	call, err := refund.Call(in)
	if err != nil {
		t.Fatal(err)
	}
	const wantArgs = `{"payments.refund.args.order_id":"A-1","payments.refund.args.amount_cents":"4599","payments.refund.args.ledger":"9007199254740993","payments.refund.args.attempt":"1","payments.refund.args.delta":"-7","payments.refund.args.express":false,"payments.refund.args.proof":[0,255],"payments.refund.args.ship":{"fields":{"payments.refund.args.ship.line":"1 Main St","payments.refund.args.ship.country":"FR"}},"payments.refund.args.bill":{"fields":{"payments.refund.args.bill.line":"","payments.refund.args.bill.country":""}}}`
	if call.Tool != "payments.refund" || call.ArgsJSON != wantArgs {
		t.Fatalf("call %s %s", call.Tool, call.ArgsJSON)
	}
	back, err := refund.Args(call)
	want := in
	want.Internal, want.Bill = "", &refundAddress{}
	if err != nil || !equalArgs(back, want) {
		t.Fatalf("args %+v %v", back, err)
	}
	value := call.Args
	call.Args = nil // from ArgsJSON alone
	if back, err = refund.Args(call); err != nil || !equalArgs(back, want) {
		t.Fatalf("args from ArgsJSON %+v %v", back, err)
	}
	if _, err := refund.Call(refundArgs{AmountCents: 0}); !errors.Is(err, tool.ErrArguments) {
		t.Fatalf("an amount under its minimum: %v", err)
	}

	impl := refund.Tool(func(ctx context.Context, a refundArgs) (refundResult, error) {
		c, ok := tool.CallOf(ctx)
		if !ok || c.IntentID != "i-1" {
			t.Errorf("call %+v", c)
		}
		if !equalArgs(a, want) {
			t.Errorf("the tool got %+v", a)
		}
		return refundResult{Refunded: a.AmountCents, Ref: "R-1"}, nil
	})
	presented := tool.Present(value)
	payload, err := impl.Invoke(context.Background(), tool.Call{IntentID: "i-1", Tool: refund.Name(), Args: presented})
	if err != nil || string(payload) != `{"refunded":4599,"ref":"R-1"}` {
		t.Fatalf("invoke %s %v", payload, err)
	}
	if _, err := impl.Invoke(context.Background(), tool.Call{Args: []byte(`{"order_id":"A-1"}`)}); !errors.Is(err, tool.ErrArguments) {
		t.Fatalf("missing properties: %v", err)
	}
	res, err := refund.Result(&pb.ToolResult{Status: pb.ToolResult_OK, Payload: payload})
	if err != nil || res != (refundResult{Refunded: 4599, Ref: "R-1"}) {
		t.Fatalf("result %+v %v", res, err)
	}
	if _, err := refund.Result(&pb.ToolResult{Status: pb.ToolResult_REJECTED, ErrorMessage: "no"}); !errors.Is(err, tool.ErrFailed) {
		t.Fatalf("a rejected result: %v", err)
	}
}

func equalArgs(a, b refundArgs) bool { return reflect.DeepEqual(a, b) }

// FuzzDeclaredTool: a declared tool reads any presented arguments without panicking, refuses
// with ErrArguments, and what it reads encodes back to arguments it reads the same.
func FuzzDeclaredTool(f *testing.F) {
	for _, seed := range []string{
		`{"order_id":"A-1","amount_cents":4599,"ledger":"9007199254740993","attempt":1,"delta":-7,"express":false,"proof":"AP8=","ship":{"line":"x","country":"FR"},"bill":{"line":"","country":""}}`,
		`{"order_id":"A-1","amount_cents":0}`, `{}`, `[]`, `{"ship":[]}`, `{"proof":"A"}`,
	} {
		f.Add([]byte(seed))
	}
	refund, err := tool.Declare[refundArgs, refundArgs]("payments.refund", "")
	if err != nil {
		f.Fatal(err)
	}
	impl := refund.Tool(func(_ context.Context, a refundArgs) (refundArgs, error) { return a, nil })
	f.Fuzz(func(t *testing.T, args []byte) {
		out, err := impl.Invoke(context.Background(), tool.Call{Args: args})
		if err != nil {
			if !errors.Is(err, tool.ErrArguments) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		got, err := refund.Result(&pb.ToolResult{Status: pb.ToolResult_OK, Payload: out})
		if err != nil {
			t.Fatal(err)
		}
		call, err := refund.Call(got)
		if err != nil {
			t.Fatalf("read %+v but cannot encode it: %v", got, err)
		}
		again, err := impl.Invoke(context.Background(), tool.Call{Args: tool.Present(call.Args)})
		if err != nil || string(again) != string(out) {
			t.Fatalf("round trip %s != %s (%v)", again, out, err)
		}
	})
}
