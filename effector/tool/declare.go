package tool

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/beamagents/beamagents/agent"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/interaction"
)

// Declared is a tool declared by Go types: T is its arguments, a struct Struct reads; R its
// result, marshaled as JSON. One Declared serves both sides of an intent: the agent declares
// the tool (Decl) and reads and writes its calls typed (Args, Call, Result); the effector runs
// it (Tool). It is immutable and safe for concurrent use.
type Declared[T, R any] struct {
	name, description string
	args              *interaction.Schema
}

// DeclareOption changes a declaration.
type DeclareOption func(*declareOptions)

type declareOptions struct{ typeID string }

// TypeID sets the stable id of the argument schema's root (default name + ".args"); fields'
// ids follow it. Ids are what intents and schema digests carry: keep them when renaming a tool.
func TypeID(id string) DeclareOption { return func(o *declareOptions) { o.typeID = id } }

// Declare declares the tool name with its description and the argument schema Struct[T]
// derives.
func Declare[T, R any](name, description string, opts ...DeclareOption) (*Declared[T, R], error) {
	o := declareOptions{typeID: name + ".args"}
	for _, opt := range opts {
		opt(&o)
	}
	s, err := Struct[T](o.typeID)
	if err != nil {
		return nil, err
	}
	return &Declared[T, R]{name: name, description: description, args: s}, nil
}

// Name returns the tool's name.
func (d *Declared[T, R]) Name() string { return d.name }

// Schema returns the argument schema.
func (d *Declared[T, R]) Schema() *interaction.Schema { return d.args }

// Decl returns the tool's declaration, for Chat.Tools, RunTools and Definition.Tools. Its
// schema is presented to the model by property names (interaction.CompilePresented).
func (d *Declared[T, R]) Decl() agent.ToolDecl {
	return agent.ToolDecl{Name: d.name, Description: d.description, Args: d.args}
}

// Args returns the arguments of an admitted call of the tool (a Turn's call, whose Args is
// set, or a call whose ArgsJSON is the canonical fields).
func (d *Declared[T, R]) Args(call agent.ToolCall) (T, error) {
	v := call.Args
	if v == nil {
		var err error
		if v, err = readFields(d.args, slices.Concat([]byte(`{"fields":`), []byte(call.ArgsJSON), []byte(`}`))); err != nil {
			var zero T
			return zero, &Error{Code: CodeArguments, Tool: d.name, Detail: "decoding arguments", Err: err}
		}
	}
	return Decode[T](v)
}

// Call returns a call of the tool with args, for Context.Tools: args must be within every
// bound of the schema (else ErrArguments), and ArgsJSON is their canonical fields.
func (d *Declared[T, R]) Call(args T) (agent.ToolCall, error) {
	v, err := Encode(d.args, args)
	if err != nil {
		return agent.ToolCall{}, err
	}
	return agent.ToolCall{Tool: d.name, Args: v, ArgsJSON: string(v.FieldsJSON())}, nil
}

// Result reads the payload of an OK result as R; a result of another status is an error of
// ErrFailed carrying its status and message.
func (d *Declared[T, R]) Result(res *pb.ToolResult) (R, error) {
	var out R
	if res.GetStatus() != pb.ToolResult_OK {
		return out, &Error{Code: CodeFailed, Tool: d.name, Detail: res.GetStatus().String() + ": " + res.GetErrorMessage()}
	}
	if err := json.Unmarshal(res.GetPayload(), &out); err != nil {
		return out, &Error{Code: CodeFailed, Tool: d.name, Detail: "decoding the result", Err: err}
	}
	return out, nil
}

// Tool returns the tool's implementation for the effector: fn gets the arguments as T (read
// back from the presented object, every bound checked again) and its R is the payload,
// marshaled as JSON. The call itself (its intent id, for idempotency) is CallOf(ctx).
func (d *Declared[T, R]) Tool(fn func(ctx context.Context, args T) (R, error)) Tool {
	return &declaredTool[T, R]{d: d, fn: fn}
}

type declaredTool[T, R any] struct {
	d  *Declared[T, R]
	fn func(context.Context, T) (R, error)
}

func (t *declaredTool[T, R]) Name() string              { return t.d.name }
func (t *declaredTool[T, R]) Args() *interaction.Schema { return t.d.args }

func (t *declaredTool[T, R]) Invoke(ctx context.Context, c Call) ([]byte, error) {
	in, err := t.read(c.Args)
	if err != nil {
		return nil, err
	}
	out, err := t.fn(context.WithValue(ctx, callKey{}, c), in)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, &Error{Code: CodeFailed, Tool: t.d.name, Detail: "encoding result", Err: err}
	}
	return b, nil
}

// read admits presented arguments (Present's shape) as T: the presented object is read back
// by property names and decoded strictly.
func (t *declaredTool[T, R]) read(args []byte) (T, error) {
	fields, err := t.d.args.ReadPresented(args)
	var v *interaction.Value
	if err == nil {
		v, err = readFields(t.d.args, fields)
	}
	if err != nil {
		var zero T
		return zero, &Error{Code: CodeArguments, Tool: t.d.name, Detail: "decoding arguments", Err: err}
	}
	return Decode[T](v)
}

// readFields admits a record value in the provider dialect ({"fields":…} by stable ids,
// integers as numbers or decimal strings) by s's strict decoder.
func readFields(s *interaction.Schema, value []byte) (*interaction.Value, error) {
	doc, _, err := s.ReadProvider(value)
	if err != nil {
		return nil, err
	}
	return s.Decode(doc)
}

type callKey struct{}

// CallOf returns the call a Declared tool's function runs for.
func CallOf(ctx context.Context) (Call, bool) {
	c, ok := ctx.Value(callKey{}).(Call)
	return c, ok
}
