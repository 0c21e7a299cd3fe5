package cli

import (
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/console"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/internal/devloop"
	"github.com/beamagents/beamagents/internal/envelopes"
	"github.com/beamagents/beamagents/internal/secretref"
	"github.com/beamagents/beamagents/records"
)

func init() {
	register(&command{name: "send", summary: "send an event or a signal to a running `beamagents dev` (its JSON API), or write a signed signal envelope", run: runSend})
}

// maxSendBytes bounds an event's body (the console's JSON API takes a body of 1 MiB, base64
// included).
const maxSendBytes = 512 << 10

// devTargetFlags say which dev server a command talks to: the one whose state directory is
// --state_dir (its server.json), or --to URL with --token REF.
type devTargetFlags struct {
	stateDir, to, token *string
}

func defineDevTarget(fs *flag.FlagSet) devTargetFlags {
	return devTargetFlags{
		stateDir: fs.String("state_dir", "", "the state directory of the running `beamagents dev` to talk to (default: dev's default for the binary's only agent)"),
		to:       fs.String("to", "", "the URL of a console with the JSON API (dev's, or an effector's --console with --api_tokens), instead of --state_dir; needs --token"),
		token:    fs.String("token", "", "with --to: reference to the JSON API's bearer token, env:VAR or file:PATH (dev writes it to STATE_DIR/server.json)"),
	}
}

// checks are the target flags' launch-time checks.
func (t devTargetFlags) checks() []check {
	return []check{
		when(*t.to != "" && *t.stateDir != "", func() error { return refuseFlag("to", "and --state_dir: choose one") }),
		when(*t.to != "" && *t.token == "", func() error {
			return refuseFlag("token", "required with --to: env:VAR or file:PATH holding the bearer token")
		}),
		when(*t.token != "" && *t.to == "", func() error {
			return refuseFlag("token", "goes with --to (with --state_dir the token is read from the directory)")
		}),
		when(*t.to != "", func() error {
			if !strings.HasPrefix(*t.to, "http://") && !strings.HasPrefix(*t.to, "https://") {
				return refuseFlag("to", "not an http:// or https:// URL")
			}
			return nil
		}),
		when(*t.token != "", func() error {
			if !refForm(*t.token) || !localRef(*t.token) {
				return refuseFlag("token", "the value is not env:VAR or file:PATH; did you paste the token itself?")
			}
			return nil
		}),
	}
}

// resolve is the dev server's base URL (ending in /) and token.
func (t devTargetFlags) resolve() (string, string, error) {
	if *t.to != "" {
		tok, err := secretref.Resolve(context.Background(), *t.token)
		if err != nil {
			return "", "", fmt.Errorf("--token: %s", redact(err, *t.token))
		}
		return strings.TrimSuffix(*t.to, "/") + "/", strings.TrimSpace(string(tok)), nil
	}
	dir := *t.stateDir
	if dir == "" {
		names := agent.Registered()
		if len(names) != 1 {
			return "", "", &usageError{flag: "state_dir", problem: fmt.Sprintf("required: this binary registers %d agents (%s), so dev's default state directory is not one; pass dev's --state_dir, or --to URL --token REF", len(names), strings.Join(names, ", "))}
		}
		var err error
		if dir, err = devloop.DefaultStateDir(names[0]); err != nil {
			return "", "", err
		}
	}
	s, err := devloop.ReadServer(dir)
	return s.URL, s.Token, err
}

func runSend(e *env, args []string) int {
	fs := newFlags(e, "send", "send --key KEY [--signal NAME [--signal_id ID]] (--file FILE | TEXT...) [--state_dir DIR | --to URL --token REF]\n"+
		"       beamagents send --key KEY --signal NAME [--signal_id ID] (--file FILE | TEXT...) [--keyring REF] [--event_time_ms MS] [--output FILE | --topic TOPIC]")
	key := fs.String("key", "", "the entity key the event or signal is for")
	file := fs.String("file", "", "the event's body or the signal's payload: this file's bytes (instead of TEXT)")
	name := fs.String("signal", "", "send a signal of this name (what the key's handler awaits) instead of an event")
	sigID := fs.String("signal_id", "", "with --signal: its id; a key takes a signal of one id once (default: a random id)")
	keyring := fs.String("keyring", "", "with --signal: write the signal as an envelope signed with this keyring (env:VAR or file:PATH), instead of sending it to dev")
	at := fs.Int64("event_time_ms", 0, "with --signal, written as an envelope: its event time (default: now)")
	output := fs.String("output", "", "with --signal: append the signal's envelope to this JSON Lines file instead of sending it to dev")
	topic := fs.String("topic", "", "with --signal: publish the signal's envelope to this input topic, projects/P/topics/T, instead of sending it to dev")
	target := defineDevTarget(fs)
	if code, ok := parse(fs, args); !ok {
		return code
	}
	text := strings.Join(fs.Args(), " ")
	envelope := *keyring != "" || *output != "" || *topic != "" || isSet(fs, "event_time_ms")
	limit := int64(maxSendBytes)
	if *name != "" {
		limit = records.MaxSignalPayloadBytes
	}
	checks := []check{
		required("key", *key, "the entity key the event is for"),
		when(*file != "" && fs.NArg() > 0, func() error { return refuseFlag("file", "and a TEXT argument: choose one") }),
		when(*file == "" && fs.NArg() == 0 && *name == "", func() error { return refuseFlag("", "no event: give its TEXT as arguments, or --file FILE") }),
		when(*name == "" && *sigID != "", func() error { return refuseFlag("signal_id", "goes with --signal") }),
		when(*name == "" && envelope, func() error {
			return refuseFlag("signal", "required with --keyring, --output, --topic and --event_time_ms: they write a signal's envelope")
		}),
		when(*name != "", func() error {
			if err := records.CheckSignal(&pb.AgentEnvelope_Signal{Name: *name, SignalId: "-"}, nil); err != nil {
				return refuseFlag("signal", "%v", err)
			}
			if err := records.CheckSignal(&pb.AgentEnvelope_Signal{Name: "-", SignalId: cmp.Or(*sigID, "-")}, nil); err != nil {
				return refuseFlag("signal_id", "%v", err)
			}
			return nil
		}),
		when(int64(len(text)) > limit, func() error { return refuseFlag("", "the TEXT is over %d bytes", limit) }),
		smallFile("file", *file, limit),
	}
	if envelope {
		checks = append(checks,
			when(*target.stateDir != "" || *target.to != "", func() error {
				return refuseFlag("keyring", "--output, --topic and --event_time_ms write an envelope; --state_dir and --to send to dev: choose one")
			}),
			when(*output != "" && *topic != "", func() error { return refuseFlag("output", "and --topic: choose one") }),
			when(*topic != "", pubsubTopic("topic", *topic)),
			when(*keyring != "", keyringRef("keyring", *keyring, true)))
	} else {
		checks = append(checks, target.checks()...)
	}
	if code, ok := checkFlags(e, checks...); !ok {
		return code
	}
	body := []byte(text)
	if *file != "" {
		var err error
		if body, err = records.ReadCapped(*file, limit); err != nil {
			e.errorf("--file: %v", err)
			return 1
		}
	}
	if envelope {
		return writeSignal(e, &pb.AgentEnvelope_Signal{Name: *name, SignalId: cmp.Or(*sigID, console.NewSignalID()), Payload: body, EntityKey: []byte(*key)}, *keyring, *at, *output, *topic)
	}
	base, token, err := target.resolve()
	var ue *usageError
	if errors.As(err, &ue) {
		e.errorf("%v", err)
		return 2
	}
	if err != nil {
		e.errorf("%v", err)
		return 1
	}
	var got console.APIAccepted
	if *name != "" {
		sig := console.APISignal{Key: *key, Name: *name, ID: *sigID}
		if utf8.Valid(body) {
			sig.Payload = string(body)
		} else {
			sig.PayloadBase64 = base64.StdEncoding.EncodeToString(body)
		}
		if err := devloop.Call(base, token, "/api/signals", sig, &got); err != nil {
			e.errorf("%v", err)
			return 1
		}
		fmt.Fprintf(e.stdout, "sent signal %s (%s) to %s: event time %s (%d)\n", *name, got.ID, *key, time.UnixMilli(got.EventTimeMs).UTC().Format(time.RFC3339Nano), got.EventTimeMs)
		return 0
	}
	ev := console.APIEvent{Key: *key}
	if utf8.Valid(body) {
		ev.Body = string(body)
	} else {
		ev.BodyBase64 = base64.StdEncoding.EncodeToString(body)
	}
	if err := devloop.Call(base, token, "/api/events", ev, &got); err != nil {
		e.errorf("%v", err)
		return 1
	}
	fmt.Fprintf(e.stdout, "sent to %s: event time %s (%d)\n", *key, time.UnixMilli(got.EventTimeMs).UTC().Format(time.RFC3339Nano), got.EventTimeMs)
	return 0
}

// writeSignal writes sig as an envelope at event time at (0: now), signed with the keyring
// ref when one is given, as one JSON line to stdout or appended to output, or published to
// topic.
func writeSignal(e *env, sig *pb.AgentEnvelope_Signal, ref string, at int64, output, topic string) int {
	if at == 0 {
		at = time.Now().UnixMilli()
	}
	var kr *intent.Keyring
	if ref != "" {
		var err error
		if kr, err = intent.LoadKeyring(ref); err != nil {
			e.errorf("--keyring: %s", redact(err, ref))
			return 2
		}
	}
	env, err := envelopes.Signal(sig, kr, at)
	if err != nil {
		e.errorf("signing the signal: %v", err)
		return 1
	}
	if topic != "" {
		return publishEnvelope(e, env, topic, fmt.Sprintf("signal %s (%s)", sig.GetName(), sig.GetSignalId()))
	}
	return writeEnvelopeLine(e, env, output)
}
