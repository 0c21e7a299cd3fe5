package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/ledger"
	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/model/hosted"
	"github.com/beamagents/beamagents/records"
	"github.com/beamagents/beamagents/rehearse"
	"github.com/beamagents/beamagents/replay"
	"github.com/beamagents/beamagents/transforms"
)

func init() {
	register(&command{name: "rehearse", summary: "run a candidate agent over recorded traffic, effects quarantined, and report where it diverges", run: runRehearse})
}

// Exit code of a rehearsal that cannot read a restored state (rehearse.ErrState); one over
// its thresholds exits exitDiverged, as a diverging replay.
const exitStateUnreadable = 4

// rehearseFlags are rehearse's flags.
type rehearseFlags struct {
	agent, config, input, baseline, restore, atEnd, report string
	prices                                                 string
	table                                                  ledger.Table // read from prices
	liveCalls                                              int
	liveTokens                                             int64
	maxKeys                                                int
	maxPercent                                             float64
	live                                                   hosted.Options
}

func runRehearse(e *env, args []string) int {
	fs := newFlags(e, "rehearse", "rehearse --agent CANDIDATE --input GLOB --baseline DIR [--restore GLOB] [--live_calls N] [--live_tokens N] "+
		"[--model openai|anthropic --model_name M --model_base_url URL --model_api_key REF] [--prices FILE] [--report FILE] [--max_divergent_keys N] [--max_divergent_percent P]")
	var f rehearseFlags
	fs.StringVar(&f.agent, "agent", "", "the candidate: a registered agent")
	fs.StringVar(&f.config, "agent_config", "", "file whose bytes configure the candidate's factory")
	fs.StringVar(&f.input, "input", "", "the period's envelope files, as run read them: a glob of *.jsonl or length-delimited binary files")
	fs.StringVar(&f.baseline, "baseline", "", "the baseline run's output directory: its typed record files, whose snapshots' replay caches answer unchanged requests")
	fs.StringVar(&f.restore, "restore", "", "optional StateSnapshot files: the state at the period's start, decoded and migrated by the candidate")
	fs.StringVar(&f.atEnd, "at_end", string(transforms.AtEndPark), "what the baseline run's --at_end was: park or fail")
	fs.IntVar(&f.liveCalls, "live_calls", 0, "model requests the baseline did not make that may go to the live model, --model (0: none; the key stops unanswered)")
	fs.Int64Var(&f.liveTokens, "live_tokens", 0, "stop making live calls once this many tokens were spent (0: no token bound; --live_calls still bounds the calls)")
	fs.StringVar(&f.live.Provider, "model", hosted.Scripted, "the live model of --live_calls: openai or anthropic (scripted: none)")
	fs.StringVar(&f.live.Name, "model_name", "", "the live model's id; requests name it (default: the baseline's model id)")
	fs.StringVar(&f.live.BaseURL, "model_base_url", "", "the live model's API base URL")
	fs.StringVar(&f.live.APIKey, "model_api_key", "", "the live model's API key: a reference, env:VAR or file:PATH")
	fs.StringVar(&f.prices, "prices", "", "the baseline run's --prices: the price table a tenant cost budget reserves its grants at")
	fs.StringVar(&f.report, "report", "", "file for the JSON Lines report (default: stdout)")
	fs.IntVar(&f.maxKeys, "max_divergent_keys", -1, "exit 3 when more keys diverge (default: 0 unless --max_divergent_percent is given)")
	fs.Float64Var(&f.maxPercent, "max_divergent_percent", -1, "exit 3 when a larger percentage of the keys diverges")
	if code, ok := parse(fs, args); !ok {
		return code
	}
	if f.agent == "" || f.input == "" || f.baseline == "" {
		fs.Usage()
		return 2
	}
	ctx := context.Background()
	if code, ok := checkFlags(e, noArgs(fs),
		registered("agent", f.agent, "agent", agent.Registered()),
		smallFile("agent_config", f.config, maxConfigBytes),
		oneOf("at_end", f.atEnd, string(transforms.AtEndPark), string(transforms.AtEndFail)),
		oneOf("model", f.live.Provider, hosted.Providers()...),
		when(f.live.Hosted(), baseURL("model_base_url", f.live.Provider, f.live.BaseURL)),
		keyRef("model_api_key", f.live.APIKey, false),
		atLeast("live_calls", f.liveCalls, 0),
		when(f.liveCalls > 0, oneOf("model", f.live.Provider, hosted.OpenAI, hosted.Anthropic)), // a live call needs a hosted model
		atLeast("live_tokens", f.liveTokens, 0),
		atLeast("max_divergent_keys", f.maxKeys, -1),
		inputGlob(ctx, "input", f.input, envelopeType),
		inputGlob(ctx, "baseline", filepath.Join(f.baseline, records.SnapshotsName+".binpb"), snapshotType),
		when(f.restore != "", inputGlob(ctx, "restore", f.restore, snapshotType)),
		when(f.prices != "", readPrices("prices", f.prices, &f.table)),
	); !ok {
		return code
	}
	r, err := rehearseRun(ctx, f)
	if errors.Is(err, rehearse.ErrState) {
		e.errorf("%v", err)
		return exitStateUnreadable
	}
	if err != nil {
		e.errorf("%v", err)
		return 1
	}
	var out bytes.Buffer
	if err := r.WriteJSONL(&out); err != nil {
		e.errorf("%v", err)
		return 1
	}
	if f.report == "" {
		_, err = e.stdout.Write(out.Bytes())
	} else {
		err = os.WriteFile(f.report, out.Bytes(), 0o644)
	}
	if err != nil {
		e.errorf("--report: %v", err)
		return 1
	}
	r.WriteText(e.stderr)
	if err := r.Summary.Over(f.thresholds()); err != nil {
		e.errorf("%v", err)
		return exitDiverged
	}
	return 0
}

// thresholds are the flags' thresholds: without either, no key may diverge.
func (f rehearseFlags) thresholds() rehearse.Thresholds {
	t := rehearse.Thresholds{MaxKeys: f.maxKeys, MaxPercent: f.maxPercent}
	if t.MaxKeys < 0 && t.MaxPercent < 0 {
		t.MaxKeys = 0
	}
	return t
}

// rehearseRun reads the period (as replay reads it) and rehearses the candidate over it.
func rehearseRun(ctx context.Context, f rehearseFlags) (*rehearse.Report, error) {
	var config []byte
	if f.config != "" {
		var err error
		if config, err = records.ReadCapped(f.config, maxConfigBytes); err != nil {
			return nil, err
		}
	}
	a, err := agent.Build(f.agent, config)
	if err != nil {
		return nil, err
	}
	baseline, _, err := replay.ReadRecorded(f.baseline)
	if err == nil && baseline == nil {
		err = fmt.Errorf("%s does not hold the five typed record files a run writes", f.baseline)
	}
	if err != nil {
		return nil, fmt.Errorf("--baseline: %w", err)
	}
	inputs, dead, err := replay.ReadInputs(f.input, f.restore)
	if err != nil {
		return nil, err
	}
	refused, err := refusedInputs(dead)
	if err != nil {
		return nil, err
	}
	live, err := liveModel(f)
	if err != nil {
		return nil, err
	}
	return rehearse.Run(ctx, a, inputs, baseline, rehearse.Options{
		Live: live, LiveCalls: f.liveCalls, LiveTokens: f.liveTokens, ModelID: f.live.Name,
		Ending:  replay.Ending{Park: f.atEnd == string(transforms.AtEndPark), EndMs: replay.InputEnd(inputs), Prices: f.table},
		Refused: refused,
	})
}

// refusedInputs are the dead letters of envelope records refused before the agent; a restore
// record that does not decode fails the rehearsal as a state the candidate cannot read.
func refusedInputs(dead [][]byte) ([][]byte, error) {
	for _, b := range dead {
		dl := &pb.ActivationErrorRecord{}
		if err := proto.Unmarshal(b, dl); err != nil {
			return nil, err
		}
		if dl.GetReason() == string(records.ReasonRestoreRefused) {
			return nil, &rehearse.Error{Code: rehearse.CodeState, Detail: fmt.Sprintf("--restore: key %q", dl.GetEntityKey()), Err: errors.New(dl.GetDetail())}
		}
	}
	return dead, nil
}

// liveModel is the hosted model asked the requests the baseline did not make; none when no
// live call is allowed.
func liveModel(f rehearseFlags) (model.Model, error) {
	if f.liveCalls == 0 {
		return nil, nil
	}
	m, err := hosted.New(f.live)
	if err != nil {
		return nil, fmt.Errorf("--model: %w", err)
	}
	return m, nil
}
