package mcptool_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/beamagents/beamagents/effector"
	"github.com/beamagents/beamagents/effector/mcptool"
	"github.com/beamagents/beamagents/effector/store"
	"github.com/beamagents/beamagents/effector/tool"
	"github.com/beamagents/beamagents/examples/support"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/negotiate"
)

const stdioEnv = "BEAMAGENTS_MCPTOOL_TEST_STDIO"

func TestMain(m *testing.M) {
	if os.Getenv(stdioEnv) == "1" {
		// The test binary re-executed as a stdio MCP server.
		if err := newServer(nil).Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	os.Exit(m.Run())
}

type lookupIn struct {
	OrderID string `json:"order_id" jsonschema:"the order to look up"`
}

type lookupOut struct {
	Status string `json:"status"`
	Intent string `json:"intent"`
}

type refundIn struct {
	OrderID     string `json:"order_id"`
	AmountCents int64  `json:"amount_cents"`
}

// newServer is a real MCP server from the SDK with two tools; calls records each call's
// arguments and intent id.
func newServer(calls *callLog) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "orders", Version: "v1"}, nil)
	maxLen := 8
	lookupSchema := &jsonschema.Schema{Type: "object", Required: []string{"order_id"}, Properties: map[string]*jsonschema.Schema{
		"order_id": {Type: "string", MaxLength: &maxLen},
	}}
	mcp.AddTool(s, &mcp.Tool{Name: "orders.lookup", InputSchema: lookupSchema}, func(ctx context.Context, req *mcp.CallToolRequest, in lookupIn) (*mcp.CallToolResult, lookupOut, error) {
		id, _ := req.Params.Meta[mcptool.MetaIntentID].(string)
		calls.add(in.OrderID + "@" + id)
		if in.OrderID == "A-0000" {
			return nil, lookupOut{}, errors.New("order A-0000 is archived")
		}
		return nil, lookupOut{Status: "shipped", Intent: id}, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "payments.refund"}, func(ctx context.Context, req *mcp.CallToolRequest, in refundIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("refunded %d", in.AmountCents)}}}, nil, nil
	})
	return s
}

type callLog struct {
	mu    sync.Mutex
	calls []string
}

func (c *callLog) add(s string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.calls = append(c.calls, s)
	c.mu.Unlock()
}

// httpServer serves newServer over streamable HTTP on a loopback port.
func httpServer(t *testing.T, calls *callLog) string {
	t.Helper()
	srv := newServer(calls)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)}
	go hs.Serve(l)
	t.Cleanup(func() { hs.Close() })
	return "http://" + l.Addr().String() + "/mcp"
}

func connect(t *testing.T, o mcptool.Options, names ...string) *mcptool.Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := mcptool.Connect(ctx, o, names...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// The support agent's orders.lookup intents run on an MCP server's tool: the server's
// inputSchema is negotiated against the agent's proposal case, the call carries the intent
// id, and the structured result is the payload.
func TestEffectorRunsMCPTool(t *testing.T) {
	for _, transport := range []string{"streamable http", "stdio"} {
		t.Run(transport, func(t *testing.T) {
			calls := &callLog{}
			o := mcptool.Options{URL: httpServer(t, calls)}
			if transport == "stdio" {
				calls = nil
				o = mcptool.Options{Command: []string{os.Args[0], "-test.run=^$"}}
				os.Setenv(stdioEnv, "1")
				t.Cleanup(func() { os.Unsetenv(stdioEnv) })
			}
			srv := connect(t, o, "orders.lookup")
			tools := srv.Tools()
			if len(tools) != 1 || tools[0].Name() != "orders.lookup" {
				t.Fatalf("tools %v", tools)
			}
			os.Unsetenv(stdioEnv)
			e, kr := newEffector(t, tools[0])
			ti := lookup(t, kr, "customer-2", "A-1001")
			out, err := e.Handle(context.Background(), ti)
			if err != nil {
				t.Fatal(err)
			}
			res := out.Envelope.GetToolResult()
			want := `{"intent":"` + ti.GetIntentId() + `","status":"shipped"}`
			if res.GetStatus() != pb.ToolResult_OK || string(res.GetPayload()) != want {
				t.Fatalf("%v %s %s", res.GetStatus(), res.GetPayload(), res.GetErrorMessage())
			}
			if calls != nil && (len(calls.calls) != 1 || calls.calls[0] != "A-1001@"+ti.GetIntentId()) {
				t.Fatalf("server saw %v", calls.calls)
			}
			failed, _ := e.Handle(context.Background(), lookup(t, kr, "customer-9", "A-0000"))
			if r := failed.Envelope.GetToolResult(); r.GetStatus() != pb.ToolResult_ERROR || !strings.Contains(r.GetErrorMessage(), "archived") {
				t.Fatalf("tool error: %v", r)
			}
		})
	}
}

// A server schema the agent's arguments cannot reach refuses the binding when the effector is
// built; a value over the server's own bound is REJECTED, and the server never sees it.
func TestMCPSchemaNegotiated(t *testing.T) {
	srv := connect(t, mcptool.Options{URL: httpServer(t, nil)})
	var refund tool.Tool
	for _, tl := range srv.Tools() {
		if tl.Name() == "payments.refund" {
			refund = tl
		}
	}
	if refund == nil {
		t.Fatal("payments.refund not listed")
	}
	// The agent declares order_id, amount_cents and reason; the server takes no reason.
	refundArgs, _ := support.RefundArgs()
	_, err := effector.New(effector.Options{Store: openBolt(t), Tools: []effector.Binding{{Tool: tool.WithAgreement(refund, negotiate.Agreement{
		Protocol: negotiate.TransformAll,
		Moves:    map[string]string{"payments.refund.order_id": "payments.refund.args.order_id", "payments.refund.amount_cents": "payments.refund.args.amount_cents"},
	}), Producer: refundArgs}}})
	if !errors.Is(err, effector.ErrConfig) {
		t.Fatalf("binding with an extra field: %v", err)
	}
	calls := &callLog{}
	strict := connect(t, mcptool.Options{URL: httpServer(t, calls)}, "orders.lookup")
	e, kr := newEffector(t, strict.Tools()[0])
	out, _ := e.Handle(context.Background(), lookup(t, kr, "customer-2", "A-10000001"))
	if r := out.Envelope.GetToolResult(); r.GetStatus() != pb.ToolResult_REJECTED || !strings.HasPrefix(r.GetErrorMessage(), effector.ReasonBadArguments) {
		t.Fatalf("over-long order id: %v", r)
	}
	if len(calls.calls) != 0 {
		t.Fatalf("server saw %v", calls.calls)
	}
}

func TestConnectRefusals(t *testing.T) {
	ctx := context.Background()
	if _, err := mcptool.Connect(ctx, mcptool.Options{}); !errors.Is(err, tool.ErrDeclaration) {
		t.Fatal(err)
	}
	if _, err := mcptool.Connect(ctx, mcptool.Options{URL: httpServer(t, nil)}, "payments.wire"); !errors.Is(err, tool.ErrDeclaration) {
		t.Fatal(err)
	}
}

func newEffector(t *testing.T, lookupTool tool.Tool) (*effector.Effector, *intent.Keyring) {
	t.Helper()
	kr, _ := intent.NewKeyring("k", map[string][]byte{"k": []byte(strings.Repeat("k", 32))})
	proposal, _ := support.Schema()
	bound := tool.WithAgreement(lookupTool, negotiate.Agreement{
		Protocol: negotiate.TransformAll,
		Moves:    map[string]string{"support.lookup_order.order_id": "orders.lookup.args.order_id"},
	})
	// The server bounds order_id to 8 bytes, the agent to 32: the binding narrows each value
	// that fits and refuses the others.
	e, err := effector.New(effector.Options{Keyring: kr, Store: openBolt(t), Tools: []effector.Binding{{Tool: bound, Producer: proposal, CaseID: "support.lookup_order"}}})
	if err != nil {
		t.Fatal(err)
	}
	return e, kr
}

func lookup(t *testing.T, kr *intent.Keyring, entity, order string) *pb.ToolIntent {
	ti := &pb.ToolIntent{
		IntentId: intent.ID([]byte(entity), 0, 0), EntityKey: []byte(entity), ToolName: "orders.lookup",
		ArgsJson: `{"support.lookup_order.order_id":"` + order + `"}`, Kind: pb.ToolIntent_TOOL,
	}
	if err := intent.Sign(ti, kr); err != nil {
		t.Fatal(err)
	}
	return ti
}

func openBolt(t *testing.T) store.Store {
	s, err := store.OpenBolt(t.TempDir() + "/d.db")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
