package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"unicode/utf8"

	pubsub "cloud.google.com/go/pubsub/v2"

	"github.com/beamagents/beamagents/console"
	"github.com/beamagents/beamagents/effector"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/internal/devloop"
	"github.com/beamagents/beamagents/internal/envelopes"
	"github.com/beamagents/beamagents/pubsub/wire"
	"github.com/beamagents/beamagents/records"
)

func init() {
	register(&command{name: "approve", summary: "decide an APPROVAL intent: a signed approval envelope for the next run's input, or a decision sent to a running `beamagents dev`", run: runApprove})
}

// runApprove decides one APPROVAL intent of a run's outputs and writes the decision as a
// JSON Lines AgentEnvelope, signed with the keyring and bound to the intent, as the
// effector's approvals page would: to stdout, or appended to --output. With --state_dir or
// --to it sends the decision to a running `beamagents dev` instead (its console's JSON API),
// whose effector signs it; the approver is then the API token's user.
func runApprove(e *env, args []string) int {
	fs := newFlags(e, "approve", "approve --intents GLOB --intent ID --approver WHO --keyring REF [--reject] [--note TEXT] [--args JSON] [--event_time_ms MS] [--output FILE | --topic TOPIC]\n"+
		"       beamagents approve --intent ID [--reject] [--note TEXT] [--args JSON] (--state_dir DIR | --to URL --token REF)")
	intents := fs.String("intents", "", "the run's intent files (out/intents.jsonl or .binpb): a glob")
	id := fs.String("intent", "", "the id of the APPROVAL intent decided")
	approver := fs.String("approver", "", "who decides, recorded in the approval and its trace")
	keyring := fs.String("keyring", "", "keyring reference signing the decision: env:VAR or file:PATH (the run's, which verifies it)")
	reject := fs.Bool("reject", false, "reject the call instead of approving it")
	at := fs.Int64("event_time_ms", 0, "the decision's event time and decided_at_ms (default: 1 ms after the intent was emitted, within its deadline)")
	output := fs.String("output", "", "append the envelope to this JSON Lines file instead of writing it to stdout")
	topic := fs.String("topic", "", "publish the envelope to this input topic, projects/P/topics/T, instead of writing it to stdout")
	note := fs.String("note", "", fmt.Sprintf("the approver's note on the decision, signed with it (at most %d bytes)", records.MaxApprovalNoteBytes))
	edited := fs.String("args", "", "arguments the approver edited, in the form of the intent's args_json (a JSON object of field ids): the gated call runs with them; signed with the decision")
	target := defineDevTarget(fs)
	if code, ok := parse(fs, args); !ok {
		return code
	}
	var noteOK check = func() error {
		switch {
		case len(*note) > records.MaxApprovalNoteBytes || !utf8.ValidString(*note):
			return refuseFlag("note", "at most %d bytes of UTF-8", records.MaxApprovalNoteBytes)
		case *edited != "" && *reject:
			return refuseFlag("args", "goes with an approval: a rejection runs no call")
		case *edited != "":
			if err := records.CheckApprovalArgs(*edited); err != nil {
				return refuseFlag("args", "%v", err)
			}
		}
		return nil
	}
	dec := effector.Decision{Approved: !*reject, Note: *note, ArgsJSON: *edited}
	if *target.stateDir != "" || *target.to != "" {
		return approveOnDev(e, fs, target, *id, dec, noteOK)
	}
	if code, ok := checkFlags(e, noArgs(fs), noteOK,
		when(*output != "" && *topic != "", func() error { return refuseFlag("output", "and --topic: choose one") }),
		when(*topic != "", pubsubTopic("topic", *topic)),
		required("intents", *intents, "the run's intent files"),
		required("intent", *id, "an intent id"),
		required("approver", *approver, "who decides"),
		required("keyring", *keyring, "a keyring reference"),
		when(*intents != "", inputGlob(context.Background(), "intents", *intents, intentType)),
		keyringRef("keyring", *keyring, true),
	); !ok {
		return code
	}
	ti, err := approvalIntent(*intents, *id)
	if err != nil {
		e.errorf("%v", err)
		return 1
	}
	kr, err := intent.LoadKeyring(*keyring)
	if err != nil {
		e.errorf("%v", err)
		return 2
	}
	dec.Approver = *approver
	env, err := envelopes.Decision(ti, kr, dec, *at)
	if err != nil {
		e.errorf("%v", err)
		return 1
	}
	if *topic != "" {
		return publishEnvelope(e, env, *topic, "the decision on "+env.GetApproval().GetIntentId())
	}
	return writeEnvelopeLine(e, env, *output)
}

// publishEnvelope publishes env (what it carries) to an input topic, as a run reading it
// expects: binary, ordered by entity key. With PUBSUB_EMULATOR_HOST set it goes to that
// emulator.
func publishEnvelope(e *env, env *pb.AgentEnvelope, topic, what string) int {
	name, _ := wire.ParseTopic(topic) // checked above
	ctx := context.Background()
	c, err := pubsub.NewClient(ctx, name.Project)
	if err != nil {
		e.errorf("--topic: %v", err)
		return 1
	}
	defer c.Close()
	if err := envelopes.Publisher(c, topic)(ctx, []*pb.AgentEnvelope{env}); err != nil {
		e.errorf("--topic: publishing %s: %v", what, err)
		return 1
	}
	fmt.Fprintf(e.stdout, "published %s to %s\n", what, topic)
	return 0
}

// approvalIntent is the first emission (attempt 0) of APPROVAL intent id among the files of
// glob: the one the key keeps pending, which the decision is bound to.
func approvalIntent(glob, id string) (*pb.ToolIntent, error) {
	files, err := records.Glob(glob)
	if err != nil {
		return nil, err
	}
	tis, err := records.ReadMessages(files, func() *pb.ToolIntent { return &pb.ToolIntent{} })
	if err != nil {
		return nil, err
	}
	var found *pb.ToolIntent
	for _, ti := range tis {
		if ti.GetIntentId() == id && (found == nil || ti.GetAttempt() < found.GetAttempt()) {
			found = ti
		}
	}
	switch {
	case found == nil:
		return nil, fmt.Errorf("no intent %s in %s", id, glob)
	case found.GetKind() != pb.ToolIntent_APPROVAL:
		return nil, fmt.Errorf("intent %s is a %s intent, not an APPROVAL: its result comes from the effector", id, found.GetKind())
	}
	return found, nil
}

// writeEnvelopeLine writes env as one JSON line to stdout or appends it to path.
func writeEnvelopeLine(e *env, env *pb.AgentEnvelope, path string) int {
	if path == "" {
		line, err := envelopes.Line(env)
		if err != nil {
			e.errorf("%v", err)
			return 1
		}
		e.stdout.Write(line)
		return 0
	}
	if err := envelopes.AppendLine(path, env); err != nil {
		e.errorf("--output: %v", err)
		return 1
	}
	return 0
}

// approveOnDev sends the decision on intent id to a running dev server: the flags that make
// an envelope here (the intents, the keyring, the approver, the event time, the output) do
// not apply, and are refused.
func approveOnDev(e *env, fs *flag.FlagSet, target devTargetFlags, id string, d effector.Decision, noteOK check) int {
	checks := []check{noArgs(fs), required("intent", id, "an intent id (GET /api/approvals lists them)"), noteOK}
	for _, name := range []string{"intents", "keyring", "approver", "event_time_ms", "output", "topic"} {
		checks = append(checks, when(isSet(fs, name), func() error {
			return refuseFlag(name, "does not apply when the decision goes to a dev server: its effector signs it, and the approver is the token's user")
		}))
	}
	if code, ok := checkFlags(e, append(checks, target.checks()...)...); !ok {
		return code
	}
	base, token, err := target.resolve()
	if err != nil {
		e.errorf("%v", err)
		var ue *usageError
		if errors.As(err, &ue) {
			return 2
		}
		return 1
	}
	decision := "reject"
	if d.Approved {
		decision = "approve"
	}
	var got console.APIDecision
	if err := devloop.Call(base, token, "/api/approvals/decide", console.APIDecision{IntentID: id, Decision: decision, Note: d.Note, ArgsJSON: d.ArgsJSON}, &got); err != nil {
		e.errorf("%v", err)
		return 1
	}
	fmt.Fprintf(e.stdout, "%s %s (entity %s) as %s\n", got.State, got.IntentID, got.EntityKey, got.Approver)
	return 0
}

// isSet reports whether flag name was given on the command line.
func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
