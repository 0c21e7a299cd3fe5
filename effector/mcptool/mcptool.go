package mcptool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/beamagents/beamagents/effector/tool"
	"github.com/beamagents/beamagents/interaction"
)

// MetaIntentID is the _meta key that carries the intent id of a call.
const MetaIntentID = "beamagents/intent_id"

// Options name one MCP server: exactly one of Command (stdio: the program and its
// arguments) or URL (a streamable HTTP endpoint).
type Options struct {
	Command []string
	URL     string
}

// Server is a connected MCP server and the tools it serves.
type Server struct {
	session *mcp.ClientSession
	tools   []tool.Tool
}

// Connect starts or dials the server, lists its tools and derives each one's argument schema
// from its inputSchema. names selects tools (all when empty); a name the server does not
// serve is an error.
func Connect(ctx context.Context, o Options, names ...string) (*Server, error) {
	var t mcp.Transport
	switch {
	case len(o.Command) > 0 && o.URL == "":
		t = &mcp.CommandTransport{Command: exec.Command(o.Command[0], o.Command[1:]...)}
	case o.URL != "" && len(o.Command) == 0:
		t = &mcp.StreamableClientTransport{Endpoint: o.URL}
	default:
		return nil, &tool.Error{Code: tool.CodeDeclaration, Detail: "an MCP server needs exactly one of a command or a URL"}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "beamagents-effector", Version: "v1"}, nil)
	session, err := client.Connect(ctx, t, nil)
	if err != nil {
		return nil, &tool.Error{Code: tool.CodeDeclaration, Detail: "connecting to the MCP server " + o.describe(), Err: err}
	}
	s := &Server{session: session}
	seen := map[string]bool{}
	for mt, err := range session.Tools(ctx, nil) {
		if err != nil {
			session.Close()
			return nil, &tool.Error{Code: tool.CodeDeclaration, Detail: "listing the tools of " + o.describe(), Err: err}
		}
		if len(names) > 0 && !slices.Contains(names, mt.Name) {
			continue
		}
		seen[mt.Name] = true
		schema, err := json.Marshal(mt.InputSchema)
		if err != nil {
			session.Close()
			return nil, &tool.Error{Code: tool.CodeDeclaration, Tool: mt.Name, Detail: "input schema", Err: err}
		}
		args, err := tool.FromJSONSchema(mt.Name+".args", schema)
		if err != nil {
			session.Close()
			return nil, err
		}
		s.tools = append(s.tools, &mcpTool{name: mt.Name, args: args, session: session})
	}
	for _, n := range names {
		if !seen[n] {
			session.Close()
			return nil, &tool.Error{Code: tool.CodeDeclaration, Tool: n, Detail: "the MCP server " + o.describe() + " does not serve it"}
		}
	}
	return s, nil
}

func (o Options) describe() string {
	if o.URL != "" {
		return o.URL
	}
	return strings.Join(o.Command, " ")
}

// Tools returns the server's selected tools.
func (s *Server) Tools() []tool.Tool { return slices.Clone(s.tools) }

// Close ends the session (and stops a stdio server).
func (s *Server) Close() error { return s.session.Close() }

type mcpTool struct {
	name    string
	args    *interaction.Schema
	session *mcp.ClientSession
}

func (t *mcpTool) Name() string              { return t.name }
func (t *mcpTool) Args() *interaction.Schema { return t.args }

func (t *mcpTool) Invoke(ctx context.Context, c tool.Call) ([]byte, error) {
	res, err := t.session.CallTool(ctx, &mcp.CallToolParams{
		Meta:      mcp.Meta{MetaIntentID: c.IntentID},
		Name:      t.name,
		Arguments: c.Args,
	})
	if err != nil {
		return nil, &tool.Error{Code: tool.CodeFailed, Tool: t.name, Detail: "MCP call", Err: err}
	}
	text := contentText(res.Content)
	if res.IsError {
		return nil, &tool.Error{Code: tool.CodeFailed, Tool: t.name, Detail: "the server reported an error", Err: errors.New(text)}
	}
	if res.StructuredContent != nil {
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			return nil, &tool.Error{Code: tool.CodeFailed, Tool: t.name, Detail: "structured content", Err: err}
		}
		return b, nil
	}
	return []byte(text), nil
}

func contentText(cs []mcp.Content) string {
	var parts []string
	for _, c := range cs {
		switch c := c.(type) {
		case *mcp.TextContent:
			parts = append(parts, c.Text)
		default:
			parts = append(parts, fmt.Sprintf("[%T]", c))
		}
	}
	return strings.Join(parts, "\n")
}
