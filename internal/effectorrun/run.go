package effectorrun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	pubsub "cloud.google.com/go/pubsub/v2"

	"github.com/beamagents/beamagents/effector"
	"github.com/beamagents/beamagents/effector/tool"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/pubsub/wire"
)

// An UndecidedError ends a files run that wrote its outputs but holds approvals nobody can
// decide (no console): the run is not a success, and the person running it is told how to
// decide.
type UndecidedError struct {
	N     int    // approvals open
	Input string // the run's intents glob
}

func (u *UndecidedError) Error() string {
	return fmt.Sprintf("%d approval(s) nobody can decide here: serve them with --console, or decide each with "+
		"`beamagents approve --intents %s --intent ID --approver WHO --keyring REF` and give the decisions to the next run", u.N, u.Input)
}

// Files is a files run: intents read from Input, results written to OutputDir.
type Files struct {
	Input, OutputDir string
	Workers          int  // intents handled at once
	Console          bool // an approval console serves the run's approvals: wait for them
}

// RunFiles handles every intent of the input once; with a console it then waits until every
// approval is decided or expired (or ctx ends), and writes the results with the decisions.
// Each malformed intent is reported through errorf; progress goes to out.
func RunFiles(ctx context.Context, eff *effector.Effector, f Files, out io.Writer, errorf func(string, ...any)) (err error) {
	recs, err := effector.ReadIntents(f.Input)
	if err != nil {
		return err
	}
	var mu sync.Mutex
	var decisions []*pb.AgentEnvelope
	eff.Approvals().SetSink(func(_ context.Context, env *pb.AgentEnvelope) error {
		mu.Lock()
		decisions = append(decisions, env)
		mu.Unlock()
		return nil
	})
	results, malformed, err := eff.HandleAll(ctx, recs, f.Workers)
	if err != nil {
		return err
	}
	held := 0
	for _, m := range malformed {
		if errors.Is(m.Err, effector.ErrToolUnregistered) {
			held++
		}
		errorf("%v", m.Err)
	}
	if f.Console {
		waitDecisions(ctx, eff, out)
	}
	mu.Lock()
	defer mu.Unlock()
	if n := eff.Approvals().Open(); n > 0 && f.Console {
		defer func() {
			if err == nil {
				err = fmt.Errorf("stopped with %d approval decision(s) pending: their intents have no result yet", n)
			}
		}()
	}
	if err := effector.WriteResults(f.OutputDir, append(results, decisions...), malformed); err != nil {
		return err
	}
	fmt.Fprintf(out, "%d intents, %d results and %d decisions in %s/%s.{binpb,jsonl}\n", len(recs), len(results), len(decisions), f.OutputDir, effector.ResultsName)
	if held > 0 {
		return fmt.Errorf("%d intents held back: no registered agent provides their tools (agents with tools in this binary: %s; --agents chooses among them); nothing was recorded for them, and they run once their tools are registered",
			held, strings.Join(tool.AgentsWithTools(), ", "))
	}
	if n := eff.Approvals().Open(); n > 0 && !f.Console {
		return &UndecidedError{N: n, Input: f.Input}
	}
	return nil
}

// waitDecisions waits until no approval is open (or ctx ends), saying how many are open
// when the count changes.
func waitDecisions(ctx context.Context, eff *effector.Effector, out io.Writer) {
	shown := -1
	for eff.Approvals().Open() > 0 && ctx.Err() == nil {
		if n := eff.Approvals().Open(); n != shown {
			fmt.Fprintf(out, "waiting for %d approval decision(s) in the console\n", n)
			shown = n
		}
		select {
		case <-eff.Approvals().Changed():
		case <-ctx.Done():
		case <-time.After(time.Second): // deadlines pass without an event
		}
	}
}

// Service is a service run: intents from a subscription, results to a topic.
type Service struct {
	Subscription, ResultsTopic string
	Workers                    int
}

// Serve runs eff between Pub/Sub topics until ctx ends (which is no error).
func Serve(ctx context.Context, eff *effector.Effector, s Service, out io.Writer) error {
	sub, err := wire.ParseSubscription(s.Subscription)
	if err != nil {
		return err
	}
	client, err := pubsub.NewClient(ctx, sub.Project)
	if err != nil {
		return err
	}
	defer client.Close()
	fmt.Fprintf(out, "effector serving %s → %s\n", s.Subscription, s.ResultsTopic)
	err = eff.Serve(ctx, client, effector.ServiceOptions{Subscription: s.Subscription, ResultsTopic: s.ResultsTopic, Workers: s.Workers})
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// PrintCounters prints an effector's counters, one per line, by name.
func PrintCounters(w io.Writer, m map[string]int64) {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-28s %d\n", n, m[n])
	}
}
